package keydoor

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
		{"defaults", nil, Config{Size: 5, Walls: 1, KeyInState: true, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"size 7", envs.Options{"size": 7}, Config{Size: 7, Walls: 3, KeyInState: true, MaxTurns: 24, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"aliased", envs.Options{"key_in_state": false}, Config{Size: 5, Walls: 1, KeyInState: false, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"yaml word for false", envs.Options{"key_in_state": "no"}, Config{Size: 5, Walls: 1, KeyInState: false, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"explicit keys win", envs.Options{"size": 6, "walls": 0, "max_turns": 30}, Config{Size: 6, Walls: 0, KeyInState: true, MaxTurns: 30, InvalidPenalty: -0.1, SuccessReward: 1}},
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
		{envs.Options{"key": true}, `env keydoor: unknown option "key" (allowed: invalid_penalty, key_in_state, max_turns, size, success_reward, walls)`},
		{envs.Options{"size": 4}, `option "size": 4 is out of range (allowed 5..7)`},
		{envs.Options{"walls": 5}, `option "walls": 5 is out of range (allowed 0..4 for size 5)`},
		{envs.Options{"key_in_state": 1}, `option "key_in_state": 1 has the wrong type (allowed true, false)`},
		{envs.Options{"max_turns": 13}, `option "max_turns": 13 is out of range (allowed 14..100 for size 5)`},
		{envs.Options{"invalid_penalty": -2}, `option "invalid_penalty": -2 is out of range (allowed -1..0)`},
		{envs.Options{"success_reward": -1}, `option "success_reward": -1 is out of range (allowed > 0 and <= 100)`},
	}
	for _, tc := range tests {
		_, err := ConfigFromOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %s", tc.opts, err, tc.want)
			continue
		}
		var oe *envs.OptionError
		if !errors.As(err, &oe) || oe.Env != Name {
			t.Errorf("%v: error %v is not an *envs.OptionError of keydoor", tc.opts, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	s, err := envs.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Options) != 6 {
		t.Errorf("%d option docs, want 6", len(s.Options))
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
	if e.MaxTurns() != 21 {
		t.Errorf("MaxTurns = %d, want 21", e.MaxTurns())
	}
}
