package openenv_test

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/envs/openenv"
)

// trickleTimeout is the body or idle timeout of the slow-sender tests, and trickleGap the pause
// between the pieces a slow sender writes: well inside the timeout, so that a deadline moved by
// each piece would never expire.
const (
	trickleTimeout = 200 * time.Millisecond
	trickleGap     = 40 * time.Millisecond
)

// trickle writes the pieces to c one every trickleGap, in the background, until they run out,
// a write fails (the server closed the connection) or the test ends.
func trickle(t *testing.T, c net.Conn, pieces [][]byte) {
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		for _, p := range pieces {
			if _, err := c.Write(p); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(trickleGap):
			}
		}
	}()
}

// bytewise splits b into pieces of one byte.
func bytewise(b []byte) [][]byte {
	pieces := make([][]byte, len(b))
	for i := range b {
		pieces[i] = b[i : i+1]
	}
	return pieces
}

// closedBy reads what the server sends on c until it closes the connection, and fails the test
// when that has not happened by the deadline.
func closedBy(t *testing.T, c net.Conn, deadline time.Time, what string) string {
	t.Helper()
	c.SetReadDeadline(deadline)
	data, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("%s: connection still open at three times the %s timeout (received %q)", what, trickleTimeout, data)
	}
	return string(data)
}

// slowMessages are WebSocket messages sent slowly, piece by piece, each piece well within the
// body timeout of the one before.
func slowMessages() map[string][][]byte {
	const msg = `{"type":"reset","data":{"seed":1}}`
	// The message in fragments of one byte each, a ping after every fourth: each frame
	// arrives whole, but the message never completes in time.
	var fragments [][]byte
	for i := range len(msg) {
		op := byte(0) // continuation
		if i == 0 {
			op = 1 // text
		}
		fragments = append(fragments, clientFrame(i == len(msg)-1, op, 1, msg[i:i+1]))
		if i%4 == 3 {
			fragments = append(fragments, clientFrame(true, 9, 0, ""))
		}
	}
	return map[string][][]byte{
		"a frame trickled a byte at a time":       bytewise(clientFrame(true, 1, uint64(len(msg)), msg)),
		"a message trickled fragment by fragment": fragments,
	}
}

// TestSlowSenderClosedAtBodyTimeout: a WebSocket message that arrives a byte at a time, or a
// fragment at a time, is closed with status 1008 within about the body timeout of its first
// byte, however steadily its bytes come, and its session is freed. Two such senders filled the
// server's two sessions (a third client got CAPACITY_REACHED); once they are closed a normal
// client gets a session. Before, each byte moved the deadline on and the two held the server
// for as long as they kept sending.
func TestSlowSenderClosedAtBodyTimeout(t *testing.T) {
	for name, pieces := range slowMessages() {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			srv, url := startServer(t, openenv.ServerOptions{Env: "maze", MaxSessions: 2, IdleTimeout: time.Hour, BodyTimeout: trickleTimeout})
			slow := []*wsRaw{rawSession(t, url), rawSession(t, url)}
			eventually(t, "both sessions to open", func() bool { return srv.ActiveSessions() == 2 })
			if m, err := recv(dialRaw(t, url, nil)); errorCode(m) != "CAPACITY_REACHED" {
				t.Fatalf("a third client while two slow ones hold the sessions: %v %v, want CAPACITY_REACHED", m, err)
			}
			start := time.Now()
			for _, c := range slow {
				trickle(t, c, pieces)
			}
			for i, c := range slow {
				got := closedBy(t, c, start.Add(3*trickleTimeout), name)
				if code := closeCode(got); code != 1008 {
					t.Errorf("slow sender %d: close status %d, want 1008 (received %q)", i, code, got)
				}
			}
			eventually(t, "the slow senders' sessions to be freed", func() bool { return srv.ActiveSessions() == 0 })
			c := dialRaw(t, url, nil)
			if m := ask(t, c, `{"type":"reset","data":{"seed":1}}`); m["type"] != "observation" {
				t.Errorf("a normal client after the slow ones were closed: %v", m)
			}
		})
	}
}

// TestSlowSenderClosedAtIdleTimeout: with no body timeout, a session whose next message only
// trickles in, or that sends nothing but pings, is closed with status 1008 within about the
// idle timeout of its last reply: neither part of a message nor a control frame counts as
// activity. Before, the idle timeout fired but its close handshake waited seconds for the busy
// reader.
func TestSlowSenderClosedAtIdleTimeout(t *testing.T) {
	pieces := slowMessages()
	var pings [][]byte
	for range 50 {
		pings = append(pings, clientFrame(true, 9, 0, ""))
	}
	pieces["pings only"] = pings
	for name, pieces := range pieces {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			srv, url := startServer(t, openenv.ServerOptions{Env: "maze", IdleTimeout: trickleTimeout, BodyTimeout: -1})
			c := rawSession(t, url)
			start := time.Now()
			trickle(t, c, pieces)
			got := closedBy(t, c, start.Add(3*trickleTimeout), name)
			if code := closeCode(got); code != 1008 {
				t.Errorf("close status %d, want 1008 (received %q)", code, got)
			}
			eventually(t, "the session to be freed", func() bool { return srv.ActiveSessions() == 0 })
		})
	}
}

// TestSlowHTTPRequestClosedAtBodyTimeout: an HTTP request whose headers, or whose body, arrive a
// byte at a time is cut off within about the body timeout of its first byte (the body with
// 408), however steadily the bytes come.
func TestSlowHTTPRequestClosedAtBodyTimeout(t *testing.T) {
	body := `{"seed":1,"episode_id":"slow-sender"}`
	head := "POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n"
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", BodyTimeout: trickleTimeout})
	for _, tc := range []struct {
		name   string
		pieces [][]byte
		want   string
	}{
		{"a body trickled a byte at a time", append([][]byte{[]byte(head)}, bytewise([]byte(body))...), "HTTP/1.1 408"},
		{"headers trickled a byte at a time", bytewise([]byte(head + body)), ""},
	} {
		c := rawConn(t, url)
		start := time.Now()
		trickle(t, c, tc.pieces)
		got := closedBy(t, c, start.Add(3*trickleTimeout), tc.name)
		if !strings.HasPrefix(got, tc.want) || strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Errorf("%s: reply %q, want %q", tc.name, got, tc.want)
		}
	}
	if resp := get(t, httpURL(url)+"/health", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/health after the slow requests: %s", resp.Status)
	}
}
