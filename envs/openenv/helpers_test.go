package openenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/graftrl/graftrl/envs"
)

// line is a scripted env for the protocol tests: walk right from p0 to p3. The action "boom"
// panics, "fail" returns an error, "slow" sleeps for the given time.
type line struct {
	pos     int
	turn    int
	started bool
	over    bool
	slow    time.Duration
}

func (l *line) Reset(int64) (string, envs.Observation, error) {
	l.pos, l.turn, l.started, l.over = 0, 0, true, false
	return "goal p3", envs.Observation{Text: "p0", Info: envs.Info{Distance: 3}}, nil
}

func (l *line) Step(a string) (envs.Observation, error) {
	switch {
	case !l.started || l.over:
		return envs.Observation{}, errors.New("line: not running")
	case a == "boom":
		panic("line: boom")
	case a == "fail":
		return envs.Observation{}, errors.New("line: failed on purpose")
	case a == "slow":
		time.Sleep(l.slow)
	}
	l.turn++
	o := envs.Observation{}
	switch a {
	case "right":
		l.pos++
	case "left":
		if l.pos > 0 {
			l.pos--
		}
	default:
		o.Reward, o.Info.Invalid = -0.1, true
	}
	o.Text = "p" + string(rune('0'+l.pos))
	o.Info.Distance = 3 - l.pos
	if l.pos == 3 {
		o.Done, o.Outcome, o.Info.Success = true, 1, true
	}
	o.Truncated = !o.Done && l.turn >= 6
	l.over = o.Over()
	return o, nil
}

func (l *line) StateKey() string { return "p" + string(rune('0'+l.pos)) }
func (l *line) Vocabulary() []string {
	return []string{"p0", "p1", "p2", "p3", "left", "right", "goal", "boom", "fail", "slow"}
}
func (l *line) MaxTurns() int { return 6 }

// newLine is a ServerOptions.NewEnv of line.
func newLine(slow time.Duration) func() (envs.Env, error) {
	return func() (envs.Env, error) { return &line{slow: slow}, nil }
}

// wsURL turns a server URL into its WebSocket route.
func wsURL(url string) string { return url + "/ws" }

// httpURL turns a server URL into its HTTP base.
func httpURL(url string) string { return "http://" + strings.TrimPrefix(url, "ws://") }

// dialRaw opens a raw WebSocket session.
func dialRaw(t testing.TB, url string, header http.Header) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL(url), &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func send(t testing.TB, c *websocket.Conn, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("send %s: %v", msg, err)
	}
}

// recv reads one message; err is the read error (the socket closed).
func recv(c *websocket.Conn) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, raw, err := c.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// ask sends a message and returns the reply.
func ask(t testing.TB, c *websocket.Conn, msg string) map[string]any {
	t.Helper()
	send(t, c, msg)
	m, err := recv(c)
	if err != nil {
		t.Fatalf("reply to %s: %v", msg, err)
	}
	return m
}

// data returns the data object of a reply.
func data(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	d, ok := m["data"].(map[string]any)
	if !ok {
		t.Fatalf("reply without a data object: %v", m)
	}
	return d
}

// errorCode returns the code of an error reply, or "" for another reply.
func errorCode(m map[string]any) string {
	if m["type"] != "error" {
		return ""
	}
	d, _ := m["data"].(map[string]any)
	code, _ := d["code"].(string)
	return code
}

// closeStatus waits for the socket to close and returns its close status (-1 without a close frame).
func closeStatus(c *websocket.Conn) websocket.StatusCode {
	for {
		if _, err := recv(c); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// eventually polls cond for up to 5 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
