package openenv_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/openenv"
)

// TestSessionEnvelopes plays a maze episode on a raw socket and checks every reply against the
// env played directly: OpenEnv's envelope, the observation's empty metadata (as OpenEnv 0.10's
// servers send it) and graftrl's fields.
func TestSessionEnvelopes(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	direct, err := envs.New("maze", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, url, nil)

	ins, first, _ := direct.Reset(7)
	m := ask(t, c, `{"type":"reset","data":{"seed":7,"episode_id":"ep-1"}}`)
	if m["type"] != "observation" {
		t.Fatalf("reset reply %v", m)
	}
	d := data(t, m)
	if d["reward"] != nil || d["done"] != false {
		t.Errorf("reset envelope: reward %v done %v, want null and false", d["reward"], d["done"])
	}
	obs := d["observation"].(map[string]any)
	want := map[string]any{"metadata": map[string]any{}, "text": first.Text, "instruction": ins, "state_key": direct.StateKey(), "step_reward": 0.0,
		"outcome": 0.0, "truncated": false,
		"info": map[string]any{"success": false, "invalid_action": false, "distance": float64(first.Info.Distance)}}
	if !jsonEqual(obs, want) {
		t.Errorf("reset observation\n%v\nwant\n%v", obs, want)
	}

	// An invalid action, then moves until the episode ends.
	for i, a := range []string{"jump", "up", "down", "left", "right", "up", "up", "left", "down", "right", "right", "down", "down"} {
		o, err := direct.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		m := ask(t, c, `{"type":"step","data":{"message":"`+a+`"}}`)
		d := data(t, m)
		obs := d["observation"].(map[string]any)
		want := map[string]any{"metadata": map[string]any{}, "text": o.Text, "state_key": direct.StateKey(), "step_reward": o.Reward, "outcome": o.Outcome,
			"truncated": o.Truncated, "info": map[string]any{"success": o.Info.Success, "invalid_action": o.Info.Invalid, "distance": float64(o.Info.Distance)}}
		if !jsonEqual(obs, want) || d["reward"] != o.Reward+o.Outcome || d["done"] != o.Over() {
			t.Fatalf("step %d %q: %v\nwant observation %v reward %v done %v", i, a, d, want, o.Reward+o.Outcome, o.Over())
		}
		if i == 0 && !o.Info.Invalid {
			t.Fatal("jump was accepted")
		}
		if o.Over() {
			m := ask(t, c, `{"type":"step","data":{"message":"up"}}`)
			if errorCode(m) != openenv.CodeExecution {
				t.Errorf("step after the end: %v, want EXECUTION_ERROR", m)
			}
			break
		}
	}

	st := data(t, ask(t, c, `{"type":"state"}`))
	if st["episode_id"] != "ep-1" || st["task_seed"] != 7.0 || st["state_key"] != direct.StateKey() || st["max_turns"] != float64(direct.MaxTurns()) {
		t.Errorf("state %v", st)
	}
	if n, _ := st["step_count"].(float64); n < 1 {
		t.Errorf("state step_count %v", st["step_count"])
	}
	data(t, ask(t, c, `{"type":"reset"}`)) // a reset without a seed must succeed
	if seed := data(t, ask(t, c, `{"type":"state"}`))["task_seed"].(float64); seed < 0 {
		t.Errorf("reset without a seed drew task seed %v, want >= 0", seed)
	}

	send(t, c, `{"type":"close"}`)
	if s := closeStatus(c); s != websocket.StatusNormalClosure {
		t.Errorf("after close: status %v, want a normal closure and no reply", s)
	}
}

