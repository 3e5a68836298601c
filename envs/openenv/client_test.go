package openenv_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/openenv"
)

// newClient builds the openenv env with extra options.
func newClient(t testing.TB, url string, opts envs.Options) envs.Env {
	t.Helper()
	o := envs.Options{"url": url}
	for k, v := range opts {
		o[k] = v
	}
	e, err := envs.New(openenv.Name, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.(io.Closer).Close() })
	return e
}

// TestClientWaitsForCapacity: Reset retries CAPACITY_REACHED with backoff for up to capacity_wait,
// then gives up with the server's error.
func TestClientWaitsForCapacity(t *testing.T) {
	srv, url := startServer(t, openenv.ServerOptions{Env: "maze", MaxSessions: 1})
	holder := dialRaw(t, url, nil)
	ask(t, holder, `{"type":"reset","data":{"seed":1}}`)

	impatient := newClient(t, url, envs.Options{"capacity_wait": 0.3})
	start := time.Now()
	_, _, err := impatient.Reset(1)
	var se *openenv.ServerError
	if !errors.As(err, &se) || se.Code != openenv.CodeCapacityReached || !strings.Contains(err.Error(), "capacity_wait") {
		t.Fatalf("Reset on a full server: %v, want CAPACITY_REACHED", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond || waited > 3*time.Second {
		t.Errorf("gave up after %v, want about capacity_wait = 0.3s", waited)
	}

	patient := newClient(t, url, envs.Options{"capacity_wait": 10})
	done := make(chan error, 1)
	go func() {
		_, _, err := patient.Reset(1)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Reset returned while the server was full: %v", err)
	default:
	}
	send(t, holder, `{"type":"close"}`)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Reset after a session was freed: %v", err)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("Reset still waiting after the session was freed")
	}
	if _, err := patient.Step("up"); err != nil {
		t.Errorf("Step: %v", err)
	}
	if srv.ActiveSessions() != 1 {
		t.Errorf("%d sessions, want 1", srv.ActiveSessions())
	}
}

// TestServerKilledMidEpisode: when the server dies mid-episode Step returns an error (no panic,
// no hang); Reset fails while it is down and reconnects once it is back on the same address.
func TestServerKilledMidEpisode(t *testing.T) {
	srv, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	e := newClient(t, url, envs.Options{"connect_retries": 1, "timeout": 2})
	if _, _, err := e.Reset(4); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Step("up"); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if _, err := e.Step("down"); !errors.Is(err, envs.ErrSessionLost) {
		t.Fatalf("Step on a dead server: %v, want envs.ErrSessionLost", err)
	}
	if _, err := e.Step("down"); err == nil || !strings.Contains(err.Error(), "Reset") {
		t.Errorf("second Step after the loss: %v, want an error asking for Reset", err)
	}
	if _, _, err := e.Reset(4); !errors.Is(err, envs.ErrSessionLost) {
		t.Fatalf("Reset on a dead server: %v, want envs.ErrSessionLost", err)
	}
	addr := strings.TrimPrefix(url, "ws://")
	startServer(t, openenv.ServerOptions{Env: "maze", Addr: addr})
	direct, _ := envs.New("maze", nil)
	_, want, _ := direct.Reset(4)
	_, got, err := e.Reset(4)
	if err != nil {
		t.Fatalf("Reset on the restarted server: %v", err)
	}
	if !jsonEqual(got, want) {
		t.Errorf("after reconnecting: %+v, want %+v", got, want)
	}
	if _, err := e.Step("up"); err != nil {
		t.Errorf("Step after reconnecting: %v", err)
	}
}

// TestClientMaxParallel: the client admits as many parallel instances as graftrl's server lists
// in /metadata (max_sessions), or as its own max_sessions option says.
func TestClientMaxParallel(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", MaxSessions: 5})
	for opt, want := range map[int]int{0: 5, 3: 3} {
		opts := envs.Options{}
		if opt > 0 {
			opts["max_sessions"] = opt
		}
		if got := newClient(t, url, opts).(envs.Parallel).MaxParallel(); got != want {
			t.Errorf("max_sessions %d: MaxParallel %d, want %d", opt, got, want)
		}
	}
}

// TestClientReconnectsAfterIdleExpiry: a session the server expired fails the next Step; the next
// Reset opens a new one.
func TestClientReconnectsAfterIdleExpiry(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", IdleTimeout: 100 * time.Millisecond})
	e := newClient(t, url, nil)
	if _, _, err := e.Reset(2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := e.Step("up"); err == nil {
		t.Fatal("Step on an expired session succeeded")
	}
	if _, _, err := e.Reset(2); err != nil {
		t.Fatalf("Reset after expiry: %v", err)
	}
	if _, err := e.Step("up"); err != nil {
		t.Errorf("Step after reconnecting: %v", err)
	}
	// A kept socket the server has since closed is replaced transparently by Reset.
	time.Sleep(300 * time.Millisecond)
	if _, _, err := e.Reset(3); err != nil {
		t.Errorf("Reset on an expired socket: %v", err)
	}
}

// TestClientCloseReleasesSession: Close ends the server session and the env stays usable; a client
// dropped without Close releases its session when collected.
func TestClientCloseReleasesSession(t *testing.T) {
	srv, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	e := newClient(t, url, nil)
	if _, _, err := e.Reset(1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "one session", func() bool { return srv.ActiveSessions() == 1 })
	e.(io.Closer).Close()
	eventually(t, "the session to close", func() bool { return srv.ActiveSessions() == 0 })
	if _, err := e.Step("up"); err == nil {
		t.Error("Step after Close succeeded")
	}
	if _, _, err := e.Reset(1); err != nil {
		t.Errorf("Reset after Close: %v", err)
	}
	e.(io.Closer).Close()

	func() {
		dropped, err := envs.New(openenv.Name, envs.Options{"url": url})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := dropped.Reset(1); err != nil {
			t.Fatal(err)
		}
	}()
	eventually(t, "the dropped client's session to close", func() bool {
		runtime.GC()
		return srv.ActiveSessions() == 0
	})
}

// TestClientOptions: option errors name the key; the URL may be ws, http or end in /ws; the
// vocabulary and the step cap come from /metadata or the options.
func TestClientOptions(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	for _, tc := range []struct {
		opts envs.Options
		key  string
	}{
		{envs.Options{}, "url"},
		{envs.Options{"url": "ftp://x"}, "url"},
		{envs.Options{"url": "ws://"}, "url"},
		{envs.Options{"url": url, "urll": 1}, "urll"},
		{envs.Options{"url": url, "max_turns": -1}, "max_turns"},
		{envs.Options{"url": url, "timeout": 0}, "timeout"},
		{envs.Options{"url": url, "vocabulary": []any{"a b"}}, "vocabulary"},
		{envs.Options{"url": url, "max_message_bytes": 10}, "max_message_bytes"},
		{envs.Options{"url": url, "token_env": "GRAFTRL_SURELY_UNSET"}, "token_env"},
	} {
		_, err := envs.New(openenv.Name, tc.opts)
		var oe *envs.OptionError
		if !errors.As(err, &oe) || oe.Key != tc.key {
			t.Errorf("%v: %v, want an option error for %s", tc.opts, err, tc.key)
		}
	}
	direct, _ := envs.New("maze", nil)
	_, want, _ := direct.Reset(6)
	for _, u := range []string{url, url + "/", url + "/ws", httpURL(url), httpURL(url) + "/ws"} {
		e := newClient(t, u, nil)
		_, got, err := e.Reset(6)
		if err != nil || !jsonEqual(got, want) {
			t.Errorf("url %s: %+v %v", u, got, err)
		}
		if _, ok := e.(envs.ActionWorder); !ok || e.MaxTurns() != direct.MaxTurns() || !jsonEqual(e.Vocabulary(), direct.Vocabulary()) {
			t.Errorf("url %s: action words, step cap or vocabulary not taken from /metadata", u)
		}
	}
	e := newClient(t, url, envs.Options{"vocabulary": []any{"up", "down"}, "max_turns": 3})
	if !jsonEqual(e.Vocabulary(), []string{"up", "down"}) || e.MaxTurns() != 3 {
		t.Errorf("options do not override /metadata: %v %d", e.Vocabulary(), e.MaxTurns())
	}

	// A server without /metadata (before OpenEnv 0.2) needs the vocabulary and the step cap.
	bare := httptest.NewServer(http.NotFoundHandler())
	defer bare.Close()
	if _, err := envs.New(openenv.Name, envs.Options{"url": bare.URL}); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("no metadata and no vocabulary: %v", err)
	}
	if _, err := envs.New(openenv.Name, envs.Options{"url": bare.URL, "vocabulary": []any{"a"}}); err == nil || !strings.Contains(err.Error(), "max_turns") {
		t.Errorf("no metadata and no max_turns: %v", err)
	}
	if _, err := envs.New(openenv.Name, envs.Options{"url": bare.URL, "vocabulary": []any{"a"}, "max_turns": 4}); err != nil {
		t.Errorf("no metadata, explicit options: %v", err)
	}
	// An env without action words gives a client without ActionWords.
	_, lineURL := startServer(t, openenv.ServerOptions{Env: "line", NewEnv: newLine(0)})
	if _, ok := newClient(t, lineURL, nil).(envs.ActionWorder); ok {
		t.Error("a client of an env without action words has ActionWords")
	}
}

// TestClientStepErrors: Step before Reset and after the end are errors; an EXECUTION_ERROR keeps
// the session.
func TestClientStepErrors(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "line", NewEnv: newLine(0)})
	e := newClient(t, url, nil)
	if _, err := e.Step("right"); err == nil {
		t.Error("Step before Reset succeeded")
	}
	if _, _, err := e.Reset(0); err != nil {
		t.Fatal(err)
	}
	_, err := e.Step("boom")
	var se *openenv.ServerError
	if !errors.As(err, &se) || se.Code != openenv.CodeExecution {
		t.Fatalf("panicking step: %v, want EXECUTION_ERROR", err)
	}
	var o envs.Observation
	for range 3 {
		if o, err = e.Step("right"); err != nil {
			t.Fatalf("Step after EXECUTION_ERROR: %v", err)
		}
	}
	if !o.Done || !o.Info.Success || o.Outcome != 1 || o.Reward != 0 || e.StateKey() != "p3" {
		t.Errorf("last step %+v key %q", o, e.StateKey())
	}
	if _, err := e.Step("right"); err == nil {
		t.Error("Step after the end succeeded")
	}
}
