package keydoor

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

func TestConfigFromOptions(t *testing.T) {
	envtest.CheckConfigs(t, ConfigFromOptions, []envtest.ConfigCase[Config]{
		{Name: "defaults", Opts: nil, Want: Config{Size: 5, Walls: 1, KeyInState: true, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 7", Opts: envs.Options{"size": 7}, Want: Config{Size: 7, Walls: 3, KeyInState: true, MaxTurns: 24, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 9", Opts: envs.Options{"size": 9}, Want: Config{Size: 9, Walls: 5, KeyInState: true, MaxTurns: 30, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 11", Opts: envs.Options{"size": 11}, Want: Config{Size: 11, Walls: 7, KeyInState: true, MaxTurns: 36, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 11 turn cap factor", Opts: envs.Options{"size": 11, "turn_cap_factor": 3},
			Want: Config{Size: 11, Walls: 7, KeyInState: true, MaxTurns: 36, TurnCapFactor: 3, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "aliased", Opts: envs.Options{"key_in_state": false}, Want: Config{Size: 5, Walls: 1, KeyInState: false, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "yaml word for false", Opts: envs.Options{"key_in_state": "no"}, Want: Config{Size: 5, Walls: 1, KeyInState: false, MaxTurns: 18, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "explicit keys win", Opts: envs.Options{"size": 6, "walls": 0, "max_turns": 30}, Want: Config{Size: 6, Walls: 0, KeyInState: true, MaxTurns: 30, InvalidPenalty: -0.1, SuccessReward: 1}},
	})
}

func TestConfigErrors(t *testing.T) {
	envtest.CheckOptionErrors(t, Name, ConfigFromOptions, []envtest.OptionCase{
		{Opts: envs.Options{"key": true}, Want: `env keydoor: unknown option "key" (allowed: invalid_penalty, key_in_state, max_turns, size, success_reward, turn_cap_factor, walls)`},
		{Opts: envs.Options{"size": 4}, Want: `env keydoor: option "size": 4 is out of range (allowed 5..11)`},
		{Opts: envs.Options{"size": 12}, Want: `env keydoor: option "size": 12 is out of range (allowed 5..11)`},
		{Opts: envs.Options{"size": 11, "walls": 11}, Want: `option "walls": 11 is out of range (allowed 0..10 for size 11)`},
		{Opts: envs.Options{"size": 11, "max_turns": 31}, Want: `option "max_turns": 31 is out of range (allowed 32..100 for size 11)`},
		{Opts: envs.Options{"size": 11, "turn_cap_factor": 3.2}, Want: `option "turn_cap_factor": 3.2 is out of range (allowed 0 (off) or 1..3.12 for size 11`},
		{Opts: envs.Options{"walls": 5}, Want: `option "walls": 5 is out of range (allowed 0..4 for size 5)`},
		{Opts: envs.Options{"key_in_state": 1}, Want: `option "key_in_state": 1 has the wrong type (allowed true, false)`},
		{Opts: envs.Options{"max_turns": 13}, Want: `option "max_turns": 13 is out of range (allowed 14..100 for size 5)`},
		{Opts: envs.Options{"turn_cap_factor": 8}, Want: `option "turn_cap_factor": 8 is out of range (allowed 0 (off) or 1..7.14 for size 5 (the longest task's cap at most 100 turns))`},
		{Opts: envs.Options{"turn_cap_factor": 2, "max_turns": 30}, Want: `option "turn_cap_factor": 2 replaces max_turns`},
		{Opts: envs.Options{"invalid_penalty": -2}, Want: `option "invalid_penalty": -2 is out of range (allowed -1..0)`},
		{Opts: envs.Options{"success_reward": -1}, Want: `option "success_reward": -1 is out of range (allowed > 0 and <= 100)`},
	})
}
