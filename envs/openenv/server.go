package openenv

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/graftrl/graftrl/envs"
)

// Defaults of ServerOptions.
const (
	// DefaultAddr is the listen address: loopback, OpenEnv's usual port.
	DefaultAddr = "127.0.0.1:8000"
	// DefaultMaxSessions caps concurrent WebSocket sessions: enough for the parallel episodes of a
	// collector on one host; each session holds one small env instance.
	DefaultMaxSessions = 64
	// DefaultIdleTimeout closes a session that sent nothing for this long.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultCallTimeout bounds one Reset, Step or state call of an environment.
	DefaultCallTimeout = 30 * time.Second
	// DefaultMaxMessageBytes bounds a WebSocket message and an HTTP request body.
	DefaultMaxMessageBytes = 1 << 20
	// DefaultBodyTimeout bounds the read of one HTTP request, headers and body, and of one
	// WebSocket message: a client whose body does not arrive in time gets 408 and its connection
	// is closed; a session whose message does not is closed with status 1008.
	DefaultBodyTimeout = 10 * time.Second
	// DefaultExtraConnections is how many connections the default connection cap allows beside
	// the sessions' own: MaxConnections defaults to MaxSessions + DefaultExtraConnections.
	DefaultExtraConnections = 64
)

// ServerOptions configure a Server. Zero values select the defaults.
type ServerOptions struct {
	// Env is the registry name of the environment to serve (env.name of a config).
	Env string
	// EnvOptions are its options, as in the env section of a config (without name).
	EnvOptions envs.Options
	// NewEnv, when set, builds the instances instead of the registry (embedding, tests); Env then
	// only names the environment in /metadata.
	NewEnv func() (envs.Env, error)
	// Addr is the listen address of Listen (default DefaultAddr). A host that is not a loopback
	// address (or empty, meaning every interface) needs AllowRemote.
	Addr string
	// AllowRemote permits an Addr reachable from other machines, and requests naming any host.
	// It needs Token, or Insecure. Without it, the server answers only requests whose Host
	// header names a loopback host (localhost, 127.0.0.1, [::1]): a web page whose domain was
	// rebound to 127.0.0.1 (DNS rebinding) sends its own domain there and is refused with 403.
	AllowRemote bool
	// Insecure accepts AllowRemote without Token: anyone who reaches the address may open
	// sessions and run the environment.
	Insecure bool
	// MaxSessions caps concurrent WebSocket sessions (default DefaultMaxSessions); a connection
	// beyond it gets CAPACITY_REACHED and is closed.
	MaxSessions int
	// Token, when set, must be sent as "Authorization: Bearer <Token>" on every route but /health;
	// other requests get 401.
	Token string
	// IdleTimeout closes a session that sent no complete message for this long after its last
	// reply (default DefaultIdleTimeout; negative: never); the bytes of an unfinished message do
	// not count as activity.
	IdleTimeout time.Duration
	// CallTimeout bounds one environment call (default DefaultCallTimeout; negative: unbounded).
	// A session whose call timed out gets SESSION_ERROR and is closed, since its env may still be
	// running; an HTTP call gets 500.
	CallTimeout time.Duration
	// MaxMessageBytes bounds a WebSocket message (a larger one closes the session with status 1009)
	// and an HTTP request body (413). Default DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// BodyTimeout bounds the read of one HTTP request, its body included, and the receipt of one
	// WebSocket message, every frame of a fragmented one included, from its first byte (default
	// DefaultBodyTimeout; negative: unbounded). The deadline is set once per request or message,
	// so a client that trickles bytes gains no time over a silent one. A body that has not
	// arrived by then gets 408 and the connection is closed; a WebSocket message closes its
	// session with status 1008. Between messages a session is bounded by IdleTimeout, which a
	// partial message does not reset.
	BodyTimeout time.Duration
	// MaxConnections caps the open TCP connections of Serve, WebSocket sessions included
	// (default MaxSessions + DefaultExtraConnections; at least MaxSessions). A connection beyond
	// it is answered 503 and closed at once.
	MaxConnections int
	// Logger receives session events at debug level and environment panics at error level
	// (default: discarded).
	Logger *slog.Logger
}

