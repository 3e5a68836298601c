package frozenlake

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

func TestConfigFromOptions(t *testing.T) {
	envtest.CheckConfigs(t, ConfigFromOptions, []envtest.ConfigCase[Config]{
		{Name: "defaults", Opts: nil, Want: Config{Size: 4, Holes: 4, Slip: 0.2, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 6", Opts: envs.Options{"size": 6}, Want: Config{Size: 6, Holes: 6, Slip: 0.2, MaxTurns: 24, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "no slip, own seed", Opts: envs.Options{"slip": 0, "slip_seed": -12}, Want: Config{Size: 4, Holes: 4, Slip: 0, SlipSeed: -12, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "gymnasium's 4x4", Opts: envs.Options{"map": "4x4", "slip_mode": "gymnasium", "max_turns": 100},
			Want: Config{Size: 4, Holes: 4, Slip: 0.2, MaxTurns: 100, InvalidPenalty: -0.1, SuccessReward: 1, Map: "4x4", SlipMode: "gymnasium"}},
		{Name: "explicit keys win", Opts: envs.Options{"size": 7, "holes": 0, "max_turns": 12, "slip": 0.5},
			Want: Config{Size: 7, Holes: 0, Slip: 0.5, MaxTurns: 12, InvalidPenalty: -0.1, SuccessReward: 1}},
	})
}

func TestConfigErrors(t *testing.T) {
	envtest.CheckOptionErrors(t, Name, ConfigFromOptions, []envtest.OptionCase{
		{Opts: envs.Options{"slippery": true}, Want: `env frozenlake: unknown option "slippery" (allowed: holes, invalid_penalty, map, max_turns, size, slip, slip_mode, slip_seed, success_reward)`},
		{Opts: envs.Options{"size": 3}, Want: `option "size": 3 is out of range (allowed 4..8)`},
		{Opts: envs.Options{"holes": 5}, Want: `option "holes": 5 is out of range (allowed 0..4 for size 4)`},
		{Opts: envs.Options{"slip": 1}, Want: `option "slip": 1 is out of range (allowed 0..0.9)`},
		{Opts: envs.Options{"slip": -0.1}, Want: `option "slip": -0.1 is out of range`},
		{Opts: envs.Options{"slip_seed": 1.5}, Want: `option "slip_seed": 1.5 has the wrong type (allowed integers)`},
		{Opts: envs.Options{"max_turns": 5}, Want: `option "max_turns": 5 is out of range (allowed 6..100 for size 4)`},
		{Opts: envs.Options{"invalid_penalty": 1}, Want: `option "invalid_penalty": 1 is out of range (allowed -1..0)`},
		{Opts: envs.Options{"success_reward": 0}, Want: `option "success_reward": 0 is out of range (allowed > 0 and <= 100)`},
		{Opts: envs.Options{"map": "16x16"}, Want: `option "map": "16x16" is not a standard map (allowed 4x4, 8x8)`},
		{Opts: envs.Options{"map": "8x8", "size": 4}, Want: `option "size": 4 differs from the map's (allowed 8 for map 8x8)`},
		{Opts: envs.Options{"map": "4x4", "size": 5}, Want: `option "size": 5 differs from the map's (allowed 4 for map 4x4)`},
		{Opts: envs.Options{"map": "4x4", "holes": 3}, Want: `option "holes": 3 differs from the map's (allowed 4 for map 4x4)`},
		{Opts: envs.Options{"slip_mode": "thirds"}, Want: `option "slip_mode": "thirds" is not a slip mode (allowed perpendicular, gymnasium)`},
	})
}
