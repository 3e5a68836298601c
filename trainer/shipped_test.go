package trainer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	_ "github.com/graftrl/graftrl/envs/all"
)

// Every shipped env config loads, validates, names its env in its file name, and is a warm-started
// run on open tasks with a large held-out panel, for an env that has an expert.
func TestShippedEnvConfigs(t *testing.T) {
	files, err := filepath.Glob("../configs/envs/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"frozenlake", "keydoor", "maze", "shop", "sokoban", "toolcalc"}
	var got []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		got = append(got, name)
		t.Run(name, func(t *testing.T) {
			c, err := config.Load(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.Env.Name != name || c.Name != name {
				t.Errorf("env %q, run name %q in %s; want both %q", c.Env.Name, c.Name, f, name)
			}
			if !c.Tasks.Train.Open || c.Tasks.Eval < 128 || c.SFT.Demos == 0 {
				t.Errorf("tasks.train %v, tasks.eval %d, sft.demos %d; want open, >= 128, > 0",
					c.Tasks.Train, c.Tasks.Eval, c.SFT.Demos)
			}
			env, err := envs.New(c.Env.Name, c.Env.Options)
			if err != nil {
				t.Fatal(err)
			}
			defer envs.Close(env)
			if _, ok := envs.ExpertOf(env); !ok {
				t.Errorf("env %s has no expert, but its config warm-starts", name)
			}
		})
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("configs/envs holds %v, want %v", got, want)
	}
}