// Metadata is the reply of GET /metadata: OpenEnv's fields (name, description, readme_content,
// version, author, documentation_url) and those with which graftrl's client builds an envs.Env
// without further configuration.
type Metadata struct {
	// Name is the environment's name (its registry name for graftrl's server).
	Name string `json:"name"`
	// Description is one line about the task.
	Description string `json:"description"`
	// ReadmeContent is a Markdown description (graftrl: the env's options).
	ReadmeContent *string `json:"readme_content"`
	// Version is the server's version (graftrl: its module version), if known.
	Version *string `json:"version"`
	// Author is the environment's author, if known.
	Author *string `json:"author"`
	// DocumentationURL links to documentation, if any.
	DocumentationURL *string `json:"documentation_url"`

	// Server is "graftrl" for graftrl's server.
	Server string `json:"server,omitempty"`
	// Vocabulary is the env's word list (envs.Env.Vocabulary).
	Vocabulary []string `json:"vocabulary,omitempty"`
	// MaxTurns is the env's step cap.
	MaxTurns int `json:"max_turns,omitempty"`
	// ActionWords are the words actions are made of, when the env lists them (envs.ActionWorder).
	ActionWords []string `json:"action_words,omitempty"`
	// ActionField is the key of the action object that holds the action text.
	ActionField string `json:"action_field,omitempty"`
	// EpisodeSeeder is set when the env draws randomness per episode (envs.EpisodeSeeder): reset
	// then accepts data.episode_seed.
	EpisodeSeeder bool `json:"episode_seeder,omitempty"`
	// MaxSessions is the server's cap on concurrent WebSocket sessions (OpenEnv servers report
	// it only in CAPACITY_REACHED errors); graftrl's client holds no more.
	MaxSessions int `json:"max_sessions,omitempty"`
}

// ErrServerClosed is returned by Serve after Close or Shutdown.
var ErrServerClosed = errors.New("openenv: server closed")

// Server serves one graftrl environment over OpenEnv's protocol (see the package doc and
// README.md). It is safe for concurrent use.
type Server struct {
	opts        ServerOptions
	newEnv      func() (envs.Env, error)
	log         *slog.Logger
	maxSessions int
	idle        time.Duration
	callTimeout time.Duration
	maxBytes    int64
	bodyTimeout time.Duration
	maxConns    int
	meta        []byte
	schema      []byte
	maxTurns    int
	handler     http.Handler

	// ctx is cancelled by Close, which ends every session's read.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	sessions map[*websocket.Conn]struct{}
	servers  map[*http.Server]struct{}
	closed   bool
}