// jsonEqual compares two values through their JSON encodings.
func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestErrorCodesKeepSession sends every kind of bad message on one socket: each gets its error
// code, and the session stays usable (text that is not UTF-8 closes it: TestInvalidUTF8Text).
func TestErrorCodesKeepSession(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	c := dialRaw(t, url, nil)
	if code := errorCode(ask(t, c, `{"type":"step","data":{"message":"up"}}`)); code != openenv.CodeExecution {
		t.Errorf("step before reset: %q, want EXECUTION_ERROR", code)
	}
	for _, tc := range []struct{ msg, code, loc string }{
		{`{`, openenv.CodeInvalidJSON, ""},
		{``, openenv.CodeInvalidJSON, ""},
		{`{"type":"reset"} {}`, openenv.CodeInvalidJSON, ""},
		{`[1,2]`, openenv.CodeValidation, ""},
		{`null`, openenv.CodeValidation, ""},
		{`"reset"`, openenv.CodeValidation, ""},
		{`{}`, openenv.CodeUnknownType, ""},
		{`{"type":"jump"}`, openenv.CodeUnknownType, ""},
		{`{"type":5}`, openenv.CodeUnknownType, ""},
		{`{"type":"mcp","data":{}}`, openenv.CodeUnknownType, ""},
		{`{"type":"reset","extra":1}`, openenv.CodeValidation, "extra"},
		{`{"type":"state","data":{}}`, openenv.CodeValidation, "data"},
		{`{"type":"close","data":{}}`, openenv.CodeValidation, "data"},
		{`{"type":"reset","data":{"seed":"x"}}`, openenv.CodeValidation, "data.seed"},
		{`{"type":"reset","data":{"seed":1.5}}`, openenv.CodeValidation, "data.seed"},
		{`{"type":"reset","data":{"seed":1e30}}`, openenv.CodeValidation, "data.seed"},
		{`{"type":"reset","data":{"episode_id":3}}`, openenv.CodeValidation, "data.episode_id"},
		{`{"type":"reset","data":[]}`, openenv.CodeValidation, "data"},
		{`{"type":"reset","data":null}`, openenv.CodeValidation, "data"},
		{`{"type":"step"}`, openenv.CodeValidation, "data"},
		{`{"type":"step","data":"up"}`, openenv.CodeValidation, "data"},
		{`{"type":"step","data":{}}`, openenv.CodeValidation, "message"},
		{`{"type":"step","data":{"message":1}}`, openenv.CodeValidation, "message"},
		{`{"type":"step","data":{"message":null}}`, openenv.CodeValidation, "message"},
		{`{"type":"step","data":{"message":"up","other":1}}`, openenv.CodeValidation, "other"},
		{`{"type":"step","data":{"message":"up","metadata":[]}}`, openenv.CodeValidation, "metadata"},
		{`{"type":"step","data":{"action":"up"}}`, openenv.CodeValidation, "message"},
	} {
		m := ask(t, c, tc.msg)
		if code := errorCode(m); code != tc.code {
			t.Errorf("%q: reply %v, want %s", tc.msg, m, tc.code)
			continue
		}
		d := data(t, m)
		if msg, _ := d["message"].(string); msg == "" {
			t.Errorf("%q: error without a message: %v", tc.msg, d)
		}
		if tc.code == openenv.CodeValidation {
			errs, _ := d["errors"].([]any)
			var locs []string
			for _, e := range errs {
				var parts []string
				for _, p := range e.(map[string]any)["loc"].([]any) {
					parts = append(parts, strings.Trim(jsonString(p), `"`))
				}
				locs = append(locs, strings.Join(parts, "."))
			}
			if len(errs) == 0 || (tc.loc != "" && !slices.Contains(locs, tc.loc)) {
				t.Errorf("%q: errors %v, want one at %q", tc.msg, errs, tc.loc)
			}
		}
		// The session is still there: a reset works.
		if m := ask(t, c, `{"type":"reset","data":{"seed":1}}`); m["type"] != "observation" {
			t.Fatalf("after %q the session is unusable: %v", tc.msg, m)
		}
	}
	// An action with metadata is accepted, and so is a binary frame of JSON.
	if m := ask(t, c, `{"type":"step","data":{"message":"up","metadata":{"k":1}}}`); m["type"] != "observation" {
		t.Errorf("action with metadata: %v", m)
	}
	ctx := t.Context()
	if err := c.Write(ctx, websocket.MessageBinary, []byte(`{"type":"state"}`)); err != nil {
		t.Fatal(err)
	}
	if m, err := recv(c); err != nil || m["type"] != "state" {
		t.Errorf("binary state message: %v %v", m, err)
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestCapacityReached fills a server of one session: the next connection gets CAPACITY_REACHED
// with the counts, then the socket closes; once the first session ends a new one is accepted.
func TestCapacityReached(t *testing.T) {
	srv, url := startServer(t, openenv.ServerOptions{Env: "maze", MaxSessions: 1})
	a := dialRaw(t, url, nil)
	ask(t, a, `{"type":"reset","data":{"seed":1}}`)
	b := dialRaw(t, url, nil)
	m, err := recv(b)
	if err != nil {
		t.Fatal(err)
	}
	d := data(t, m)
	if errorCode(m) != openenv.CodeCapacityReached || d["active_sessions"] != 1.0 || d["max_sessions"] != 1.0 {
		t.Fatalf("second session: %v, want CAPACITY_REACHED with active_sessions 1 and max_sessions 1", m)
	}
	if s := closeStatus(b); s == websocket.StatusNormalClosure {
		t.Errorf("the refused socket closed with status %v", s)
	}
	if srv.ActiveSessions() != 1 {
		t.Errorf("%d active sessions, want 1", srv.ActiveSessions())
	}
	send(t, a, `{"type":"close"}`)
	closeStatus(a)
	eventually(t, "the session slot to be released", func() bool { return srv.ActiveSessions() == 0 })
	c := dialRaw(t, url, nil)
	if m := ask(t, c, `{"type":"reset","data":{"seed":1}}`); m["type"] != "observation" {
		t.Errorf("after the first session closed: %v", m)
	}
}

// TestFactoryError: an env constructor that fails gives FACTORY_ERROR and closes the session; the
// stateless HTTP routes answer 500.
func TestFactoryError(t *testing.T) {
	calls := 0
	_, url := startServer(t, openenv.ServerOptions{Env: "flaky", NewEnv: func() (envs.Env, error) {
		calls++
		if calls > 1 { // the first instance is NewServer's probe
			return nil, io.ErrUnexpectedEOF
		}
		return &line{}, nil
	}})
	c := dialRaw(t, url, nil)
	m, err := recv(c)
	if err != nil {
		t.Fatal(err)
	}
	if errorCode(m) != openenv.CodeFactory || data(t, m)["factory_name"] != "flaky" {
		t.Errorf("reply %v, want FACTORY_ERROR naming flaky", m)
	}
	if s := closeStatus(c); s == websocket.StatusNormalClosure {
		t.Errorf("closed with %v", s)
	}
	resp := post(t, httpURL(url)+"/reset", `{"seed":1}`, nil)
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("POST /reset: %s", resp.Status)
	}
}

// TestEnvPanicsMidStep: a panicking env gives EXECUTION_ERROR; the session and the server live on.
func TestEnvPanicsMidStep(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "line", NewEnv: newLine(0)})
	c := dialRaw(t, url, nil)
	ask(t, c, `{"type":"reset","data":{"seed":1}}`)
	ask(t, c, `{"type":"step","data":{"message":"right"}}`)
	m := ask(t, c, `{"type":"step","data":{"message":"boom"}}`)
	if errorCode(m) != openenv.CodeExecution || !strings.Contains(data(t, m)["message"].(string), "panicked") {
		t.Fatalf("panicking step: %v", m)
	}
	if m := ask(t, c, `{"type":"step","data":{"message":"right"}}`); m["type"] != "observation" {
		t.Errorf("step after the panic: %v", m)
	}
	if m := ask(t, c, `{"type":"step","data":{"message":"fail"}}`); errorCode(m) != openenv.CodeExecution {
		t.Errorf("failing step: %v", m)
	}
	if resp := post(t, httpURL(url)+"/step", `{"action":{"message":"boom"}}`, nil); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("POST /step of a panicking action: %s", resp.Status)
	}
	if resp := get(t, httpURL(url)+"/health", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("health after panics: %s", resp.Status)
	}
}

