package sokoban

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
		{"defaults", nil, Config{Size: 6, Boxes: 1, Walls: 2, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"two boxes", envs.Options{"boxes": 2}, Config{Size: 6, Boxes: 2, Walls: 2, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"size 5", envs.Options{"size": 5}, Config{Size: 5, Boxes: 1, Walls: 1, MaxTurns: 14, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"size 7 two boxes", envs.Options{"size": 7, "boxes": 2}, Config{Size: 7, Boxes: 2, Walls: 3, MaxTurns: 22, InvalidPenalty: -0.1, SuccessReward: 1}},
		{"explicit keys win", envs.Options{"size": 7, "walls": 0, "max_turns": 40, "success_reward": 2.5},
			Config{Size: 7, Boxes: 1, Walls: 0, MaxTurns: 40, InvalidPenalty: -0.1, SuccessReward: 2.5}},
		{"whole float from JSON", envs.Options{"boxes": 2.0}, Config{Size: 6, Boxes: 2, Walls: 2, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
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
		{envs.Options{"box": 2}, `env sokoban: unknown option "box" (allowed: boxes, invalid_penalty, max_turns, size, success_reward, walls)`},
		{envs.Options{"size": 8}, `env sokoban: option "size": 8 is out of range (allowed 5..7)`},
		{envs.Options{"boxes": 3}, `option "boxes": 3 is out of range (allowed 1..2)`},
		{envs.Options{"boxes": 0}, `option "boxes": 0 is out of range (allowed 1..2)`},
		{envs.Options{"boxes": "two"}, `option "boxes": "two" has the wrong type (allowed integers)`},
		{envs.Options{"walls": 5}, `option "walls": 5 is out of range (allowed 0..4 for size 6)`},
		{envs.Options{"size": 5, "walls": 3}, `option "walls": 3 is out of range (allowed 0..2 for size 5)`},
		{envs.Options{"max_turns": 11}, `option "max_turns": 11 is out of range (allowed 12..100 for size 6 and 1 boxes)`},
		{envs.Options{"boxes": 2, "max_turns": 13}, `option "max_turns": 13 is out of range (allowed 14..100 for size 6 and 2 boxes)`},
		{envs.Options{"max_turns": 101}, `option "max_turns": 101 is out of range`},
		{envs.Options{"invalid_penalty": 0.5}, `option "invalid_penalty": 0.5 is out of range (allowed -1..0)`},
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
			t.Errorf("%v: error %v is not an *envs.OptionError of sokoban", tc.opts, err)
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
	e, err := envs.New(Name, envs.Options{"boxes": 2})
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxTurns() != 18 {
		t.Errorf("MaxTurns = %d, want 18", e.MaxTurns())
	}
	if _, err := New(Config{Size: 9}); err == nil {
		t.Error("New with size 9: no error")
	}
	if DefaultConfig(99, 1).MaxTurns != DefaultConfig(MaxSize, 1).MaxTurns {
		t.Error("DefaultConfig of an out-of-range size does not clamp")
	}
}