// NewServer checks the options, builds one instance of the environment (so that bad options fail
// here, naming the key) and prepares the routes. Serve or ListenAndServe then serve them.
func NewServer(opts ServerOptions) (*Server, error) {
	s := &Server{opts: opts, log: opts.Logger, maxSessions: opts.MaxSessions, idle: opts.IdleTimeout,
		callTimeout: opts.CallTimeout, maxBytes: opts.MaxMessageBytes, bodyTimeout: opts.BodyTimeout, maxConns: opts.MaxConnections}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.opts.Addr == "" {
		s.opts.Addr = DefaultAddr
	}
	switch {
	case s.maxSessions == 0:
		s.maxSessions = DefaultMaxSessions
	case s.maxSessions < 0:
		return nil, fmt.Errorf("openenv: max sessions %d, want >= 1", s.maxSessions)
	}
	switch {
	case s.maxBytes == 0:
		s.maxBytes = DefaultMaxMessageBytes
	case s.maxBytes < 256:
		return nil, fmt.Errorf("openenv: max message bytes %d, want >= 256", s.maxBytes)
	}
	if s.idle == 0 {
		s.idle = DefaultIdleTimeout
	}
	if s.callTimeout == 0 {
		s.callTimeout = DefaultCallTimeout
	}
	if s.bodyTimeout == 0 {
		s.bodyTimeout = DefaultBodyTimeout
	}
	switch {
	case s.maxConns == 0:
		s.maxConns = s.maxSessions + DefaultExtraConnections
	case s.maxConns < s.maxSessions:
		return nil, fmt.Errorf("openenv: max connections %d is below max sessions %d (each session holds a connection)", s.maxConns, s.maxSessions)
	}
	if !opts.AllowRemote && !isLoopback(s.opts.Addr) {
		return nil, fmt.Errorf("openenv: listen address %q is not a loopback address; allow remote access explicitly (ServerOptions.AllowRemote, serve-env --allow-remote) and set a token", s.opts.Addr)
	}
	if opts.AllowRemote && opts.Token == "" && !opts.Insecure {
		return nil, errors.New("openenv: remote access (ServerOptions.AllowRemote) without a bearer token would let anyone who reaches the address run the environment; set Token, or Insecure to accept that")
	}
	var spec envs.Spec
	s.newEnv = opts.NewEnv
	if s.newEnv == nil {
		var err error
		if spec, err = envs.Lookup(opts.Env); err != nil {
			return nil, err
		}
		s.newEnv = func() (envs.Env, error) { return spec.New(opts.EnvOptions) }
	}
	probe, err := s.newEnv()
	if err != nil {
		return nil, err
	}
	if probe == nil {
		return nil, fmt.Errorf("openenv: env %s: the constructor returned no environment", opts.Env)
	}
	defer envs.Close(probe)
	s.maxTurns = probe.MaxTurns()
	meta := Metadata{Name: opts.Env, Description: spec.Description, Server: "graftrl", Vocabulary: probe.Vocabulary(),
		MaxTurns: probe.MaxTurns(), ActionField: "message", MaxSessions: s.maxSessions}
	if aw, ok := probe.(envs.ActionWorder); ok {
		meta.ActionWords = aw.ActionWords()
	}
	_, meta.EpisodeSeeder = probe.(envs.EpisodeSeeder)
	readme := readmeOf(opts.Env, spec)
	author := "graftrl"
	meta.ReadmeContent, meta.Author = &readme, &author
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		meta.Version = &bi.Main.Version
	}
	if s.meta, err = json.Marshal(meta); err != nil {
		return nil, fmt.Errorf("openenv: metadata: %w", err)
	}
	s.schema, _ = json.Marshal(map[string]json.RawMessage{
		"action": json.RawMessage(actionSchema), "observation": json.RawMessage(observationSchema), "state": json.RawMessage(stateSchema)})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.sessions = map[*websocket.Conn]struct{}{}
	s.servers = map[*http.Server]struct{}{}
	s.handler = s.routes()
	return s, nil
}

// loopbackHost reports whether a Host header names the loopback interface: localhost or a
// loopback IP address, with or without a port. A name that DNS resolves to 127.0.0.1 does not
// count, since that is what DNS rebinding makes of an attacker's domain.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1] // [::1] without a port
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isLoopback reports whether a listen address binds only the loopback interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readmeOf is the readme_content of /metadata: the env's options and how to connect.
func readmeOf(name string, spec envs.Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (graftrl)\n\n%s\n\nServed by `graftrl serve-env` over OpenEnv: actions are `{\"message\": \"<action text>\"}`; "+
		"observations carry `text`, `state_key`, `step_reward`, `outcome`, `truncated` and `info` besides the envelope's reward and done.\n", name, spec.Description)
	if len(spec.Options) > 0 {
		b.WriteString("\n| option | default | meaning |\n|---|---|---|\n")
		for _, o := range spec.Options {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", o.Key, o.Default, o.Help)
		}
	}
	return b.String()
}

