package openenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/graftrl/graftrl/envs"
)

// Name is the registry name of the client environment.
const Name = "openenv"

// Backoff between connection attempts and while the server is at capacity: doubling from
// firstBackoff up to maxBackoff, each sleep drawn in [b/2, b).
const (
	firstBackoff = 50 * time.Millisecond
	maxBackoff   = 2 * time.Second
)

// ClientOptions are the options of the openenv environment: the keys of its env section, e.g.
//
//	env: {name: openenv, url: ws://127.0.0.1:8000, action_field: message}
type ClientOptions struct {
	// URL is the server: ws://host:port or wss://..., or the http(s) base URL of the same server;
	// a trailing /ws is accepted. The client plays episodes on the WebSocket <base>/ws and reads
	// <base>/metadata.
	URL string `yaml:"url"`
	// ActionField is the key of the action object that holds the action text (default: the
	// server's action_field from /metadata, else "message").
	ActionField string `yaml:"action_field"`
	// TextField is the observation field holding the observation text. Default: the first string
	// among text, prompt, observation, message and content; else the content of the last entry of
	// a "messages" list; else the whole observation as canonical JSON. A non-string field is
	// rendered the same way (a message list as its last content, anything else as JSON).
	TextField string `yaml:"text_field"`
	// StateKeyField is the observation field holding the state key. Default: state_key when it is a
	// string, else the hash of the canonical observation JSON (keys sorted, reward, done and
	// metadata left out).
	StateKeyField string `yaml:"state_key_field"`
	// InstructionField is the observation field of the reset reply holding the task instruction
	// (default "instruction"; absent: no instruction).
	InstructionField string `yaml:"instruction_field"`
	// Vocabulary lists the words of the env (default: from the server's /metadata).
	Vocabulary []string `yaml:"vocabulary"`
	// ActionWords lists the words actions are made of (default: from /metadata, when listed).
	ActionWords []string `yaml:"action_words"`
	// MaxTurns is the step cap (default: from /metadata). The client truncates an episode the
	// server has not ended after this many steps.
	MaxTurns int `yaml:"max_turns"`
	// Token is the bearer token sent as "Authorization: Bearer <token>".
	Token string `yaml:"token"`
	// TokenEnv names an environment variable holding the token, so that configs (which runs copy)
	// need not hold it.
	TokenEnv string `yaml:"token_env"`
	// Timeout bounds one call (connect, reset, step, metadata), in seconds.
	Timeout float64 `yaml:"timeout"`
	// ConnectRetries is the number of retries, with backoff, of a connection that fails.
	ConnectRetries int `yaml:"connect_retries"`
	// CapacityWait is how long, in seconds, Reset keeps retrying with backoff while the server
	// answers CAPACITY_REACHED.
	CapacityWait float64 `yaml:"capacity_wait"`
	// MaxMessageBytes bounds a reply.
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// MaxSessions is the most sessions the client's instances hold at once, hence the most
	// episodes the collector runs at once (envs.Parallel). Default: the server's max_sessions
	// from /metadata (graftrl's server lists it), else no limit.
	MaxSessions int `yaml:"max_sessions"`
}

// DefaultClientOptions returns the defaults of the options; URL must still be set.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{Timeout: 30, ConnectRetries: 3, CapacityWait: 60, MaxMessageBytes: 4 << 20}
}

// Validate checks the options; the errors are *envs.OptionError naming the key.
func (o ClientOptions) Validate() error {
	if o.URL == "" {
		return &envs.OptionError{Env: Name, Key: "url", Value: o.URL, Reason: "is missing", Allowed: "ws://host:port, wss://..., http(s)://..."}
	}
	if _, _, err := endpoints(o.URL); err != nil {
		return &envs.OptionError{Env: Name, Key: "url", Value: o.URL, Reason: "is not a server URL (" + err.Error() + ")", Allowed: "ws://host:port, wss://..., http(s)://..."}
	}
	for _, w := range append(slices.Clone(o.Vocabulary), o.ActionWords...) {
		if w == "" || strings.ContainsAny(w, " \t\r\n\v\f") {
			return &envs.OptionError{Env: Name, Key: "vocabulary", Value: w, Reason: "is not a word", Allowed: "non-empty words without whitespace"}
		}
	}
	if err := envs.CheckRange(Name, "max_turns", o.MaxTurns, 0, 100_000); err != nil {
		return err
	}
	if !(o.Timeout > 0 && o.Timeout <= 3600) {
		return &envs.OptionError{Env: Name, Key: "timeout", Value: o.Timeout, Reason: "is out of range", Allowed: "> 0 and <= 3600 (seconds)"}
	}
	if err := envs.CheckRange(Name, "connect_retries", o.ConnectRetries, 0, 100); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "capacity_wait", o.CapacityWait, 0, 3600); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "max_sessions", o.MaxSessions, 0, 1_000_000); err != nil {
		return err
	}
	return envs.CheckRange(Name, "max_message_bytes", o.MaxMessageBytes, 1024, 1<<30)
}

