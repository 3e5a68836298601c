package openenv

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/graftrl/graftrl/envs"
)

// writeTimeout bounds the write of one reply.
const writeTimeout = 10 * time.Second

// session is one environment instance behind a WebSocket (or behind one stateless HTTP call).
// Its methods run on one goroutine: calls within a session are serialised.
type session struct {
	srv     *Server
	http    bool          // a stateless HTTP call: replies are bare results, not messages
	timeout time.Duration // the call timeout; 0 means the server's
	env     envs.Env

	started   bool
	seed      int64
	episodeID string
	stepCount int
	// broken is set when a call timed out: the env may still be running it, so the session can
	// make no further call.
	broken bool
}

// serve replies to the messages of conn in order until the client closes the session, it idles
// past the idle timeout, or the server closes. guard is the connection's frameGuard, which
// enforces the idle timeout as a deadline on the whole wait for each message, so that the bytes
// of a message that never completes do not keep the session open. It returns the status of the
// close handshake the session should end with (0 for none), which the caller performs after
// releasing the session's slot, since the handshake may wait for a peer that does not read:
// 1000 after a close message or a SESSION_ERROR, 1009 for a frame that declares a message over
// the size limit, 1008 for a frame or message not received within the body timeout of its first
// byte and for a session idle past the idle timeout, 1007 for a text message that is not valid
// UTF-8.
func (ss *session) serve(conn *websocket.Conn, guard *frameGuard) (code websocket.StatusCode, reason string) {
	for {
		var idleAt time.Time
		if d := ss.srv.idle; d > 0 {
			idleAt = time.Now().Add(d)
		}
		guard.await(idleAt)
		typ, raw, err := conn.Read(ss.srv.ctx)
		switch {
		case errors.Is(err, errMessageTooBig):
			return websocket.StatusMessageTooBig, fmt.Sprintf("message over the %d-byte limit", ss.srv.maxBytes)
		case errors.Is(err, errFrameStalled):
			return websocket.StatusPolicyViolation, fmt.Sprintf("message not received within %s", ss.srv.bodyTimeout)
		case errors.Is(err, errIdle):
			return websocket.StatusPolicyViolation, "idle timeout"
		case err != nil:
			return 0, ""
		}
		if typ == websocket.MessageText && !utf8.Valid(raw) {
			return websocket.StatusInvalidFramePayloadData, "text message is not valid UTF-8"
		}
		reply, closeAfter := ss.handle(raw)
		if reply != nil {
			ctx, cancel := context.WithTimeout(ss.srv.ctx, writeTimeout)
			err := conn.Write(ctx, websocket.MessageText, reply)
			cancel()
			if err != nil {
				return 0, ""
			}
		}
		if closeAfter {
			return websocket.StatusNormalClosure, ""
		}
	}
}

// build creates the session's env; panics and the call timeout apply to the constructor too.
func (ss *session) build() error {
	v, err, _ := ss.call("the env constructor", func() (any, error) {
		e, err := ss.srv.newEnv()
		if err == nil && e == nil {
			err = errors.New("the constructor returned no environment")
		}
		return e, err
	})
	if err != nil {
		return err
	}
	ss.env = v.(envs.Env)
	return nil
}

// close releases the env, unless a timed-out call may still be using it.
func (ss *session) close() {
	if ss.env != nil && !ss.broken {
		envs.Close(ss.env)
	}
}

// handle answers one message: the reply to send (nil for close) and whether the session ends.
// It never panics, whatever the bytes.
func (ss *session) handle(raw []byte) (reply []byte, closeAfter bool) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msg); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return errorMessage(CodeInvalidJSON, "Invalid JSON: "+syntaxMessage(raw, syn), nil), false
		}
	}
	if msg == nil {
		return validationMessage([]fieldError{{Type: "model_type", Loc: []any{}, Msg: "Input should be a JSON object", Input: inputOf(raw)}}), false
	}
	rawType, has := msg["type"]
	var typ string
	if !has || len(rawType) == 0 || rawType[0] != '"' || json.Unmarshal(rawType, &typ) != nil {
		return errorMessage(CodeUnknownType, "Unknown message type: "+shorten(string(rawType)), nil), false
	}
	withData := false
	switch typ {
	case "reset", "step":
		withData = true
	case "state", "close":
	default:
		return errorMessage(CodeUnknownType, "Unknown message type: "+shorten(typ), nil), false
	}
	var errs []fieldError
	for _, k := range sortedKeys(msg) {
		if k != "type" && (k != "data" || !withData) {
			errs = append(errs, fieldError{Type: "extra_forbidden", Loc: []any{k}, Msg: "Extra inputs are not permitted", Input: inputOf(msg[k])})
		}
	}
	if errs != nil {
		return validationMessage(errs), false
	}
	switch typ {
	case "reset":
		var data map[string]json.RawMessage
		if raw, has := msg["data"]; has {
			if errs := decodeObject(raw, &data, "data"); errs != nil {
				return validationMessage(errs), false
			}
		}
		p, errs := parseResetData(data, "data")
		if errs != nil {
			return validationMessage(errs), false
		}
		return ss.reply(ss.reset(p))
	case "step":
		raw, has := msg["data"]
		if !has {
			return validationMessage([]fieldError{{Type: "missing", Loc: []any{"data"}, Msg: "Field required"}}), false
		}
		text, errs := parseAction(raw, "data")
		if errs != nil {
			return validationMessage(errs), false
		}
		return ss.reply(ss.step(text))
	case "state":
		return ss.reply(ss.state())
	}
	return nil, true // close
}