// Handler returns the routes of the server, for embedding in another HTTP server. Unless
// AllowRemote is set, they answer only requests whose Host header names a loopback host.
func (s *Server) Handler() http.Handler { return s.handler }

// Addr returns the configured listen address (ServerOptions.Addr or DefaultAddr).
func (s *Server) Addr() string { return s.opts.Addr }

// Listen opens the configured listen address.
func (s *Server) Listen() (net.Listener, error) { return net.Listen("tcp", s.opts.Addr) }

// ListenAndServe listens on the configured address and serves until ctx is done (then it shuts
// down gracefully) or Close is called.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve serves the routes on ln until ctx is done (then it shuts down gracefully, closing sessions
// with status 1001) or Close is called. It returns nil after a shutdown through ctx and
// ErrServerClosed when the server was already closed. It holds at most MaxConnections open
// connections and bounds the read of each request by BodyTimeout.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ln = &cappedListener{Listener: ln, max: int64(s.maxConns), log: s.log}
	// net/http bounds the headers by ReadHeaderTimeout alone and only then sets ReadTimeout's
	// deadline (from the same start) for the body, so headers trickled a byte at a time would
	// get the whole header timeout even when the body timeout is shorter.
	headerTimeout := 10 * time.Second
	if s.bodyTimeout > 0 {
		headerTimeout = min(headerTimeout, s.bodyTimeout)
	}
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       max(s.bodyTimeout, 0),
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.servers[hs] = struct{}{}
	s.mu.Unlock()
	shutDown := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(shutDown)
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(sctx)
	})
	err := hs.Serve(ln)
	if stop() {
		close(shutDown) // ctx was not done: nothing to wait for
	}
	if errors.Is(err, http.ErrServerClosed) {
		if ctx.Err() != nil {
			<-shutDown // the sessions' close handshakes
			return nil
		}
		return ErrServerClosed
	}
	return err
}

// Close stops the server at once: listeners and every session's socket are closed without a
// close handshake, as if the process died.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	servers, conns := s.snapshot()
	s.mu.Unlock()
	s.cancel()
	for _, hs := range servers {
		hs.Close()
	}
	for _, c := range conns {
		c.CloseNow()
	}
	return nil
}

// Shutdown stops accepting connections and closes every session with status 1001 (going away),
// waiting for the handshakes until ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	servers, conns := s.snapshot()
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, hs := range servers {
		wg.Go(func() { hs.Shutdown(ctx) })
	}
	for _, c := range conns {
		wg.Go(func() { c.Close(websocket.StatusGoingAway, "server shutting down") })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	s.cancel()
	return ctx.Err()
}

// snapshot lists the HTTP servers and session sockets; s.mu is held.
func (s *Server) snapshot() ([]*http.Server, []*websocket.Conn) {
	var servers []*http.Server
	for hs := range s.servers {
		servers = append(servers, hs)
	}
	var conns []*websocket.Conn
	for c := range s.sessions {
		conns = append(conns, c)
	}
	return servers, conns
}

// ActiveSessions returns the number of open WebSocket sessions.
func (s *Server) ActiveSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// reserve takes a session slot for conn; it fails with the counts when the server is full.
func (s *Server) reserve(conn *websocket.Conn) (active int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.sessions) >= s.maxSessions {
		return len(s.sessions), false
	}
	s.sessions[conn] = struct{}{}
	return len(s.sessions), true
}

func (s *Server) release(conn *websocket.Conn) {
	s.mu.Lock()
	delete(s.sessions, conn)
	s.mu.Unlock()
}