// endpoints derives the WebSocket URL and the HTTP base URL of a server URL.
func endpoints(raw string) (ws, base string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", err
	}
	var wsScheme, httpScheme string
	switch u.Scheme {
	case "ws", "http":
		wsScheme, httpScheme = "ws", "http"
	case "wss", "https":
		wsScheme, httpScheme = "wss", "https"
	default:
		return "", "", fmt.Errorf("scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return "", "", errors.New("no host")
	}
	path := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/ws")
	b := url.URL{Scheme: httpScheme, User: u.User, Host: u.Host, Path: path}
	w := url.URL{Scheme: wsScheme, User: u.User, Host: u.Host, Path: path + "/ws"}
	return w.String(), b.String(), nil
}

// Client is an envs.Env played on an OpenEnv server, one WebSocket session per instance. The
// session opens on the first Reset; a Reset on a socket that died reconnects. A transport failure
// (the session is lost: the error matches envs.ErrSessionLost, and the collector replays the
// episode on a new session) or a reply the client cannot read makes Reset or Step return an
// error. Client also implements envs.Parallel (the server's session cap), envs.EpisodeSeeder
// (forwarded to graftrl servers whose env draws randomness) and io.Closer; NewClient returns it
// with an ActionWords method (envs.ActionWorder) when the action words are known. A Client that
// is dropped without Close releases its session when it is garbage-collected.
type Client struct {
	mu          sync.Mutex
	wsURL       string
	baseURL     string
	header      http.Header
	actionField string
	parse       parseConfig
	vocab       []string
	actionWords []string
	maxTurns    int
	seeder      bool
	timeout     time.Duration
	capWait     time.Duration
	retries     int
	maxBytes    int64
	maxSessions int

	conn     *websocket.Conn
	cleanup  runtime.Cleanup
	seed     int64
	seedSet  bool
	started  bool
	over     bool
	turn     int
	stateKey string
}

var (
	_ envs.Env           = (*Client)(nil)
	_ envs.EpisodeSeeder = (*Client)(nil)
	_ envs.Parallel      = (*Client)(nil)
	_ io.Closer          = (*Client)(nil)
	_ envs.ActionWorder  = wordsClient{}
)

// wordsClient is a Client whose action words are known.
type wordsClient struct{ *Client }

// ActionWords returns the words actions are made of (envs.ActionWorder).
func (w wordsClient) ActionWords() []string { return slices.Clone(w.actionWords) }

