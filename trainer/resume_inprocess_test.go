package trainer

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
)

func TestResumeInProcess(t *testing.T) {
	want, _ := straightRun(t)
	dir := t.TempDir()
	cfg, _ := config.Parse("r.yaml", []byte(resumeYAML), []string{"out_dir=" + dir})
	tr, _ := New(cfg, Options{Out: io.Discard})
	ctx, cancel := context.WithCancel(context.Background())
	tr.afterIteration = func() {
		if tr.iter == 5 {
			cancel()
		}
	}
	tr.Run(ctx)
	tr, _ = New(cfg, Options{Out: io.Discard, Resume: true})
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "r", rundir.MetricsFile))
	if !bytes.Equal(got, want) {
		gl := bytes.Split(got, []byte("\n"))
		wl := bytes.Split(want, []byte("\n"))
		for i := range gl {
			if i < len(wl) && !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d differs:\n%s\n%s", i, gl[i], wl[i])
			}
		}
		t.Fatal("resumed metrics differ")
	}
}
