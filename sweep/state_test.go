package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
)

// Check tells finished runs (summary.json reaching the budget, config.yaml the sweep's) from
// pending and unfinished ones.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: st\nbase: tiny.yaml\ngrid:\n  seed: [1]\nset: [env_steps=30]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	sd := c.Dir()
	r := &m.Runs[0]
	runDir := filepath.Join(sd, r.RunPath())
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(runDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want State, detail string) {
		t.Helper()
		st := Check(sd, r, "")
		if st.State != want || !strings.Contains(st.Detail, detail) {
			t.Errorf("state %s (%s), want %s (%s)", st.State, st.Detail, want, detail)
		}
	}
	check(Pending, "")
	cfg, _ := config.Load(filepath.Join(sd, r.Config), nil)
	write(rundir.ConfigFile, string(cfg.YAML()))
	write(rundir.MetricsFile, `{"type":"eval","iter":0,"env_steps":0,"eval/success":0.25}`+"\n"+`{"type":"train","iter":1,"env_steps":12}`+"\n")
	check(Unfinished, "no summary.json")
	if st := Check(sd, r, ""); st.Iter != 1 || st.EnvSteps != 12 || st.Metric != 0.25 {
		t.Errorf("progress %+v", st)
	}
	write(rundir.SummaryFile, `{"iterations": 2, "env_steps": 24}`)
	check(Unfinished, "stopped at iteration 2, 24 env steps, short of its budget of 30 env steps")
	write(rundir.SummaryFile, `{"iterations": 3, "env_steps": 36}`)
	check(Finished, "")
	write(rundir.SummaryFile, `{"iterations": 4, "env_steps": 20}`) // the iteration cap counts too
	check(Finished, "")
	// A run written from another working directory (different out_dir) is the same run.
	cfg.OutDir = "elsewhere"
	write(rundir.ConfigFile, string(cfg.YAML()))
	check(Finished, "")
	cfg.Update.Epochs = 2
	write(rundir.ConfigFile, string(cfg.YAML()))
	check(Unfinished, "config.yaml differs from the sweep's configs/maze-grpo-s1.yaml (update.epochs: 1 → 2)")
	write(rundir.SummaryFile, `{"iter`)
	check(Unfinished, "summary.json is unreadable")
}
