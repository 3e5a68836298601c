package openenv_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/openenv"
)

// getHost is GET url sent with the given Host header, which need not name the address dialled.
func getHost(t *testing.T, url, host string, h http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if h != nil {
		req.Header = h
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestHostHeaderLoopbackOnly: a server bound to loopback answers only requests whose Host names
// loopback (localhost, 127.0.0.1, [::1], with or without the port); any other name, which is
// what a page whose domain was rebound to 127.0.0.1 sends, gets 403 with a {"detail": ...}
// body naming the Host, on every route and on the WebSocket handshake. graftrl's client, given
// a localhost URL, plays as before. A server allowed remote clients (with a token) takes any
// Host.
func TestHostHeaderLoopbackOnly(t *testing.T) {
	_, url := startServer(t, openenv.ServerOptions{Env: "maze"})
	base := httpURL(url)
	port := url[strings.LastIndex(url, ":")+1:]
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "localhost", "127.0.0.1", "[::1]", "LocalHost:" + port} {
		if resp := getHost(t, base+"/metadata", host, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /metadata with Host %s: %s, want 200", host, resp.Status)
		}
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port, "0.0.0.0:" + port, "10.0.0.1:" + port} {
		for _, route := range []string{"/health", "/metadata", "/schema", "/state"} {
			resp := getHost(t, base+route, host, nil)
			body := readJSON(t, resp)
			detail := jsonString(body["detail"])
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(detail, "not a loopback host") || !strings.Contains(detail, host) {
				t.Errorf("GET %s with Host %s: %s, detail %q; want 403 with a detail naming the Host", route, host, resp.Status, detail)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/reset", strings.NewReader(`{}`))
	req.Host = "evil.example:" + port
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Error(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /reset with Host evil.example: %s, want 403", resp.Status)
	}
	// The WebSocket handshake: a rebound page's Origin matches its Host, so the library's
	// origin check alone would let it through.
	_, wsResp, err := websocket.Dial(t.Context(), wsURL(url), &websocket.DialOptions{Host: "evil.example:" + port,
		HTTPHeader: http.Header{"Origin": {"http://evil.example:" + port}}})
	if err == nil || wsResp == nil || wsResp.StatusCode != http.StatusForbidden {
		status := "no response"
		if wsResp != nil {
			status = wsResp.Status
		}
		t.Errorf("WebSocket with Host evil.example: %s, %v; want 403", status, err)
	}
	for _, u := range []string{url, "ws://localhost:" + port} {
		e, err := envs.New(openenv.Name, envs.Options{"url": u})
		if err != nil {
			t.Fatalf("client on %s: %v", u, err)
		}
		if _, _, err := e.Reset(1); err != nil {
			t.Errorf("client on %s: %v", u, err)
		}
		envs.Close(e)
	}

	_, remote := startServer(t, openenv.ServerOptions{Env: "maze", AllowRemote: true, Token: "s3cret"})
	if resp := getHost(t, httpURL(remote)+"/metadata", "graftrl.example:8000", http.Header{"Authorization": {"Bearer s3cret"}}); resp.StatusCode != http.StatusOK {
		t.Errorf("a remote-allowed server, Host graftrl.example: %s, want 200", resp.Status)
	}
}

// TestRemoteNeedsToken: allowing remote clients without a bearer token is refused, naming the
// ways out (a token, or Insecure); with either the server starts.
func TestRemoteNeedsToken(t *testing.T) {
	_, err := openenv.NewServer(openenv.ServerOptions{Env: "maze", Addr: "0.0.0.0:0", AllowRemote: true})
	if err == nil || !strings.Contains(err.Error(), "without a bearer token") || !strings.Contains(err.Error(), "Token") || !strings.Contains(err.Error(), "Insecure") {
		t.Errorf("AllowRemote without a token: %v, want an error naming Token and Insecure", err)
	}
	for _, opts := range []openenv.ServerOptions{
		{Env: "maze", Addr: "0.0.0.0:0", AllowRemote: true, Token: "s3cret"},
		{Env: "maze", Addr: "0.0.0.0:0", AllowRemote: true, Insecure: true},
	} {
		if _, err := openenv.NewServer(opts); err != nil {
			t.Errorf("AllowRemote with token %q, insecure %v: %v", opts.Token, opts.Insecure, err)
		}
	}
}
