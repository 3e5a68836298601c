package maze

import (
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

func TestConfigFromOptions(t *testing.T) {
	envtest.CheckConfigs(t, ConfigFromOptions, []envtest.ConfigCase[Config]{
		{Name: "defaults", Opts: nil, Want: Config{Size: 5, Walls: 4, Traps: 2, MaxTurns: 12, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 6 defaults", Opts: envs.Options{"size": 6}, Want: Config{Size: 6, Walls: 6, Traps: 3, MaxTurns: 14, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 7 defaults", Opts: envs.Options{"size": 7}, Want: Config{Size: 7, Walls: 8, Traps: 3, MaxTurns: 16, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 9 defaults", Opts: envs.Options{"size": 9}, Want: Config{Size: 9, Walls: 12, Traps: 4, MaxTurns: 20, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 11 defaults", Opts: envs.Options{"size": 11}, Want: Config{Size: 11, Walls: 16, Traps: 5, MaxTurns: 24, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 11 largest obstacles and cap", Opts: envs.Options{"size": 11, "walls": 30, "traps": 11, "max_turns": 100},
			Want: Config{Size: 11, Walls: 30, Traps: 11, MaxTurns: 100, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "size 11 turn cap factor", Opts: envs.Options{"size": 11, "turn_cap_factor": 3},
			Want: Config{Size: 11, Walls: 16, Traps: 5, MaxTurns: 24, TurnCapFactor: 3, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "explicit keys win over size defaults", Opts: envs.Options{"size": 7, "walls": 0, "max_turns": 30},
			Want: Config{Size: 7, Walls: 0, Traps: 3, MaxTurns: 30, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "whole float from JSON", Opts: envs.Options{"size": 6.0, "success_reward": 2}, Want: Config{Size: 6, Walls: 6, Traps: 3, MaxTurns: 14, InvalidPenalty: -0.1, SuccessReward: 2}},
		{Name: "all keys", Opts: envs.Options{"size": 5, "walls": 6, "traps": 5, "max_turns": 8, "invalid_penalty": -1, "success_reward": 100},
			Want: Config{Size: 5, Walls: 6, Traps: 5, MaxTurns: 8, InvalidPenalty: -1, SuccessReward: 100}},
	})
}

func TestConfigErrors(t *testing.T) {
	envtest.CheckOptionErrors(t, Name, ConfigFromOptions, []envtest.OptionCase{
		{Opts: envs.Options{"szie": 5}, Want: `env maze: unknown option "szie" (allowed: goal_hint, idle_actions, invalid_penalty, labelled, max_turns, size, success_reward, traps, turn_cap_factor, walls)`},
		{Opts: envs.Options{"name": "maze"}, Want: `unknown option "name"`},
		{Opts: envs.Options{"size": 12}, Want: `env maze: option "size": 12 is out of range (allowed 5..11)`},
		{Opts: envs.Options{"size": 4}, Want: `env maze: option "size": 4 is out of range (allowed 5..11)`},
		{Opts: envs.Options{"size": 12, "walls": 0}, Want: `env maze: option "size": 12 is out of range (allowed 5..11)`},
		{Opts: envs.Options{"size": "five"}, Want: `env maze: option "size": "five" has the wrong type (allowed integers)`},
		{Opts: envs.Options{"size": 5.5}, Want: `option "size": 5.5 has the wrong type`},
		{Opts: envs.Options{"walls": 7}, Want: `option "walls": 7 is out of range (allowed 0..6 for size 5)`},
		{Opts: envs.Options{"size": 7, "walls": 13}, Want: `option "walls": 13 is out of range (allowed 0..12 for size 7)`},
		{Opts: envs.Options{"walls": -1}, Want: `option "walls": -1 is out of range`},
		{Opts: envs.Options{"traps": 6}, Want: `option "traps": 6 is out of range (allowed 0..5 for size 5)`},
		{Opts: envs.Options{"max_turns": 7}, Want: `option "max_turns": 7 is out of range (allowed 8..100 for size 5)`},
		{Opts: envs.Options{"size": 7, "max_turns": 11}, Want: `option "max_turns": 11 is out of range (allowed 12..100 for size 7)`},
		{Opts: envs.Options{"max_turns": 101}, Want: `option "max_turns": 101 is out of range`},
		{Opts: envs.Options{"turn_cap_factor": 0.5}, Want: `option "turn_cap_factor": 0.5 is out of range (allowed 0 (off) or 1..12.5 for size 5`},
		{Opts: envs.Options{"size": 11, "walls": 31}, Want: `option "walls": 31 is out of range (allowed 0..30 for size 11)`},
		{Opts: envs.Options{"size": 11, "traps": 12}, Want: `option "traps": 12 is out of range (allowed 0..11 for size 11)`},
		{Opts: envs.Options{"size": 11, "max_turns": 19}, Want: `option "max_turns": 19 is out of range (allowed 20..100 for size 11)`},
		{Opts: envs.Options{"size": 11, "turn_cap_factor": 5.5}, Want: `option "turn_cap_factor": 5.5 is out of range (allowed 0 (off) or 1..5 for size 11`},
		{Opts: envs.Options{"size": 7, "turn_cap_factor": 9}, Want: `option "turn_cap_factor": 9 is out of range (allowed 0 (off) or 1..8.33 for size 7`},
		{Opts: envs.Options{"turn_cap_factor": 2, "max_turns": 20}, Want: `option "turn_cap_factor": 2 replaces max_turns (allowed one of max_turns and turn_cap_factor)`},
		{Opts: envs.Options{"invalid_penalty": 0.5}, Want: `option "invalid_penalty": 0.5 is out of range (allowed -1..0)`},
		{Opts: envs.Options{"invalid_penalty": true}, Want: `option "invalid_penalty": true has the wrong type (allowed numbers)`},
		{Opts: envs.Options{"success_reward": 0}, Want: `option "success_reward": 0 is out of range (allowed > 0 and <= 100)`},
		{Opts: envs.Options{"success_reward": 1e9}, Want: `option "success_reward": 1e+09 is out of range`},
	})
}

// TestRegistered checks that the registry refuses options as ConfigFromOptions does.
func TestRegistered(t *testing.T) {
	if _, err := envs.New(Name, envs.Options{"traps": 99}); err == nil || !strings.Contains(err.Error(), `"traps": 99`) {
		t.Errorf("New with traps 99: %v", err)
	}
}
