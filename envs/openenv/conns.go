package openenv

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// cappedListener refuses connections beyond max open ones: each is answered 503 and closed at
// once, so that a flood of idle connections cannot exhaust the server's file descriptors.
type cappedListener struct {
	net.Listener
	max  int64
	open atomic.Int64
	log  *slog.Logger
}

// Accept returns the next connection within the cap, refusing those beyond it on the way.
func (l *cappedListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &countedConn{Conn: conn, l: l}, nil
		}
		l.open.Add(-1)
		l.log.Debug("openenv: connection refused at the connection cap", "remote", conn.RemoteAddr(), "max", l.max)
		go refuse(conn, l.max)
	}
}

// refuse answers a connection beyond the cap with 503 and closes it.
func refuse(conn net.Conn, limit int64) {
	defer conn.Close()
	body := fmt.Sprintf(`{"detail":"too many connections: the server holds at most %d; retry later"}`, limit)
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// countedConn gives its slot back to the listener when closed.
type countedConn struct {
	net.Conn
	l    *cappedListener
	once sync.Once
}

// Close closes the connection and releases its slot (once).
func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// Reasons a guarded WebSocket read fails; the session closes with the matching status.
var (
	// errMessageTooBig: a data frame declares a length that takes its message past the cap
	// (closed with 1009 before any of its payload is awaited).
	errMessageTooBig = errors.New("websocket message over the size limit")
	// errFrameStalled: the rest of a frame, or of a fragmented message, did not arrive within
	// the body timeout (closed with 1008, as an HTTP body that stalls gets 408).
	errFrameStalled = errors.New("websocket frame not received in time")
)

// guardedWriter hands the WebSocket library a connection read through a frameGuard when the
// library hijacks the request's connection.
type guardedWriter struct {
	http.ResponseWriter
	limit   int64
	timeout time.Duration // ≤ 0: none
}

// Hijack takes the connection over from the HTTP server. The bytes the server had already
// buffered beyond the upgrade request are read through the guard first, then the connection.
func (w *guardedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	buffered, _ := brw.Reader.Peek(brw.Reader.Buffered())
	g := &frameGuard{Conn: conn, r: io.MultiReader(bytes.NewReader(bytes.Clone(buffered)), conn), limit: w.limit, timeout: w.timeout}
	return g, bufio.NewReadWriter(bufio.NewReader(g), brw.Writer), nil
}

// frameGuard reads a WebSocket connection's frame headers as the bytes pass to the WebSocket
// library, which checks the size of a message only as its payload arrives. A data frame whose
// declared length takes its message past the limit fails the read at once (errMessageTooBig),
// and so does a frame or fragmented message whose next bytes take longer than the timeout
// (errFrameStalled); between messages no deadline applies (the session's idle timeout does).
// After such a failure every read fails the same way. Reads come from one goroutine at a time
// (the library's read lock).
type frameGuard struct {
	net.Conn
	r       io.Reader // what the HTTP server had buffered, then the connection
	limit   int64
	timeout time.Duration

	err      error    // sticky failure
	hdr      [14]byte // the current frame header, as far as it arrived
	hlen     int
	payload  uint64 // payload bytes of the current frame still to come
	msg      uint64 // payload bytes declared so far by the current data message's frames
	inMsg    bool   // a data message whose final frame has not arrived
	deadline bool   // a read deadline is set on the connection
}

// Read passes the connection's bytes on, following the frames they make.
func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	midFrame := g.hlen > 0 || g.payload > 0 || g.inMsg
	if g.timeout > 0 && (midFrame || g.deadline) {
		var t time.Time // none between messages
		if midFrame {
			t = time.Now().Add(g.timeout)
		}
		g.Conn.SetReadDeadline(t)
		g.deadline = midFrame
	}
	n, err := g.r.Read(p)
	start := 0 // where the current header began in p (0: in an earlier read)
	for i := 0; i < n; {
		if g.payload > 0 {
			k := min(uint64(n-i), g.payload)
			i += int(k)
			g.payload -= k
			continue
		}
		if g.hlen == 0 {
			start = i
		}
		g.hdr[g.hlen] = p[i]
		g.hlen++
		i++
		if g.hlen < 2 || g.hlen < headerLen(g.hdr[1]) {
			continue
		}
		g.hlen, g.payload = 0, payloadLen(g.hdr[:])
		if op := g.hdr[0] & 0x0f; op >= 8 {
			continue // a control frame (the library refuses one over 125 bytes)
		} else if op != 0 {
			g.msg = 0 // text or binary: a new message; 0 continues one
		}
		g.msg += min(g.payload, math.MaxUint64-g.msg)
		g.inMsg = g.hdr[0]&0x80 == 0
		if g.msg > uint64(g.limit) {
			g.err = fmt.Errorf("%w: a frame declares a message of %d bytes, more than the %d allowed", errMessageTooBig, g.msg, g.limit)
			if start > 0 {
				return start, nil // the messages before this frame are read first
			}
			return 0, g.err
		}
	}
	if err != nil && midFrame && errors.Is(err, os.ErrDeadlineExceeded) {
		g.err = fmt.Errorf("%w: no byte of the frame for %s", errFrameStalled, g.timeout)
		return n, g.err
	}
	return n, err
}

// headerLen is the length of a frame header given its second byte: 2, the extended length (2 or
// 8 bytes) and the masking key (4 bytes) when present.
func headerLen(b1 byte) int {
	n := 2
	switch b1 & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&0x80 != 0 {
		n += 4
	}
	return n
}

// payloadLen is the payload length a complete frame header declares.
func payloadLen(h []byte) uint64 {
	switch n := h[1] & 0x7f; n {
	case 126:
		return uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		return binary.BigEndian.Uint64(h[2:10])
	default:
		return uint64(n)
	}
}
