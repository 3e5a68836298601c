package openenv

import (
	"fmt"
	"log/slog"
	"net"
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
