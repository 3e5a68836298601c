package config

import (
	"errors"
	"testing"
)

// The config loader never panics: any bytes and any --set override give a config that validates
// or a *Error.
func FuzzConfigParse(f *testing.F) {
	f.Add([]byte(minimalYAML+"iterations: 2\ntasks: {train: 4, per_iter: 2}\n"), "update.epochs=2")
	f.Add([]byte(minimalYAML+"env: maze\n"), "env.size=6")
	f.Add([]byte("name: x\nestimator: {name: graft, gamma: 0.9}\n"), "estimator=gigpo")
	f.Add([]byte("name: [\n"), "")
	f.Add([]byte("name: a\npolicy: 3\n"), "policy.d_model=x")
	f.Fuzz(func(t *testing.T, data []byte, override string) {
		var sets []string
		if override != "" {
			sets = []string{override}
		}
		cfg, err := Parse("fuzz.yaml", data, sets)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *Error", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that does not validate: %v", err)
		}
		if _, err := Parse("resolved.yaml", cfg.YAML(), nil); err != nil {
			t.Fatalf("the resolved config does not parse again: %v", err)
		}
	})
}
