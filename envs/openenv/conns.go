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
	// errFrameStalled: a frame, or a fragmented message with all its frames, was not received
	// in full within the body timeout of its first byte (closed with 1008, as an HTTP request
	// that is not received in time gets 408).
	errFrameStalled = errors.New("websocket message not received in time")
	// errIdle: no complete message arrived within the idle timeout of the previous reply
	// (closed with 1008).
	errIdle = errors.New("websocket session idle")
)

// guardedWriter hands the WebSocket library a connection read through a frameGuard when the
// library hijacks the request's connection.
type guardedWriter struct {
	http.ResponseWriter
	limit   int64
	timeout time.Duration // ≤ 0: none
	guard   *frameGuard   // set by Hijack
}

// Hijack takes the connection over from the HTTP server. The bytes the server had already
// buffered beyond the upgrade request are read through the guard first, then the connection.
func (w *guardedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	buffered, _ := brw.Reader.Peek(brw.Reader.Buffered())
	w.guard = &frameGuard{Conn: conn, r: io.MultiReader(bytes.NewReader(bytes.Clone(buffered)), conn), limit: w.limit, timeout: w.timeout}
	return w.guard, bufio.NewReadWriter(bufio.NewReader(w.guard), brw.Writer), nil
}

// frameGuard reads a WebSocket connection's frame headers as the bytes pass to the WebSocket
// library, which checks the size of a message only as its payload arrives and has no deadline
// of its own. A data frame whose declared length takes its message past the limit fails the
// read at once (errMessageTooBig). A frame, or a fragmented message with its interleaved
// control frames, must arrive in full within the timeout of its first byte (errFrameStalled):
// that deadline is set once and never moved by the bytes that follow, so a peer trickling a
// byte at a time cannot hold the connection longer than a silent one. Each wait for a message
// is also bounded by the idle deadline that the session sets before it (errIdle), which a
// partial message does not move either. After such a failure every read fails the same way,
// so that a close handshake does not wait on the peer. Reads come from one goroutine at a time
// (the library's read lock).
type frameGuard struct {
	net.Conn
	r       io.Reader // what the HTTP server had buffered, then the connection
	limit   int64
	timeout time.Duration

	// Set by await on the session's goroutine, read by Read, which may run on another one
	// (the close handshake of a shutdown).
	mu      sync.Mutex
	idleAt  time.Time // the end of the current wait for a message (zero: none)
	waiting time.Time // when the current wait for a message began

	err     error    // sticky failure
	hdr     [14]byte // the current frame header, as far as it arrived
	hlen    int
	payload uint64    // payload bytes of the current frame still to come
	msg     uint64    // payload bytes declared so far by the current data message's frames
	inMsg   bool      // a data message whose final frame has not arrived
	since   time.Time // when the first byte of the unfinished frame or message arrived
	set     time.Time // the read deadline last set on the connection
}

// await starts the wait for the next message: it must arrive in full by idleAt (zero: no
// bound but the body timeout of its first byte). A message that had begun to arrive while the
// previous one was handled gets its body timeout from now on, since its sender was waiting for
// the reply.
func (g *frameGuard) await(idleAt time.Time) {
	g.mu.Lock()
	g.idleAt, g.waiting = idleAt, time.Now()
	g.mu.Unlock()
}

// pending reports whether part of a frame or data message has arrived.
func (g *frameGuard) pending() bool { return g.hlen > 0 || g.payload > 0 || g.inMsg }

// Read passes the connection's bytes on, following the frames they make.
func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	g.mu.Lock()
	idleAt, waiting := g.idleAt, g.waiting
	g.mu.Unlock()
	wasPending := g.pending()
	if wasPending && g.since.Before(waiting) {
		g.since = waiting
	}
	// The earlier of the idle deadline and the pending message's own; stalled tells which.
	deadline, stalled := idleAt, false
	if wasPending && g.timeout > 0 {
		if t := g.since.Add(g.timeout); deadline.IsZero() || t.Before(deadline) {
			deadline, stalled = t, true
		}
	}
	if !deadline.Equal(g.set) {
		g.Conn.SetReadDeadline(deadline)
		g.set = deadline
	}
	n, err := g.r.Read(p)
	start := 0     // where the current header began in p (0: in an earlier read)
	ended := false // a frame or message ended in this read: what follows is new
	for i := 0; i < n; {
		if g.payload > 0 {
			k := min(uint64(n-i), g.payload)
			i += int(k)
			g.payload -= k
			ended = ended || !g.pending()
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
		if op := g.hdr[0] & 0x0f; op < 8 {
			if op != 0 {
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
		} // else a control frame (the library refuses one over 125 bytes)
		ended = ended || !g.pending()
	}
	if g.pending() && (ended || !wasPending) {
		g.since = time.Now() // the first byte of a frame or message not yet complete
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		if stalled {
			g.err = fmt.Errorf("%w: the frame or message was not received in full within %s of its first byte", errFrameStalled, g.timeout)
		} else {
			g.err = fmt.Errorf("%w: no complete message by the idle deadline", errIdle)
		}
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
