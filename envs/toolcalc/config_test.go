package toolcalc

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
		{"defaults", nil, Config{Calls: 3, Operands: 2, Undo: 1, MaxTurns: 8, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"harder", envs.Options{"calls": 5, "operands": 3}, Config{Calls: 5, Operands: 3, Undo: 1, MaxTurns: 10, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"no undo, tight budget", envs.Options{"undo": 0, "max_turns": 4}, Config{Calls: 3, Operands: 2, Undo: 0, MaxTurns: 4, InvalidPenalty: -0.1, SuccessReward: 1}},
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
		{envs.Options{"steps": 3}, `env toolcalc: unknown option "steps" (allowed: calls, invalid_penalty, max_turns, operands, success_reward, undo)`},
		{envs.Options{"calls": 0}, `option "calls": 0 is out of range (allowed 1..6)`},
		{envs.Options{"calls": 7}, `option "calls": 7 is out of range (allowed 1..6)`},
		{envs.Options{"operands": 4}, `option "operands": 4 is out of range (allowed 1..3)`},
		{envs.Options{"undo": 3}, `option "undo": 3 is out of range (allowed 0..2)`},
		{envs.Options{"max_turns": 3}, `option "max_turns": 3 is out of range (allowed 4..50 for 3 calls)`},
		{envs.Options{"calls": 6, "max_turns": 6}, `option "max_turns": 6 is out of range (allowed 7..50 for 6 calls)`},
		{envs.Options{"undo": true}, `option "undo": true has the wrong type (allowed integers)`},
		{envs.Options{"invalid_penalty": 0.1}, `option "invalid_penalty": 0.1 is out of range (allowed -1..0)`},
		{envs.Options{"success_reward": 101}, `option "success_reward": 101 is out of range (allowed > 0 and <= 100)`},
	}
	for _, tc := range tests {
		_, err := ConfigFromOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %s", tc.opts, err, tc.want)
			continue
		}
		var oe *envs.OptionError
		if !errors.As(err, &oe) || oe.Env != Name {
			t.Errorf("%v: error %v is not an *envs.OptionError of toolcalc", tc.opts, err)
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
	e, err := envs.New(Name, envs.Options{"calls": 2})
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxTurns() != 7 {
		t.Errorf("MaxTurns = %d, want 7", e.MaxTurns())
	}
}
