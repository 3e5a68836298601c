package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graftrl/graftrl/rundir"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader on different goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveEnv runs `graftrl serve-env` with the arguments (and --addr 127.0.0.1:0) in process until
// the test ends, and returns the address it listens on.
func serveEnv(t *testing.T, args ...string) string {
	t.Helper()
	addr, _ := serveEnvOut(t, args...)
	return addr
}

// serveEnvOut is serveEnv also returning what the command prints.
func serveEnvOut(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	root := newRootCmd()
	var out syncBuffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"serve-env", "--addr", "127.0.0.1:0"}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve-env: %v", err)
		}
	})
	listening := regexp.MustCompile(`on ws://([0-9.:]+)/ws`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			return m[1], &out
		}
		select {
		case err := <-done:
			done <- err // for the cleanup, which waits for it
			t.Fatalf("serve-env stopped: %v\n%s", err, out.String())
		default:
		}
	}
	t.Fatalf("serve-env did not start:\n%s", out.String())
	return "", nil
}

// The quickstart (128 episodes per iteration) trains against `graftrl serve-env` started with
// its default flags (64 sessions at most): the client holds no more sessions than the server
// lists in /metadata and runs the episodes in waves over them, so every episode runs and the
// run completes.
func TestQuickstartAgainstServeEnvDefaults(t *testing.T) {
	addr := serveEnv(t, "--env", "maze", "--set", "size=5", "--set", "labelled=true", "--set", "goal_hint=true")
	dir := t.TempDir()
	_, stderr, code := cli(t, "train", "--config", "../../configs/quickstart.yaml", "--set", "out_dir="+dir,
		"--set", "iterations=3", "--set", "env=openenv", "--set", "env.url=ws://"+addr)
	if code != 0 {
		t.Fatalf("train exited %d:\n%s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "quickstart", rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	iters := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["type"] != "train" {
			continue
		}
		iters++
		if m["errors"] != 0.0 {
			t.Errorf("iteration %v: %v errored episodes", m["iter"], m["errors"])
		}
	}
	if iters != 3 {
		t.Fatalf("%d training iterations in metrics.jsonl, want 3", iters)
	}
}

// serve-env's --help documents the body timeout and the connection cap with their defaults, and
// a connection cap below the session cap is refused (status 2).
func TestServeEnvLimitFlags(t *testing.T) {
	out, _, code := cli(t, "serve-env", "--help")
	for _, want := range []string{"--body-timeout duration", "(default 10s)", "--max-connections int", "--max-sessions + 64"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("serve-env --help (status %d) lacks %q:\n%s", code, want, out)
		}
	}
	_, _, err := cliErr(t, "serve-env", "--env", "maze", "--max-sessions", "4", "--max-connections", "3")
	if exitStatus(err) != 2 || !strings.Contains(fmt.Sprint(err), "--max-connections 3 is below --max-sessions 4") {
		t.Errorf("--max-connections below --max-sessions: status %d, %v", exitStatus(err), err)
	}
}

