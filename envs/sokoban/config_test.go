package sokoban

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

func TestConfigFromOptions(t *testing.T) {
	envtest.CheckConfigs(t, ConfigFromOptions, []envtest.ConfigCase[Config]{
		{Name: "defaults", Opts: nil, Want: Config{Size: 6, Boxes: 1, Walls: 2, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "two boxes", Opts: envs.Options{"boxes": 2}, Want: Config{Size: 6, Boxes: 2, Walls: 2, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 5", Opts: envs.Options{"size": 5}, Want: Config{Size: 5, Boxes: 1, Walls: 1, MaxTurns: 14, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 7 two boxes", Opts: envs.Options{"size": 7, "boxes": 2}, Want: Config{Size: 7, Boxes: 2, Walls: 3, MaxTurns: 22, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "explicit keys win", Opts: envs.Options{"size": 7, "walls": 0, "max_turns": 40, "success_reward": 2.5},
			Want: Config{Size: 7, Boxes: 1, Walls: 0, MaxTurns: 40, InvalidPenalty: -0.1, SuccessReward: 2.5}},
		{Name: "whole float from JSON", Opts: envs.Options{"boxes": 2.0}, Want: Config{Size: 6, Boxes: 2, Walls: 2, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
	})
}

func TestConfigErrors(t *testing.T) {
	envtest.CheckOptionErrors(t, Name, ConfigFromOptions, []envtest.OptionCase{
		{Opts: envs.Options{"box": 2}, Want: `env sokoban: unknown option "box" (allowed: boxes, invalid_penalty, max_turns, size, success_reward, walls)`},
		{Opts: envs.Options{"size": 8}, Want: `env sokoban: option "size": 8 is out of range (allowed 5..7)`},
		{Opts: envs.Options{"boxes": 3}, Want: `option "boxes": 3 is out of range (allowed 1..2)`},
		{Opts: envs.Options{"boxes": 0}, Want: `option "boxes": 0 is out of range (allowed 1..2)`},
		{Opts: envs.Options{"boxes": "two"}, Want: `option "boxes": "two" has the wrong type (allowed integers)`},
		{Opts: envs.Options{"walls": 5}, Want: `option "walls": 5 is out of range (allowed 0..4 for size 6)`},
		{Opts: envs.Options{"size": 5, "walls": 3}, Want: `option "walls": 3 is out of range (allowed 0..2 for size 5)`},
		{Opts: envs.Options{"max_turns": 11}, Want: `option "max_turns": 11 is out of range (allowed 12..100 for size 6 and 1 boxes)`},
		{Opts: envs.Options{"boxes": 2, "max_turns": 13}, Want: `option "max_turns": 13 is out of range (allowed 14..100 for size 6 and 2 boxes)`},
		{Opts: envs.Options{"max_turns": 101}, Want: `option "max_turns": 101 is out of range`},
		{Opts: envs.Options{"invalid_penalty": 0.5}, Want: `option "invalid_penalty": 0.5 is out of range (allowed -1..0)`},
		{Opts: envs.Options{"success_reward": 0}, Want: `option "success_reward": 0 is out of range (allowed > 0 and <= 100)`},
	})
}

// TestSizeBounds checks that New refuses a room too large for the solver table, and that the defaults
// of a size out of range are those of the nearest size (Validate refuses the size itself).
func TestSizeBounds(t *testing.T) {
	if _, err := New(Config{Size: 9}); err == nil {
		t.Error("New with size 9: no error")
	}
	if DefaultConfig(99, 1).MaxTurns != DefaultConfig(MaxSize, 1).MaxTurns {
		t.Error("DefaultConfig of an out-of-range size does not clamp")
	}
}
