package openenv_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/graftrl/graftrl/envs/openenv"
)

// wsRaw is a WebSocket session opened by hand over TCP, to send frames no client library would.
type wsRaw struct {
	net.Conn
	r *bufio.Reader // what the server sent after its 101 response
}

func (c *wsRaw) Read(p []byte) (int, error) { return c.r.Read(p) }

// rawSession opens a WebSocket session on the server's /ws by hand.
func rawSession(t *testing.T, url string) *wsRaw {
	t.Helper()
	c := rawConn(t, url)
	if _, err := io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("websocket handshake: %v %v", resp, err)
	}
	c.SetReadDeadline(time.Time{})
	return &wsRaw{Conn: c, r: r}
}

// clientFrame is a masked client frame (with a zero mask key, so the payload goes as it is):
// FIN and the opcode, a header declaring n payload bytes, then the payload given (maybe less).
func clientFrame(fin bool, op byte, n uint64, payload string) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	h := []byte{b0}
	switch {
	case n < 126:
		h = append(h, 0x80|byte(n))
	case n <= 0xffff:
		h = append(h, 0x80|126, byte(n>>8), byte(n))
	default:
		h = binary.BigEndian.AppendUint64(append(h, 0x80|127), n)
	}
	return append(append(h, 0, 0, 0, 0), payload...)
}

// closeCode finds the close frame among the (unmasked) server frames and returns its status code,
// or -1 when there is none.
func closeCode(data string) int {
	b := []byte(data)
	for len(b) >= 2 {
		n, at := uint64(b[1]&0x7f), 2
		switch n {
		case 126:
			if len(b) < 4 {
				return -1
			}
			n, at = uint64(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			if len(b) < 10 {
				return -1
			}
			n, at = binary.BigEndian.Uint64(b[2:]), 10
		}
		if uint64(len(b)-at) < n {
			return -1
		}
		if b[0]&0x0f == 8 && n >= 2 {
			return int(binary.BigEndian.Uint16(b[at:]))
		}
		b = b[at+int(n):]
	}
	return -1
}

// healthy reports whether GET /health answers 200 within a second.
func healthy(url string) bool {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(httpURL(url) + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestHugeFrameHeaders: 128 WebSocket connections (every connection the default caps allow) that
// each send a frame header declaring a 1 TiB message and then go silent are closed at once with
// status 1009, the header being checked against the message cap before any payload is awaited,
// so /health keeps answering. Before, they held every connection for the idle timeout (here an
// hour) and every route answered 503.
func TestHugeFrameHeaders(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", IdleTimeout: time.Hour, BodyTimeout: time.Hour})
	conns := make([]*wsRaw, 128)
	for i := range conns {
		conns[i] = rawSession(t, url)
	}
	for _, c := range conns {
		c.Write(clientFrame(true, 1, 1<<40, "")) // a connection refused at capacity may be closed already
	}
	eventually(t, "/health to answer while 128 huge frames stall", func() bool { return healthy(url) })
	codes := map[int]int{}
	for _, c := range conns {
		codes[closeCode(readUntilClosed(t, c, 10*time.Second))]++
	}
	// Connections beyond the 64 sessions were refused with CAPACITY_REACHED and 1013 before
	// their frame; every session's frame closed it with 1009.
	if codes[1009] == 0 || codes[1009]+codes[1013] != len(conns) {
		t.Errorf("close statuses %v; want 1009 for each session (1013 for those refused at capacity)", codes)
	}
}

// TestStalledFrame: a frame whose bytes stop arriving, or a fragmented message whose next frame
// does not come, closes the session after the body timeout with status 1008, as an HTTP body
// that stalls gets 408; a session idle between messages is left to the idle timeout.
func TestStalledFrame(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze", IdleTimeout: time.Hour, BodyTimeout: 300 * time.Millisecond})
	for name, frame := range map[string][]byte{
		"a frame's payload":          clientFrame(true, 1, 100, `{"type":`),
		"a frame's header":           clientFrame(true, 1, 1000, "")[:3],
		"a fragmented message's end": clientFrame(false, 1, 8, `{"type":`),
	} {
		c := rawSession(t, url)
		start := time.Now()
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		got := readUntilClosed(t, c, 10*time.Second)
		if code := closeCode(got); code != 1008 {
			t.Errorf("%s stalled: close status %d, want 1008", name, code)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("%s stalled: closed after %s, before the body timeout", name, d)
		}
	}
	// Idle between messages for longer than the body timeout, then a message: answered.
	c := dialRaw(t, url, nil)
	ask(t, c, `{"type":"reset","data":{"seed":1}}`)
	time.Sleep(time.Second)
	if m := ask(t, c, `{"type":"step","data":{"message":"up"}}`); m["type"] != "observation" {
		t.Errorf("a step after an idle second: %v", m)
	}
	if !healthy(url) {
		t.Error("/health does not answer")
	}
}

// TestInvalidUTF8Text: a text message that is not valid UTF-8 closes the session with 1007
// (RFC 6455, section 8.1).
func TestInvalidUTF8Text(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	c := dialRaw(t, url, nil)
	ask(t, c, `{"type":"reset","data":{"seed":1}}`)
	send(t, c, "{\"type\":\"step\",\"data\":{\"message\":\"up\xff\xfe\"}}")
	if s := closeStatus(c); s != websocket.StatusInvalidFramePayloadData {
		t.Errorf("close status %v, want %v", s, websocket.StatusInvalidFramePayloadData)
	}
}

// TestSyntaxErrorEchoesUTF8: a JSON syntax error names the offending character as it was sent
// (é, not the 'Ã' of its first byte read as Latin-1), over the WebSocket and over HTTP; a byte
// that starts no UTF-8 character is shown in hex.
func TestSyntaxErrorEchoesUTF8(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	c := dialRaw(t, url, nil)
	msg, _ := data(t, ask(t, c, `é`))["message"].(string)
	if !strings.Contains(msg, "invalid character 'é' looking for beginning of value") || strings.Contains(msg, "Ã") {
		t.Errorf("WebSocket error message %q, want it to name 'é'", msg)
	}
	if err := c.Write(t.Context(), websocket.MessageBinary, []byte{'{', 0xff}); err != nil {
		t.Fatal(err)
	}
	m, err := recv(c)
	d, _ := m["data"].(map[string]any)
	if msg, _ := d["message"].(string); err != nil || !strings.Contains(msg, `invalid character '\xFF'`) {
		t.Errorf("a stray byte: %v %v, want it shown as '\\xFF'", m, err)
	}
	resp := post(t, httpURL(url)+"/reset", `{"seed": é}`, nil)
	var body struct {
		Detail []struct{ Msg string } `json:"detail"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Detail) != 1 ||
		!strings.Contains(body.Detail[0].Msg, "invalid character 'é' looking for beginning of value") {
		t.Errorf("POST /reset: %s %+v %v, want 422 naming 'é'", resp.Status, body, err)
	}
}