// TestCallTimeout: an env call past the call timeout gives SESSION_ERROR and closes the session.
func TestCallTimeout(t *testing.T) {
	srv, url := startServer(t, openenv.ServerOptions{Env: "line", NewEnv: newLine(time.Second), CallTimeout: 50 * time.Millisecond})
	c := dialRaw(t, url, nil)
	ask(t, c, `{"type":"reset"}`)
	m := ask(t, c, `{"type":"step","data":{"message":"slow"}}`)
	if errorCode(m) != openenv.CodeSession || !strings.Contains(data(t, m)["message"].(string), "timed out") {
		t.Errorf("slow step: %v, want SESSION_ERROR", m)
	}
	closeStatus(c)
	eventually(t, "the slot to be released", func() bool { return srv.ActiveSessions() == 0 })
}

// TestHTTPRoutes checks /health, /schema, /metadata, /state and the stateless /reset and /step.
func TestHTTPRoutes(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", MaxMessageBytes: 4096})
	base := httpURL(url)
	direct, _ := envs.New("maze", nil)

	if body := readJSON(t, get(t, base+"/health", nil)); body["status"] != "healthy" {
		t.Errorf("/health %v", body)
	}
	schema := readJSON(t, get(t, base+"/schema", nil))
	action, _ := schema["action"].(map[string]any)
	props, _ := action["properties"].(map[string]any)
	if msg, _ := props["message"].(map[string]any); msg["type"] != "string" || action["additionalProperties"] != false {
		t.Errorf("/schema action %v", action)
	}
	for _, k := range []string{"observation", "state"} {
		if s, _ := schema[k].(map[string]any); s["type"] != "object" {
			t.Errorf("/schema %s: %v", k, schema[k])
		}
	}
	meta := readJSON(t, get(t, base+"/metadata", nil))
	for _, k := range []string{"name", "description", "readme_content", "version", "author", "documentation_url"} {
		if _, ok := meta[k]; !ok {
			t.Errorf("/metadata lacks OpenEnv's %s: %v", k, meta)
		}
	}
	if meta["max_sessions"] != float64(openenv.DefaultMaxSessions) {
		t.Errorf("/metadata max_sessions %v, want the default cap %d", meta["max_sessions"], openenv.DefaultMaxSessions)
	}
	if meta["name"] != "maze" || !jsonEqual(meta["vocabulary"], direct.Vocabulary()) || meta["max_turns"] != float64(direct.MaxTurns()) ||
		!jsonEqual(meta["action_words"], direct.(envs.ActionWorder).ActionWords()) || meta["action_field"] != "message" {
		t.Errorf("/metadata %v", meta)
	}

	ins, first, _ := direct.Reset(3)
	r := readJSON(t, post(t, base+"/reset", `{"seed":3,"episode_id":"e"}`, nil))
	obs, _ := r["observation"].(map[string]any)
	if obs["text"] != first.Text || obs["instruction"] != ins || r["reward"] != nil || r["done"] != false {
		t.Errorf("POST /reset: %v", r)
	}
	if resp := post(t, base+"/reset", ``, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("POST /reset without a body: %s", resp.Status)
	}
	direct.Reset(0)
	o, _ := direct.Step("down")
	r = readJSON(t, post(t, base+"/step", `{"action":{"message":"down"},"timeout_s":5,"request_id":"r1"}`, nil))
	if obs, _ := r["observation"].(map[string]any); obs["text"] != o.Text || r["reward"] != o.Reward+o.Outcome {
		t.Errorf("POST /step: %v, want %+v", r, o)
	}
	if st := readJSON(t, get(t, base+"/state", nil)); st["episode_id"] != nil || st["step_count"] != 0.0 {
		t.Errorf("GET /state: %v", st)
	}

	for _, tc := range []struct {
		path, body string
		status     int
		loc        string
	}{
		{"/reset", `{"seed":-1}`, 422, "body.seed"},
		{"/reset", `{"seed":"x"}`, 422, "body.seed"},
		{"/reset", `{"seed":`, 422, "body"},
		{"/reset", `[1]`, 422, "body"},
		{"/step", `{}`, 422, "body.action"},
		{"/step", `{"action":{"msg":"up"}}`, 422, "message"},
		{"/step", `{"action":"up"}`, 422, "body.action"},
		{"/step", `{"action":{"message":"up"},"timeout_s":0}`, 422, "body.timeout_s"},
		{"/step", `{"action":{"message":"up"},"timeout_s":1,"extra":true}`, 200, ""},
		{"/step", `{"action":{"message":"` + strings.Repeat("x", 5000) + `"}}`, 413, ""},
	} {
		resp := post(t, base+tc.path, tc.body, nil)
		if resp.StatusCode != tc.status {
			t.Errorf("POST %s %.40s: %s, want %d", tc.path, tc.body, resp.Status, tc.status)
			continue
		}
		if tc.status == 422 {
			body := readJSON(t, resp)
			detail, _ := body["detail"].([]any)
			found := false
			for _, d := range detail {
				var parts []string
				for _, p := range d.(map[string]any)["loc"].([]any) {
					parts = append(parts, strings.Trim(jsonString(p), `"`))
				}
				found = found || strings.HasPrefix(strings.Join(parts, "."), tc.loc)
			}
			if !found {
				t.Errorf("POST %s %s: detail %v, want one at %s", tc.path, tc.body, detail, tc.loc)
			}
		} else {
			resp.Body.Close()
		}
	}
	if resp := post(t, base+"/health", `{}`, nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /health: %s", resp.Status)
	}
}

