package shop

import (
	"errors"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

func TestConfigFromOptions(t *testing.T) {
	tests := []struct {
		name string
		opts envs.Options
		want Config
	}{
		{"defaults", nil, Config{Items: 6, Results: 3, MaxTurns: 12, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"larger", envs.Options{"items": 8, "results": 2, "max_turns": 20}, Config{Items: 8, Results: 2, MaxTurns: 20, InvalidPenalty: -0.1, SuccessReward: 1}},
	}
	for _, tc := range tests {
		got, err := ConfigFromOptions(tc.opts)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		opts envs.Options
		want string
	}{
		{envs.Options{"item": 6}, `env shop: unknown option "item" (allowed: invalid_penalty, items, max_turns, results, success_reward)`},
		{envs.Options{"items": 3}, `option "items": 3 is out of range (allowed 4..8)`},
		{envs.Options{"items": 9}, `option "items": 9 is out of range (allowed 4..8)`},
		{envs.Options{"results": 1}, `option "results": 1 is out of range (allowed 2..4)`},
		{envs.Options{"max_turns": 3}, `option "max_turns": 3 is out of range (allowed 4..50)`},
		{envs.Options{"items": "six"}, `option "items": "six" has the wrong type (allowed integers)`},
		{envs.Options{"invalid_penalty": -3}, `option "invalid_penalty": -3 is out of range (allowed -1..0)`},
		{envs.Options{"success_reward": 0}, `option "success_reward": 0 is out of range (allowed > 0 and <= 100)`},
	}
	for _, tc := range tests {
		_, err := ConfigFromOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %s", tc.opts, err, tc.want)
			continue
		}
		var oe *envs.OptionError
		if !errors.As(err, &oe) || oe.Env != Name {
			t.Errorf("%v: error %v is not an *envs.OptionError of shop", tc.opts, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	s, err := envs.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Options) != 5 {
		t.Errorf("%d option docs, want 5", len(s.Options))
	}
	for _, d := range s.Options {
		if _, err := ConfigFromOptions(envs.Options{d.Key + "x": 1}); err == nil || !strings.Contains(err.Error(), d.Key) {
			t.Errorf("documented key %q missing from the allowed list: %v", d.Key, err)
		}
	}
	e, err := envs.New(Name, envs.Options{"max_turns": 9})
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxTurns() != 9 {
		t.Errorf("MaxTurns = %d, want 9", e.MaxTurns())
	}
}