// routes builds the HTTP routes: OpenEnv's, behind the bearer token when one is set.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"healthy"}`))
	})
	mux.HandleFunc("GET /schema", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.schema) })
	mux.HandleFunc("GET /metadata", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.meta) })
	mux.HandleFunc("GET /state", s.httpState)
	mux.HandleFunc("POST /reset", s.httpReset)
	mux.HandleFunc("POST /step", s.httpStep)
	mux.HandleFunc("GET /ws", s.serveWS)
	var h http.Handler = mux
	if s.opts.Token != "" {
		want := []byte(s.opts.Token)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			if r.URL.Path != "/health" && (!strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(token), want) != 1) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="graftrl"`)
				writeDetail(w, http.StatusUnauthorized, "missing or wrong bearer token (send Authorization: Bearer <token>)")
				return
			}
			mux.ServeHTTP(w, r)
		})
	}
	if s.opts.AllowRemote {
		return h
	}
	// Bound to loopback, the server is reachable only from this machine, but a browser on it
	// visiting a page whose domain was rebound to 127.0.0.1 would send that page's requests here
	// (WebSocket included, as the page's Origin then matches its Host); they carry the page's
	// domain in Host.
	inner := h
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			writeDetail(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback host; a server bound to loopback answers only "+
				"Host localhost, 127.0.0.1 or [::1] (with or without the port), against DNS rebinding; "+
				"serve with --allow-remote to accept other host names", shorten(r.Host)))
			return
		}
		inner.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// writeDetail writes FastAPI's error body {"detail": ...}: a message, or a list of fieldErrors.
func writeDetail(w http.ResponseWriter, status int, detail any) {
	b, err := json.Marshal(map[string]any{"detail": detail})
	if err != nil {
		b = []byte(`{"detail":"internal error"}`)
	}
	writeJSON(w, status, b)
}

// serveWS runs one WebSocket session: a slot, a fresh env, then one reply per message in order.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	// The guard refuses a frame over the message cap at its header and bounds a stalled frame by
	// the body timeout; the library's read limit stays as a second check.
	gw := &guardedWriter{ResponseWriter: w, limit: s.maxBytes, timeout: s.bodyTimeout}
	conn, err := websocket.Accept(gw, r, nil)
	if err != nil {
		s.log.Debug("openenv: websocket handshake failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	defer conn.CloseNow()
	if gw.guard == nil {
		// Accept hijacks the connection through gw, so this does not happen; without the guard
		// the session would have neither a body timeout nor an idle timeout.
		s.log.Error("openenv: websocket connection not hijacked through its guard", "remote", r.RemoteAddr)
		return
	}
	conn.SetReadLimit(s.maxBytes)
	active, ok := s.reserve(conn)
	if !ok {
		s.log.Debug("openenv: session refused at capacity", "remote", r.RemoteAddr, "active", active)
		s.final(conn, errorMessage(CodeCapacityReached,
			fmt.Sprintf("server at capacity: %d of %d sessions active; retry later", active, s.maxSessions),
			map[string]any{"active_sessions": active, "max_sessions": s.maxSessions}), websocket.StatusTryAgainLater)
		return
	}
	ss := &session{srv: s}
	if err := ss.build(); err != nil {
		s.release(conn)
		s.final(conn, errorMessage(CodeFactory, fmt.Sprintf("cannot create environment %s: %v", s.opts.Env, err),
			map[string]any{"factory_name": s.opts.Env}), websocket.StatusInternalError)
		return
	}
	s.log.Debug("openenv: session opened", "remote", r.RemoteAddr, "active", active)
	code, reason := ss.serve(conn, gw.guard)
	ss.close()
	s.release(conn)
	s.log.Debug("openenv: session closed", "remote", r.RemoteAddr, "steps", ss.stepCount, "status", code, "reason", reason)
	if code != 0 {
		// The handshake waits (at most 5 s, the library's bound) for the peer's close frame,
		// which the idle deadline of the session's last wait must not cut short.
		gw.guard.await(time.Time{})
		conn.Close(code, reason)
	}
}

// final sends a last error reply and closes the socket.
func (s *Server) final(conn *websocket.Conn, reply []byte, code websocket.StatusCode) {
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	if conn.Write(ctx, websocket.MessageText, reply) == nil {
		conn.Close(code, "")
	}
}

// httpReset is the stateless POST /reset: a fresh env, reset, closed.
func (s *Server) httpReset(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	var req map[string]json.RawMessage
	if len(body) > 0 {
		if errs := decodeObject(body, &req, "body"); errs != nil {
			writeDetail(w, http.StatusUnprocessableEntity, errs)
			return
		}
	}
	p, errs := parseResetData(req, "body")
	if p.hasSeed && p.seed < 0 {
		errs = append(errs, fieldError{Type: "greater_than_equal", Loc: []any{"body", "seed"},
			Msg: "Input should be greater than or equal to 0", Input: req["seed"]})
	}
	if errs != nil {
		writeDetail(w, http.StatusUnprocessableEntity, errs)
		return
	}
	ss, ok := s.detached(w)
	if !ok {
		return
	}
	defer ss.close()
	reply, err, _ := ss.reset(p)
	if err != nil {
		writeDetail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

// httpStep is the stateless POST /step: a fresh env of task 0, one step, closed. Episodes need the
// WebSocket.
func (s *Server) httpStep(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	var req map[string]json.RawMessage
	if errs := decodeObject(body, &req, "body"); errs != nil {
		writeDetail(w, http.StatusUnprocessableEntity, errs)
		return
	}
	var errs []fieldError
	raw, has := req["action"]
	if !has {
		errs = append(errs, fieldError{Type: "missing", Loc: []any{"body", "action"}, Msg: "Field required"})
	}
	timeout := s.callTimeout
	if t, has := req["timeout_s"]; has && string(t) != "null" {
		var secs float64
		if json.Unmarshal(t, &secs) != nil || !(secs > 0) {
			errs = append(errs, fieldError{Type: "greater_than", Loc: []any{"body", "timeout_s"}, Msg: "Input should be a number greater than 0", Input: inputOf(t)})
		} else if d := time.Duration(secs * float64(time.Second)); d < timeout || timeout < 0 {
			timeout = max(d, time.Millisecond)
		}
	}
	if id, has := req["request_id"]; has && string(id) != "null" {
		var rid string
		if json.Unmarshal(id, &rid) != nil || len(rid) > 255 {
			errs = append(errs, fieldError{Type: "string_type", Loc: []any{"body", "request_id"}, Msg: "Input should be a valid string of at most 255 characters", Input: inputOf(id)})
		}
	}
	if errs != nil {
		writeDetail(w, http.StatusUnprocessableEntity, errs)
		return
	}
	text, errs := parseAction(raw, "body", "action")
	if errs != nil {
		writeDetail(w, http.StatusUnprocessableEntity, errs)
		return
	}
	ss, ok := s.detached(w)
	if !ok {
		return
	}
	ss.timeout = timeout
	defer ss.close()
	if _, err, _ := ss.reset(resetParams{hasSeed: true}); err != nil {
		writeDetail(w, http.StatusInternalServerError, err.Error())
		return
	}
	reply, err, _ := ss.step(text)
	if err != nil {
		writeDetail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

// httpState is the stateless GET /state: the state of a fresh env.
func (s *Server) httpState(w http.ResponseWriter, _ *http.Request) {
	ss, ok := s.detached(w)
	if !ok {
		return
	}
	defer ss.close()
	reply, err, _ := ss.state()
	if err != nil {
		writeDetail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

// detached builds a session without a socket for one stateless HTTP call.
func (s *Server) detached(w http.ResponseWriter) (*session, bool) {
	ss := &session{srv: s, http: true}
	if err := ss.build(); err != nil {
		writeDetail(w, http.StatusInternalServerError, fmt.Sprintf("cannot create environment %s: %v", s.opts.Env, err))
		return nil, false
	}
	return ss, true
}

// readBody reads a request body of at most MaxMessageBytes; a larger one gets 413.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		var netErr net.Error
		switch {
		case errors.As(err, &tooBig):
			writeDetail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", s.maxBytes))
		case errors.As(err, &netErr) && netErr.Timeout():
			writeDetail(w, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %s", s.bodyTimeout))
		default:
			writeDetail(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}