// permanentError is a connection failure that retrying cannot cure (401, 404).
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// NewClient checks the options, reads the server's /metadata when the vocabulary, the step cap or
// the action field must come from it (or to learn the graftrl extras), and returns the env. It
// does not connect: the session opens on the first Reset.
func NewClient(opts ClientOptions) (envs.Env, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ws, base, _ := endpoints(opts.URL)
	c := &Client{wsURL: ws, baseURL: base, header: http.Header{}, vocab: slices.Clone(opts.Vocabulary),
		actionWords: slices.Clone(opts.ActionWords), maxTurns: opts.MaxTurns, actionField: opts.ActionField,
		parse:   parseConfig{textField: opts.TextField, stateKeyField: opts.StateKeyField, instructionField: opts.InstructionField},
		timeout: time.Duration(opts.Timeout * float64(time.Second)), capWait: time.Duration(opts.CapacityWait * float64(time.Second)),
		retries: opts.ConnectRetries, maxBytes: int64(opts.MaxMessageBytes), maxSessions: opts.MaxSessions}
	token := opts.Token
	if opts.TokenEnv != "" {
		if token = os.Getenv(opts.TokenEnv); token == "" {
			return nil, &envs.OptionError{Env: Name, Key: "token_env", Value: opts.TokenEnv, Reason: "names an unset or empty environment variable", Allowed: "the name of a variable holding the token"}
		}
	}
	if token != "" {
		c.header.Set("Authorization", "Bearer "+token)
	}
	meta, err := c.metadata()
	var pe permanentError
	needed := len(c.vocab) == 0 || c.maxTurns == 0
	if err != nil && (needed || errors.As(err, &pe)) {
		return nil, fmt.Errorf("env %s: %w", Name, err)
	}
	if meta != nil {
		if len(c.vocab) == 0 {
			c.vocab = meta.Vocabulary
		}
		if c.maxTurns == 0 {
			c.maxTurns = meta.MaxTurns
		}
		if len(c.actionWords) == 0 {
			c.actionWords = meta.ActionWords
		}
		if c.actionField == "" {
			c.actionField = meta.ActionField
		}
		c.seeder = meta.EpisodeSeeder
		if c.maxSessions == 0 {
			c.maxSessions = meta.MaxSessions
		}
	}
	if c.actionField == "" {
		c.actionField = "message"
	}
	if len(c.vocab) == 0 {
		return nil, &envs.OptionError{Env: Name, Key: "vocabulary", Value: nil, Reason: "is missing and " + base + "/metadata lists none",
			Allowed: "the list of words of the env's observations and actions"}
	}
	if c.maxTurns <= 0 {
		return nil, &envs.OptionError{Env: Name, Key: "max_turns", Value: 0, Reason: "is missing and " + base + "/metadata gives none",
			Allowed: "the step cap, 1..100000"}
	}
	if len(c.actionWords) > 0 {
		return wordsClient{c}, nil
	}
	return c, nil
}

// metadata reads GET /metadata; a server without it (404) gives nil and no error.
func (c *Client) metadata() (*Metadata, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+"/metadata", nil)
	if err != nil {
		return nil, err
	}
	req.Header = c.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the server's metadata: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, permanentError{fmt.Errorf("GET %s/metadata: %s (set token or token_env)", c.baseURL, resp.Status)}
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s/metadata: %s", c.baseURL, resp.Status)
	case err != nil:
		return nil, fmt.Errorf("GET %s/metadata: %w", c.baseURL, err)
	}
	var m Metadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("GET %s/metadata: %w", c.baseURL, err)
	}
	return &m, nil
}

// Reset starts the episode of a task seed, sent as reset's data.seed (with the episode seed of
// SeedEpisode when the server is graftrl's and its env takes one). It opens the session if needed
// and reconnects once when the kept socket turns out dead; CAPACITY_REACHED is retried with
// backoff for up to capacity_wait seconds. A server that cannot be reached is an error matching
// envs.ErrSessionLost.
func (c *Client) Reset(task int64) (string, envs.Observation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started, c.over, c.turn, c.stateKey = false, false, 0, ""
	req := `{"type":"reset","data":{"seed":` + strconv.FormatInt(task, 10)
	if c.seedSet && c.seeder {
		req += `,"episode_seed":` + strconv.FormatInt(c.seed, 10)
	}
	c.seedSet = false
	r, err := c.roundTrip([]byte(req+"}}"), true)
	if err != nil {
		return "", envs.Observation{}, fmt.Errorf("env %s %s: Reset(%d): %w", Name, c.wsURL, task, err)
	}
	c.started, c.over, c.stateKey = true, r.obs.Over(), r.key
	return r.instruction, r.obs, nil
}