// reply turns the outcome of a call into a reply: a timeout ends the session (SESSION_ERROR),
// another failure keeps it (EXECUTION_ERROR).
func (ss *session) reply(b []byte, err error, fatal bool) ([]byte, bool) {
	switch {
	case fatal:
		return errorMessage(CodeSession, err.Error(), nil), true
	case err != nil:
		return errorMessage(CodeExecution, err.Error(), nil), false
	}
	return b, false
}

// resetParams are the checked fields of reset's data (or of the body of POST /reset).
type resetParams struct {
	seed, episodeSeed       int64
	hasSeed, hasEpisodeSeed bool
	episodeID               string
	hasEpisodeID            bool
}

// parseResetData reads seed (the task seed; absent or null: a random one, as OpenEnv servers draw a
// random episode), episode_id and graftrl's episode_seed (passed to an envs.EpisodeSeeder). Other
// keys are ignored, as OpenEnv servers drop the keyword arguments reset does not take.
func parseResetData(data map[string]json.RawMessage, where string) (resetParams, []fieldError) {
	var p resetParams
	var errs []fieldError
	intField := func(key string, dst *int64, has *bool) {
		raw, ok := data[key]
		if !ok || string(raw) == "null" {
			return
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil {
			errs = append(errs, fieldError{Type: "int_type", Loc: []any{where, key}, Msg: "Input should be a valid integer (64-bit)", Input: inputOf(raw)})
			return
		}
		*dst, *has = n, true
	}
	intField("seed", &p.seed, &p.hasSeed)
	intField("episode_seed", &p.episodeSeed, &p.hasEpisodeSeed)
	if raw, ok := data["episode_id"]; ok && string(raw) != "null" {
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &p.episodeID) != nil || len(p.episodeID) > 255 {
			errs = append(errs, fieldError{Type: "string_type", Loc: []any{where, "episode_id"}, Msg: "Input should be a valid string of at most 255 characters", Input: inputOf(raw)})
		}
		p.hasEpisodeID = true
	}
	return p, errs
}

// parseAction checks an action object, {"message": "<text>"} with an optional metadata object, and
// returns its text. Error locations are relative to the action, as OpenEnv reports them; where
// names the action itself when it is not an object.
func parseAction(raw []byte, where ...any) (string, []fieldError) {
	var obj map[string]json.RawMessage
	if errs := decodeObject(raw, &obj, where...); errs != nil {
		return "", errs
	}
	var errs []fieldError
	var text string
	if m, has := obj["message"]; !has {
		errs = append(errs, fieldError{Type: "missing", Loc: []any{"message"}, Msg: "Field required"})
	} else if len(m) == 0 || m[0] != '"' || json.Unmarshal(m, &text) != nil {
		errs = append(errs, fieldError{Type: "string_type", Loc: []any{"message"}, Msg: "Input should be a valid string", Input: inputOf(m)})
	}
	if md, has := obj["metadata"]; has {
		var tmp map[string]json.RawMessage
		errs = append(errs, decodeObject(md, &tmp, "metadata")...)
	}
	for _, k := range sortedKeys(obj) {
		if k != "message" && k != "metadata" {
			errs = append(errs, fieldError{Type: "extra_forbidden", Loc: []any{k}, Msg: "Extra inputs are not permitted", Input: inputOf(obj[k])})
		}
	}
	return text, errs
}

// decodeObject decodes a JSON object; anything else is an error located at loc.
func decodeObject(raw []byte, dst *map[string]json.RawMessage, loc ...any) []fieldError {
	err := json.Unmarshal(raw, dst)
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return []fieldError{{Type: "json_invalid", Loc: append(slices.Clone(loc), syn.Offset), Msg: "JSON decode error: " + syntaxMessage(raw, syn)}}
	case err != nil || *dst == nil:
		return []fieldError{{Type: "dict_type", Loc: append([]any{}, loc...), Msg: "Input should be a valid dictionary", Input: inputOf(raw)}}
	}
	return nil
}

