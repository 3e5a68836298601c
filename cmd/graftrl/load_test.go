package main

import (
	"testing"

	"github.com/graftrl/graftrl/config"
)

// graftrl train reads its config file once: the run name that --estimator extends and the
// config the run uses come from the same bytes.
func TestTrainReadsConfigOnce(t *testing.T) {
	for _, tc := range []struct {
		o    trainOptions
		name string
	}{
		{trainOptions{config: "../../configs/quickstart.yaml"}, "quickstart"},
		{trainOptions{config: "../../configs/quickstart.yaml", estimator: "graft",
			sets: []string{"estimator.gamma=0.9", "iterations=3"}}, "quickstart-graft"},
		{trainOptions{config: "../../configs/quickstart.yaml", estimator: "gigpo", sets: []string{"name=x"}}, "x"},
	} {
		reads := 0
		o := tc.o
		o.set = map[string]bool{}
		o.readFile = func(path string) ([]byte, error) {
			reads++
			return config.ReadFile(path)
		}
		cfg, _, err := o.loadConfig()
		if err != nil {
			t.Fatal(err)
		}
		if reads != 1 || cfg.Name != tc.name {
			t.Errorf("%+v: %d reads, run name %q; want 1 read and %q", tc.o, reads, cfg.Name, tc.name)
		}
	}
}