// Step sends the action text as {"<action_field>": text}. JSON carries text only as UTF-8: invalid
// bytes arrive as U+FFFD.
func (c *Client) Step(action string) (envs.Observation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.started:
		return envs.Observation{}, fmt.Errorf("env %s: Step before Reset", Name)
	case c.over:
		return envs.Observation{}, fmt.Errorf("env %s: Step after the episode ended", Name)
	case c.conn == nil:
		c.started = false
		return envs.Observation{}, fmt.Errorf("env %s %s: %w; Reset starts a new one", Name, c.wsURL, envs.ErrSessionLost)
	}
	field, _ := json.Marshal(c.actionField)
	text, _ := json.Marshal(action)
	req := make([]byte, 0, 32+len(field)+len(text))
	req = append(req, `{"type":"step","data":{`...)
	req = append(append(append(req, field...), ':'), text...)
	req = append(req, "}}"...)
	r, err := c.roundTrip(req, false)
	if err != nil {
		if c.conn == nil {
			c.started = false
		}
		return envs.Observation{}, fmt.Errorf("env %s %s: Step(%q): %w", Name, c.wsURL, shorten(action), err)
	}
	c.turn++
	if !r.obs.Over() && c.turn >= c.maxTurns {
		r.obs.Truncated = true
	}
	c.over, c.stateKey = r.obs.Over(), r.key
	return r.obs, nil
}

// roundTrip sends a request and reads its reply. For a reset it (re)connects: one more try when a
// kept socket is dead, connect_retries tries with backoff for failed connections, and waiting with
// backoff for up to capacity_wait while the server is at capacity. A failed connection or
// exchange (the socket is then dropped) is an error matching envs.ErrSessionLost.
func (c *Client) roundTrip(req []byte, reset bool) (reply, error) {
	deadline := time.Now().Add(c.capWait)
	backoff := firstBackoff
	failures := 0
	stale := c.conn != nil
	for {
		if c.conn == nil {
			if err := c.dial(); err != nil {
				var pe permanentError
				if errors.As(err, &pe) {
					return reply{}, err
				}
				if failures >= c.retries {
					return reply{}, fmt.Errorf("%w: %w", envs.ErrSessionLost, err)
				}
				failures++
				backoff = pause(backoff)
				continue
			}
		}
		raw, err := c.exchange(req)
		if err != nil {
			c.drop()
			switch {
			case !reset:
				return reply{}, fmt.Errorf("%w: %w", envs.ErrSessionLost, err)
			case stale:
				stale = false // the server restarted or expired the session: a fresh socket
				continue
			case failures < c.retries:
				failures++
				backoff = pause(backoff)
				continue
			}
			return reply{}, fmt.Errorf("%w: %w", envs.ErrSessionLost, err)
		}
		stale = false
		r, err := parseMessage(raw, c.parse)
		var se *ServerError
		if errors.As(err, &se) && se.ClosesSession() {
			c.drop()
			if reset && se.Code == CodeCapacityReached {
				if left := time.Until(deadline); left > 0 {
					backoff = pauseUpTo(backoff, left)
					continue
				}
				return reply{}, fmt.Errorf("%w; still full after waiting %s (capacity_wait); other clients hold its sessions, or "+
					"the server admits fewer than it tells (set max_sessions to what it admits)", se, c.capWait)
			}
		}
		return r, err
	}
}

// pause sleeps for a draw in [b/2, b] and returns the next backoff.
func pause(b time.Duration) time.Duration { return pauseUpTo(b, b) }

// pauseUpTo is pause with the sleep capped at limit.
func pauseUpTo(b, limit time.Duration) time.Duration {
	time.Sleep(min(b/2+rand.N(b/2+1), limit))
	return min(2*b, maxBackoff)
}

// dial opens the session's WebSocket.
func (c *Client) dial() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, c.wsURL, &websocket.DialOptions{HTTPHeader: c.header})
	if err != nil {
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusUnauthorized, http.StatusForbidden:
				return permanentError{fmt.Errorf("connecting to %s: %s (set token or token_env)", c.wsURL, resp.Status)}
			case http.StatusNotFound:
				return permanentError{fmt.Errorf("connecting to %s: %s (no WebSocket route; OpenEnv servers have /ws since 0.2)", c.wsURL, resp.Status)}
			}
		}
		return fmt.Errorf("connecting to %s: %w", c.wsURL, err)
	}
	conn.SetReadLimit(c.maxBytes)
	c.conn = conn
	// The cleanup may not reach c, so it gets the socket itself.
	c.cleanup = runtime.AddCleanup(c, func(conn *websocket.Conn) { conn.CloseNow() }, conn)
	return nil
}

// exchange writes one request and reads one reply within the call timeout.
func (c *Client) exchange(req []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, req); err != nil {
		return nil, fmt.Errorf("sending to the server: %w", c.transportErr(ctx, err))
	}
	_, raw, err := c.conn.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the reply: %w", c.transportErr(ctx, err))
	}
	return raw, nil
}

