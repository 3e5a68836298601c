package maze

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
		{"defaults", nil, Config{Size: 5, Walls: 4, Traps: 2, MaxTurns: 12, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"size 6 defaults", envs.Options{"size": 6}, Config{Size: 6, Walls: 6, Traps: 3, MaxTurns: 14, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"size 7 defaults", envs.Options{"size": 7}, Config{Size: 7, Walls: 8, Traps: 3, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"explicit keys win over size defaults", envs.Options{"size": 7, "walls": 0, "max_turns": 30},
			Config{Size: 7, Walls: 0, Traps: 3, MaxTurns: 30, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"whole float from JSON", envs.Options{"size": 6.0, "success_reward": 2}, Config{Size: 6, Walls: 6, Traps: 3, MaxTurns: 14, InvalidPenalty: -0.1, SuccessReward: 2}},
		{"all keys", envs.Options{"size": 5, "walls": 6, "traps": 5, "max_turns": 8, "invalid_penalty": -1, "success_reward": 100},
			Config{Size: 5, Walls: 6, Traps: 5, MaxTurns: 8, InvalidPenalty: -1, SuccessReward: 100}},
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
		{envs.Options{"szie": 5}, `env maze: unknown option "szie" (allowed: goal_hint, invalid_penalty, labelled, max_turns, size, success_reward, traps, walls)`},
		{envs.Options{"name": "maze"}, `unknown option "name"`},
		{envs.Options{"size": 9}, `env maze: option "size": 9 is out of range (allowed 5..7)`},
		{envs.Options{"size": 4}, `option "size": 4 is out of range (allowed 5..7)`},
		{envs.Options{"size": "five"}, `env maze: option "size": "five" has the wrong type (allowed integers)`},
		{envs.Options{"size": 5.5}, `option "size": 5.5 has the wrong type`},
		{envs.Options{"walls": 7}, `option "walls": 7 is out of range (allowed 0..6 for size 5)`},
		{envs.Options{"size": 7, "walls": 13}, `option "walls": 13 is out of range (allowed 0..12 for size 7)`},
		{envs.Options{"walls": -1}, `option "walls": -1 is out of range`},
		{envs.Options{"traps": 6}, `option "traps": 6 is out of range (allowed 0..5 for size 5)`},
		{envs.Options{"max_turns": 7}, `option "max_turns": 7 is out of range (allowed 8..100 for size 5)`},
		{envs.Options{"size": 7, "max_turns": 11}, `option "max_turns": 11 is out of range (allowed 12..100 for size 7)`},
		{envs.Options{"max_turns": 101}, `option "max_turns": 101 is out of range`},
		{envs.Options{"invalid_penalty": 0.5}, `option "invalid_penalty": 0.5 is out of range (allowed -1..0)`},
		{envs.Options{"invalid_penalty": true}, `option "invalid_penalty": true has the wrong type (allowed numbers)`},
		{envs.Options{"success_reward": 0}, `option "success_reward": 0 is out of range (allowed > 0 and <= 100)`},
		{envs.Options{"success_reward": 1e9}, `option "success_reward": 1e+09 is out of range`},
	}
	for _, tc := range tests {
		_, err := ConfigFromOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %s", tc.opts, err, tc.want)
			continue
		}
		var oe *envs.OptionError
		if !errors.As(err, &oe) || oe.Env != Name {
			t.Errorf("%v: error %v is not an *envs.OptionError of maze", tc.opts, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	s, err := envs.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Options) != 8 {
		t.Errorf("%d option docs, want 8", len(s.Options))
	}
	for _, d := range s.Options {
		if _, err := ConfigFromOptions(envs.Options{d.Key + "x": 1}); err == nil || !strings.Contains(err.Error(), d.Key) {
			t.Errorf("documented key %q missing from the allowed list: %v", d.Key, err)
		}
	}
	e, err := envs.New(Name, envs.Options{"size": 6})
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxTurns() != 14 {
		t.Errorf("MaxTurns = %d, want 14", e.MaxTurns())
	}
	if _, err := envs.New(Name, envs.Options{"traps": 99}); err == nil || !strings.Contains(err.Error(), `"traps": 99`) {
		t.Errorf("New with traps 99: %v", err)
	}
}
