package frozenlake

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
		{"defaults", nil, Config{Size: 4, Holes: 4, Slip: 0.2, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"size 6", envs.Options{"size": 6}, Config{Size: 6, Holes: 6, Slip: 0.2, MaxTurns: 24, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"no slip, own seed", envs.Options{"slip": 0, "slip_seed": -12}, Config{Size: 4, Holes: 4, Slip: 0, SlipSeed: -12, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"gymnasium's 4x4", envs.Options{"map": "4x4", "slip_mode": "gymnasium", "max_turns": 100},
			Config{Size: 4, Holes: 4, Slip: 0.2, MaxTurns: 100, InvalidPenalty: -0.1, SuccessReward: 1, Map: "4x4", SlipMode: "gymnasium"}},
		{"explicit keys win", envs.Options{"size": 7, "holes": 0, "max_turns": 12, "slip": 0.5},
			Config{Size: 7, Holes: 0, Slip: 0.5, MaxTurns: 12, InvalidPenalty: -0.1, SuccessReward: 1}},
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
		{envs.Options{"slippery": true}, `env frozenlake: unknown option "slippery" (allowed: holes, invalid_penalty, map, max_turns, size, slip, slip_mode, slip_seed, success_reward)`},
		{envs.Options{"size": 3}, `option "size": 3 is out of range (allowed 4..8)`},
		{envs.Options{"holes": 5}, `option "holes": 5 is out of range (allowed 0..4 for size 4)`},
		{envs.Options{"slip": 1}, `option "slip": 1 is out of range (allowed 0..0.9)`},
		{envs.Options{"slip": -0.1}, `option "slip": -0.1 is out of range`},
		{envs.Options{"slip_seed": 1.5}, `option "slip_seed": 1.5 has the wrong type (allowed integers)`},
		{envs.Options{"max_turns": 5}, `option "max_turns": 5 is out of range (allowed 6..100 for size 4)`},
		{envs.Options{"invalid_penalty": 1}, `option "invalid_penalty": 1 is out of range (allowed -1..0)`},
		{envs.Options{"success_reward": 0}, `option "success_reward": 0 is out of range (allowed > 0 and <= 100)`},
		{envs.Options{"map": "16x16"}, `option "map": "16x16" is not a standard map (allowed 4x4, 8x8)`},
		{envs.Options{"map": "8x8", "size": 4}, `option "size": 4 differs from the map's (allowed 8 for map 8x8)`},
		{envs.Options{"map": "4x4", "size": 5}, `option "size": 5 differs from the map's (allowed 4 for map 4x4)`},
		{envs.Options{"map": "4x4", "holes": 3}, `option "holes": 3 differs from the map's (allowed 4 for map 4x4)`},
		{envs.Options{"slip_mode": "thirds"}, `option "slip_mode": "thirds" is not a slip mode (allowed perpendicular, gymnasium)`},
	}
	for _, tc := range tests {
		_, err := ConfigFromOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %s", tc.opts, err, tc.want)
			continue
		}
		var oe *envs.OptionError
		if !errors.As(err, &oe) || oe.Env != Name {
			t.Errorf("%v: error %v is not an *envs.OptionError of frozenlake", tc.opts, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	s, err := envs.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Options) != 9 {
		t.Errorf("%d option docs, want 9", len(s.Options))
	}
	for _, d := range s.Options {
		if _, err := ConfigFromOptions(envs.Options{d.Key + "x": 1}); err == nil || !strings.Contains(err.Error(), d.Key) {
			t.Errorf("documented key %q missing from the allowed list: %v", d.Key, err)
		}
	}
	e, err := envs.New(Name, envs.Options{"size": 5})
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxTurns() != 20 {
		t.Errorf("MaxTurns = %d, want 20", e.MaxTurns())
	}
}
