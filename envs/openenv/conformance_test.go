package openenv_test

import (
	"context"
	"testing"

	"github.com/graftrl/graftrl/envs"
	_ "github.com/graftrl/graftrl/envs/all"
	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/openenv"
)

// startServer serves on a loopback port chosen by the kernel (unless opts.Addr is set) until the
// test ends, and returns the server and its ws:// URL.
func startServer(t testing.TB, opts openenv.ServerOptions) (*openenv.Server, string) {
	t.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	srv, err := openenv.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
	})
	return srv, "ws://" + ln.Addr().String()
}

// declarations are what the registered environments declare to the conformance suite with their
// default options (as in envs/all); the wire must not change any of it.
func declarations() map[string][]envtest.Option {
	return map[string][]envtest.Option{
		"frozenlake": {envtest.Stochastic()},
	}
}

// TestConformanceThroughOpenEnv runs the conformance suite on every registered environment played
// through the openenv client against graftrl's own server: the wire must carry every observation,
// reward, flag, distance, state key and error exactly.
func TestConformanceThroughOpenEnv(t *testing.T) {
	for _, name := range envs.Names() {
		if name == openenv.Name {
			continue
		}
		t.Run(name, func(t *testing.T) {
			_, url := startServer(t, openenv.ServerOptions{Env: name, MaxSessions: 256})
			opts := append([]envtest.Option{envtest.MaxVocabulary(60)}, declarations()[name]...)
			envtest.Run(t, func() (envs.Env, error) {
				return envs.New(openenv.Name, envs.Options{"url": url})
			}, opts...)
		})
	}
}