func (c *Client) transportErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("no reply within %s (timeout): %w", c.timeout, err)
	}
	return err
}

// drop closes the socket without a handshake.
func (c *Client) drop() {
	if c.conn != nil {
		c.cleanup.Stop()
		c.conn.CloseNow()
		c.conn = nil
	}
}

// Close ends the session (a close message, then the socket closes). The env stays usable: the
// next Reset opens a new session.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.conn.Write(ctx, websocket.MessageText, []byte(`{"type":"close"}`))
		cancel()
		c.drop()
	}
	c.started = false
	return nil
}

// StateKey returns the state key of the last observation ("" before the first Reset).
func (c *Client) StateKey() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stateKey
}

// Vocabulary returns a copy of the env's words.
func (c *Client) Vocabulary() []string { return slices.Clone(c.vocab) }

// MaxTurns returns the step cap.
func (c *Client) MaxTurns() int { return c.maxTurns }

// MaxParallel returns the most sessions the client's instances may hold at once: max_sessions, or
// the server's cap from /metadata; 0 when neither is known (envs.Parallel).
func (c *Client) MaxParallel() int { return c.maxSessions }

// SeedEpisode sets the episode seed sent with the next Reset, when the server is graftrl's and
// its env draws randomness per episode; other servers never see it.
func (c *Client) SeedEpisode(seed int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seed, c.seedSet = seed, true
}

// clientOptions decodes the env section's options over the defaults.
func clientOptions(opts envs.Options) (ClientOptions, error) {
	cfg := DefaultClientOptions()
	err := opts.Decode(Name, &cfg)
	return cfg, err
}

func optionDocs() []envs.OptionDoc {
	d := DefaultClientOptions()
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return []envs.OptionDoc{
		{Key: "url", Default: "(required)", Help: "server: ws://host:port, wss://..., or its http(s) base URL; sessions use <base>/ws"},
		{Key: "action_field", Default: "server's action_field, else message", Help: "key of the action object holding the action text"},
		{Key: "text_field", Default: "text, prompt, observation, message, content, last of messages", Help: "observation field holding the text; non-strings are rendered as JSON"},
		{Key: "state_key_field", Default: "state_key, else a hash of the observation", Help: "observation field holding the state key"},
		{Key: "instruction_field", Default: "instruction", Help: "field of the reset observation holding the task instruction"},
		{Key: "vocabulary", Default: "from /metadata", Help: "words of the env's observations and actions"},
		{Key: "action_words", Default: "from /metadata", Help: "words actions are made of"},
		{Key: "max_turns", Default: "from /metadata", Help: "step cap, 1..100000"},
		{Key: "token", Default: "none", Help: "bearer token"},
		{Key: "token_env", Default: "none", Help: "environment variable holding the bearer token"},
		{Key: "timeout", Default: f(d.Timeout), Help: "seconds per call (connect, reset, step)"},
		{Key: "connect_retries", Default: strconv.Itoa(d.ConnectRetries), Help: "retries of a failed connection, with backoff"},
		{Key: "capacity_wait", Default: f(d.CapacityWait), Help: "seconds Reset waits, retrying with backoff, while the server answers CAPACITY_REACHED"},
		{Key: "max_message_bytes", Default: strconv.Itoa(d.MaxMessageBytes), Help: "largest reply accepted, 1024..2^30"},
		{Key: "max_sessions", Default: "server's max_sessions from /metadata, else no limit", Help: "most sessions (parallel episodes) held at once"},
	}
}

func init() {
	envs.Register(envs.Spec{
		Name:        Name,
		Description: "a remote environment on an OpenEnv server (graftrl serve-env or any OpenEnv server), one WebSocket session per instance",
		Options:     optionDocs(),
		New: func(opts envs.Options) (envs.Env, error) {
			cfg, err := clientOptions(opts)
			if err != nil {
				return nil, err
			}
			return NewClient(cfg)
		},
		// Offline: the options alone; the server's metadata is read by New.
		Check: func(opts envs.Options) error {
			cfg, err := clientOptions(opts)
			if err != nil {
				return err
			}
			return cfg.Validate()
		},
	})
}
