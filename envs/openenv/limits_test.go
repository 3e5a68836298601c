package openenv_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/envs/openenv"
)

// rawConn opens a TCP connection to a server URL (ws://host:port).
func rawConn(t *testing.T, url string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "ws://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readUntilClosed reads what the server sends until it closes the connection; it fails the test
// if the connection is still open after limit.
func readUntilClosed(t *testing.T, c net.Conn, limit time.Duration) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	data, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection still open after %s (received %q)", limit, data)
	}
	return string(data)
}

// TestBodyTimeout: a request whose body never arrives gets 408 and its connection is closed after
// the body timeout, while the server goes on answering others.
func TestBodyTimeout(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", BodyTimeout: 300 * time.Millisecond})
	c := rawConn(t, url)
	// Headers promising 100 bytes of body, then only the first few.
	if _, err := io.WriteString(c, "POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"seed\":"); err != nil {
		t.Fatal(err)
	}
	// Without the timeout the server would wait for the rest for ever (the test's limit is far
	// above the timeout, and far below forever).
	got := readUntilClosed(t, c, 10*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 408") {
		t.Errorf("reply to a body that never arrives: %q, want 408", got)
	}
	if resp := get(t, httpURL(url)+"/health", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/health after the slow body: %s", resp.Status)
	}
}

// TestConnectionCap: connections beyond MaxConnections are answered 503 and closed at once, those
// within it are served, and a closed connection frees its place.
func TestConnectionCap(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", MaxSessions: 1, MaxConnections: 2})
	held := []net.Conn{rawConn(t, url), rawConn(t, url)}
	// The cap counts accepted connections: make sure both are accepted before the third.
	for _, c := range held {
		if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("connection within the cap: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	extra := rawConn(t, url)
	got := readUntilClosed(t, extra, 10*time.Second)
	if got != "" && !strings.HasPrefix(got, "HTTP/1.1 503") {
		t.Errorf("reply beyond the cap: %q, want 503 or a closed connection", got)
	}
	held[0].Close()
	eventually(t, "a freed connection to admit a new one", func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(url, "ws://"))
		if err != nil {
			return false
		}
		defer c.Close()
		io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && resp.StatusCode == http.StatusOK
	})
	if _, err := openenv.NewServer(openenv.ServerOptions{Env: "maze", MaxSessions: 4, MaxConnections: 3}); err == nil ||
		!strings.Contains(err.Error(), "below max sessions") {
		t.Errorf("MaxConnections below MaxSessions: %v, want an error", err)
	}
}
