package trainer

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/graftrl/graftrl/config"
	_ "github.com/graftrl/graftrl/envs/openenv"
)

// Validating an openenv config is offline: the options are checked (a missing url is still an
// error naming it) but no server is contacted. The server is reached when the run starts, where
// an unreachable one is a config.Error naming the env, the URL and what failed.
func TestValidateOpenEnvOffline(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.NotFound(w, nil)
	}))
	defer srv.Close()
	for _, url := range []string{"http://127.0.0.1:1", srv.URL} {
		sets := []string{"env=openenv", "env.url=" + url, "env.timeout=2", "env.connect_retries=0", "out_dir=" + t.TempDir()}
		cfg, err := config.Parse("remote.yaml", []byte(tinyYAML), sets)
		if err != nil {
			t.Fatalf("%s: Parse: %v", url, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: Validate: %v", url, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("validating made %d requests to the server", n)
	}

	cfg, err := config.Parse("remote.yaml", []byte(tinyYAML), []string{"env=openenv", "env.url=http://127.0.0.1:1", "env.timeout=2", "out_dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(cfg, Options{Out: io.Discard})
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("New: want a *config.Error, got %T: %v", err, err)
	}
	for _, w := range []string{"env openenv", "http://127.0.0.1:1/metadata", "metadata"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("New: error %q does not mention %q", err, w)
		}
	}

	if _, err := config.Parse("remote.yaml", []byte(tinyYAML), []string{"env=openenv"}); err == nil || !strings.Contains(err.Error(), `"url"`) {
		t.Fatalf("an openenv config without url: %v, want an error naming url", err)
	}
}