// TestStepErrorIs500: POST /step of an env that fails answers 500 with a detail.
func TestStepErrorIs500(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "line", NewEnv: newLine(0)})
	resp := post(t, httpURL(url)+"/step", `{"action":{"message":"fail"}}`, nil)
	body := readJSON(t, resp)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(jsonString(body["detail"]), "failed on purpose") {
		t.Errorf("POST /step fail: %s %v", resp.Status, body)
	}
}

// TestBearerToken: with a token every route but /health needs it, the WebSocket included.
func TestBearerToken(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", Token: "s3cret"})
	base := httpURL(url)
	good := http.Header{"Authorization": {"Bearer s3cret"}}
	for _, h := range []http.Header{nil, {"Authorization": {"Bearer wrong"}}, {"Authorization": {"s3cret"}}} {
		if resp := get(t, base+"/metadata", h); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /metadata with %v: %s", h, resp.Status)
		}
	}
	if resp := get(t, base+"/metadata", good); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metadata with the token: %s", resp.Status)
	}
	if resp := get(t, base+"/health", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /health without the token: %s", resp.Status)
	}
	if resp := post(t, base+"/reset", `{}`, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /reset without the token: %s", resp.Status)
	}
	_, resp, err := websocket.Dial(t.Context(), wsURL(url), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("WebSocket without the token: %v %v", resp, err)
	}
	c := dialRaw(t, url, good)
	if m := ask(t, c, `{"type":"reset","data":{"seed":1}}`); m["type"] != "observation" {
		t.Errorf("reset with the token: %v", m)
	}

	if _, err := envs.New(openenv.Name, envs.Options{"url": url}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("client without the token: %v", err)
	}
	e, err := envs.New(openenv.Name, envs.Options{"url": url, "token": "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Reset(1); err != nil {
		t.Errorf("client with the token: %v", err)
	}
	t.Setenv("GRAFTRL_TEST_TOKEN", "s3cret")
	e, err = envs.New(openenv.Name, envs.Options{"url": url, "token_env": "GRAFTRL_TEST_TOKEN"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Reset(1); err != nil {
		t.Errorf("client with token_env: %v", err)
	}
}

// TestMessageSizeLimit: a message over the limit closes the session with status 1009.
func TestMessageSizeLimit(t *testing.T) {
	srv, url := startServer(t, openenv.ServerOptions{Env: "maze", MaxMessageBytes: 1024})
	c := dialRaw(t, url, nil)
	ask(t, c, `{"type":"reset","data":{"seed":1}}`)
	send(t, c, `{"type":"step","data":{"message":"`+strings.Repeat("u", 2000)+`"}}`)
	if s := closeStatus(c); s != websocket.StatusMessageTooBig {
		t.Errorf("close status %v, want %v", s, websocket.StatusMessageTooBig)
	}
	eventually(t, "the slot to be released", func() bool { return srv.ActiveSessions() == 0 })
}

// TestIdleExpiry: a session idle past the idle timeout is closed and its slot released.
func TestIdleExpiry(t *testing.T) {
	srv, url := startServer(t, openenv.ServerOptions{Env: "maze", IdleTimeout: 100 * time.Millisecond})
	c := dialRaw(t, url, nil)
	for range 3 { // activity keeps it open
		ask(t, c, `{"type":"reset","data":{"seed":1}}`)
		time.Sleep(60 * time.Millisecond)
	}
	if s := closeStatus(c); s != websocket.StatusPolicyViolation {
		t.Errorf("close status %v, want %v (idle timeout)", s, websocket.StatusPolicyViolation)
	}
	eventually(t, "the slot to be released", func() bool { return srv.ActiveSessions() == 0 })
}

// TestMalformedNeverPanics throws hostile messages at one session: every reply is a well-formed
// error and the session survives.
func TestMalformedNeverPanics(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	c := dialRaw(t, url, nil)
	for _, msg := range []string{
		strings.Repeat("[", 10000),
		`{"type":"reset","data":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `}`,
		`{"type":"step","data":{"message":"\ud800"}}`,
		`{"type":"reset","data":{"seed":99999999999999999999999}}`,
		`{"type":"reset","data":{"seed":-9223372036854775808}}`,
		`{"type":"step","data":{"message":"` + strings.Repeat(`\u0000`, 100) + `"}}`,
		"{\"type\":\"st\x00ate\"}",
		`{"type":"reset","type":"step"}`,
		`{"TYPE":"reset"}`,
		`{"type":["reset"]}`,
		`{"type":"step","data":{"message":"up","message":"down"}}`,
	} {
		m := ask(t, c, msg)
		if m["type"] != "error" && m["type"] != "observation" {
			t.Errorf("%.60q: reply %v", msg, m)
		}
	}
	if m := ask(t, c, `{"type":"reset","data":{"seed":2}}`); m["type"] != "observation" {
		t.Errorf("the session did not survive: %v", m)
	}
}

// TestLoopbackByDefault: a listen address reachable from elsewhere needs AllowRemote.
func TestLoopbackByDefault(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:0": true, "localhost:0": true, "[::1]:0": true,
		"0.0.0.0:0": false, ":8000": false, "example.com:80": false, "10.1.2.3:8000": false} {
		_, err := openenv.NewServer(openenv.ServerOptions{Env: "maze", Addr: addr})
		if (err == nil) != ok {
			t.Errorf("NewServer at %s: %v", addr, err)
		}
	}
	if _, err := openenv.NewServer(openenv.ServerOptions{Env: "maze", Addr: "0.0.0.0:0", AllowRemote: true, Token: "s3cret"}); err != nil {
		t.Errorf("AllowRemote: %v", err)
	}
	if _, err := openenv.NewServer(openenv.ServerOptions{Env: "maze", EnvOptions: envs.Options{"size": 12}}); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("bad env options: %v", err)
	}
	if _, err := openenv.NewServer(openenv.ServerOptions{Env: "nope"}); err == nil {
		t.Error("unknown env accepted")
	}
}

// TestEpisodeSeedForwarded: the client forwards SeedEpisode to a graftrl server whose env draws
// randomness per episode, so a stochastic env plays the same episodes remotely as locally.
func TestEpisodeSeedForwarded(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "frozenlake"})
	remote, err := envs.New(openenv.Name, envs.Options{"url": url})
	if err != nil {
		t.Fatal(err)
	}
	// The slips of an instance depend on its episode number too: one local instance as well.
	local, _ := envs.New("frozenlake", nil)
	for episode := range int64(6) {
		local.(envs.EpisodeSeeder).SeedEpisode(100 + episode)
		remote.(envs.EpisodeSeeder).SeedEpisode(100 + episode)
		_, lo, _ := local.Reset(5)
		_, ro, err := remote.Reset(5)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; !lo.Over(); i++ {
			if !jsonEqual(lo, ro) || local.StateKey() != remote.StateKey() {
				t.Fatalf("episode seed %d step %d: local %+v %q, remote %+v %q", 100+episode, i, lo, local.StateKey(), ro, remote.StateKey())
			}
			a := []string{"right", "down", "down", "right", "left", "up"}[i%6]
			lo, _ = local.Step(a)
			if ro, err = remote.Step(a); err != nil {
				t.Fatal(err)
			}
		}
		if !jsonEqual(lo, ro) {
			t.Fatalf("last step: local %+v, remote %+v", lo, ro)
		}
	}
}

func get(t testing.TB, url string, h http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if h != nil {
		req.Header = h
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func post(t testing.TB, url, body string, h http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if h != nil {
		req.Header = h
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readJSON(t testing.TB, resp *http.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s: %v", resp.Request.URL, err)
	}
	return m
}

// TestGracefulShutdown: when Serve's context ends, open sessions are closed with status 1001 and
// Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	srv, err := openenv.NewServer(openenv.ServerOptions{Env: "maze", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	c := dialRaw(t, "ws://"+ln.Addr().String(), nil)
	ask(t, c, `{"type":"reset","data":{"seed":1}}`)
	cancel()
	if s := closeStatus(c); s != websocket.StatusGoingAway {
		t.Errorf("close status %v, want %v", s, websocket.StatusGoingAway)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if err := srv.Serve(context.Background(), ln); err != openenv.ErrServerClosed {
		t.Errorf("Serve after shutdown: %v", err)
	}
}