// A listen address no listener could take is refused input (status 2), naming the flag and what
// is allowed; a port another process holds is the machine's fault (status 1).
func TestServeEnvBadAddr(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1:99999", `--addr "127.0.0.1:99999": port "99999" is out of range`},
		{"127.0.0.1:-1", `port "-1" is out of range`},
		{"127.0.0.1", `--addr "127.0.0.1" is not host:port`},
	} {
		_, _, err := cliErr(t, "serve-env", "--env", "maze", "--addr", tc.addr)
		if exitStatus(err) != exitConfig || !strings.Contains(fmt.Sprint(err), tc.want) || !strings.Contains(fmt.Sprint(err), "a port from 0 to 65535") {
			t.Errorf("--addr %s: status %d, %v; want 2 mentioning %q", tc.addr, exitStatus(err), err, tc.want)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, _, err := cliErr(t, "serve-env", "--env", "maze", "--addr", ln.Addr().String()); exitStatus(err) != exitError || !strings.Contains(fmt.Sprint(err), "address already in use") {
		t.Errorf("--addr of a port in use: status %d, %v; want 1", exitStatus(err), err)
	}
}

// hostStatus is the status of GET http://addr/health sent with the given Host header.
func hostStatus(t *testing.T, addr, host string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/health", nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// serveEnvErr runs `graftrl serve-env` with the arguments and returns its error; one that starts
// serving instead of refusing is stopped after five seconds (and returns nil).
func serveEnvErr(t *testing.T, args ...string) error {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"serve-env"}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return root.ExecuteContext(ctx)
}

// --allow-remote without a token is refused (status 2) naming --token, $GRAFTRL_SERVE_TOKEN and
// --insecure; --insecure alone is refused too. With --insecure the server starts and warns in
// capitals that it has no token; with the token from the environment it starts without the
// warning. Either way a remote-allowed server takes any Host, while a loopback one refuses a
// Host that does not name loopback (DNS rebinding) with 403.
func TestServeEnvRemoteNeedsToken(t *testing.T) {
	t.Setenv(tokenEnvVar, "")
	err := serveEnvErr(t, "--env", "maze", "--addr", "127.0.0.1:0", "--allow-remote")
	for _, want := range []string{"--allow-remote without a bearer token", "--token", "$" + tokenEnvVar, "--insecure"} {
		if exitStatus(err) != exitConfig || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("--allow-remote without a token: status %d, %v; want 2 naming %q", exitStatus(err), err, want)
		}
	}
	err = serveEnvErr(t, "--env", "maze", "--addr", "127.0.0.1:0", "--insecure")
	if exitStatus(err) != exitConfig || !strings.Contains(fmt.Sprint(err), "--insecure only applies with --allow-remote") {
		t.Errorf("--insecure without --allow-remote: status %d, %v; want 2", exitStatus(err), err)
	}

	addr, out := serveEnvOut(t, "--env", "maze", "--allow-remote", "--insecure")
	if s := out.String(); !strings.Contains(s, "WARNING: --insecure") || !strings.Contains(s, "NO TOKEN") {
		t.Errorf("--allow-remote --insecure printed no warning:\n%s", s)
	}
	if code := hostStatus(t, addr, "graftrl.example:8000"); code != http.StatusOK {
		t.Errorf("--allow-remote: GET /health with Host graftrl.example: %d, want 200", code)
	}

	t.Setenv(tokenEnvVar, "s3cret")
	_, out = serveEnvOut(t, "--env", "maze", "--allow-remote")
	if s := out.String(); strings.Contains(s, "WARNING") || !strings.Contains(s, "bearer token required") {
		t.Errorf("--allow-remote with $%s: want no warning and a token required:\n%s", tokenEnvVar, s)
	}

	t.Setenv(tokenEnvVar, "")
	addr = serveEnv(t, "--env", "maze")
	if code := hostStatus(t, addr, "evil.example:8000"); code != http.StatusForbidden {
		t.Errorf("loopback server: GET /health with Host evil.example: %d, want 403", code)
	}
	if code := hostStatus(t, addr, addr); code != http.StatusOK {
		t.Errorf("loopback server: GET /health with Host %s: %d, want 200", addr, code)
	}
}

// serve-env's --set values are bounded as a run config's are: a second YAML document in a value
// (once silently dropped) and a value nested deeper than the options allow are refused (status
// 2) naming the flag, before any server starts.
func TestServeEnvSetShape(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"size=5\n---\n7", "a second YAML document"},
		{"size=" + strings.Repeat("[", 200) + strings.Repeat("]", 200), "nested deeper than 64"},
	} {
		_, _, err := cliErr(t, "serve-env", "--env", "maze", "--addr", "127.0.0.1:0", "--set", c.set)
		if exitStatus(err) != 2 || !strings.Contains(fmt.Sprint(err), "--set") || !strings.Contains(fmt.Sprint(err), c.want) {
			t.Errorf("--set %.20q: status %d, %v; want 2 and %q", c.set, exitStatus(err), err, c.want)
		}
	}
}