// syntaxMessage is a JSON syntax error's message with the offending character read as UTF-8:
// encoding/json quotes the byte alone, so that é (bytes C3 A9) would read 'Ã'. A byte that does
// not start a valid UTF-8 character is shown as '\xNN'.
func syntaxMessage(raw []byte, syn *json.SyntaxError) string {
	msg := syn.Error()
	i := int(syn.Offset) - 1
	if i < 0 || i >= len(raw) || raw[i] < utf8.RuneSelf {
		return msg
	}
	latin1 := strconv.Quote(string(rune(raw[i])))
	asByte := "'" + latin1[1:len(latin1)-1] + "'"
	r, size := utf8.DecodeRune(raw[i:])
	char := fmt.Sprintf(`'\x%02X'`, raw[i])
	if r != utf8.RuneError || size > 1 {
		q := strconv.Quote(string(r))
		char = "'" + q[1:len(q)-1] + "'"
	}
	return strings.Replace(msg, "invalid character "+asByte, "invalid character "+char, 1)
}

// inputOf echoes a small offending value in an error (pydantic's "input"); large ones are left out.
func inputOf(raw []byte) json.RawMessage {
	if len(raw) == 0 || len(raw) > 200 || !json.Valid(raw) {
		return nil
	}
	return json.RawMessage(raw)
}

// shorten bounds a value quoted in an error message.
func shorten(s string) string {
	const limit = 64
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // not inside a character
		}
		return s[:cut] + "…"
	}
	return s
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// reset starts an episode. The reply is an observation message (a bare result over HTTP).
func (ss *session) reset(p resetParams) ([]byte, error, bool) {
	seed := p.seed
	if !p.hasSeed {
		seed = rand.Int64()
	}
	id := p.episodeID
	if !p.hasEpisodeID {
		id = crand.Text()
	}
	ss.started = false
	v, err, fatal := ss.call("Reset", func() (any, error) {
		if es, ok := ss.env.(envs.EpisodeSeeder); ok && p.hasEpisodeSeed {
			es.SeedEpisode(p.episodeSeed)
		}
		ins, obs, err := ss.env.Reset(seed)
		if err != nil {
			return nil, fmt.Errorf("Reset(%d): %w", seed, err)
		}
		return resultOf(obs, ss.env.StateKey(), &ins), nil
	})
	if err != nil {
		return nil, err, fatal
	}
	b, err := ss.encode("observation", v)
	if err != nil {
		return nil, err, false
	}
	ss.started, ss.seed, ss.episodeID, ss.stepCount = true, seed, id, 0
	return b, nil, false
}

// step applies an action text.
func (ss *session) step(text string) ([]byte, error, bool) {
	v, err, fatal := ss.call("Step", func() (any, error) {
		obs, err := ss.env.Step(text)
		if err != nil {
			return nil, fmt.Errorf("Step(%q): %w", shorten(text), err)
		}
		return resultOf(obs, ss.env.StateKey(), nil), nil
	})
	if err != nil {
		return nil, err, fatal
	}
	b, err := ss.encode("observation", v)
	if err != nil {
		return nil, err, false
	}
	ss.stepCount++
	return b, nil, false
}

// state reports the episode id and step count (OpenEnv's State) and graftrl's task seed, state key
// and step cap.
func (ss *session) state() ([]byte, error, bool) {
	st := map[string]any{"episode_id": nil, "step_count": ss.stepCount, "task_seed": nil, "max_turns": ss.srv.maxTurns}
	if ss.started {
		key, err, fatal := ss.call("StateKey", func() (any, error) { return ss.env.StateKey(), nil })
		if err != nil {
			return nil, err, fatal
		}
		st["episode_id"], st["task_seed"], st["state_key"] = ss.episodeID, ss.seed, key
	}
	b, err := ss.encode("state", st)
	return b, err, false
}

// encode wraps a result in a message of the given type, except over HTTP.
func (ss *session) encode(typ string, v any) ([]byte, error) {
	var b []byte
	var err error
	if ss.http {
		b, err = json.Marshal(v)
	} else {
		b, err = json.Marshal(message{Type: typ, Data: v})
	}
	if err != nil {
		// NaN or an infinity in a reward or a diagnostic: a fault of the env.
		return nil, fmt.Errorf("cannot encode the %s: %w", typ, err)
	}
	return b, nil
}

type callResult struct {
	v   any
	err error
}

// call runs one env call with panic recovery and the call timeout. fatal reports a timeout, after
// which the session is broken.
func (ss *session) call(what string, fn func() (any, error)) (v any, err error, fatal bool) {
	if ss.broken {
		return nil, errors.New("the environment is still running a call that timed out"), true
	}
	timeout := ss.timeout
	if timeout == 0 {
		timeout = ss.srv.callTimeout
	}
	done := make(chan callResult, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ss.srv.log.Error("openenv: environment panicked", "env", ss.srv.opts.Env, "call", what, "panic", r, "stack", string(debug.Stack()))
				done <- callResult{err: fmt.Errorf("environment panicked in %s: %v", what, r)}
			}
		}()
		v, err := fn()
		done <- callResult{v, err}
	}()
	if timeout < 0 {
		r := <-done
		return r.v, r.err, false
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.v, r.err, false
	case <-t.C:
		ss.broken = true
		return nil, fmt.Errorf("%s timed out after %s; the session is closed", what, timeout), true
	}
}
