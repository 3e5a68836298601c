package toolcalc

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

func TestConfigFromOptions(t *testing.T) {
	envtest.CheckConfigs(t, ConfigFromOptions, []envtest.ConfigCase[Config]{
		{Name: "defaults", Opts: nil, Want: Config{Calls: 3, Operands: 2, Undo: 1, MaxTurns: 8, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "harder", Opts: envs.Options{"calls": 5, "operands": 3}, Want: Config{Calls: 5, Operands: 3, Undo: 1, MaxTurns: 10, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "no undo, tight budget", Opts: envs.Options{"undo": 0, "max_turns": 4}, Want: Config{Calls: 3, Operands: 2, Undo: 0, MaxTurns: 4, InvalidPenalty: -0.1, SuccessReward: 1}},
	})
}

func TestConfigErrors(t *testing.T) {
	envtest.CheckOptionErrors(t, Name, ConfigFromOptions, []envtest.OptionCase{
		{Opts: envs.Options{"steps": 3}, Want: `env toolcalc: unknown option "steps" (allowed: calls, invalid_penalty, max_turns, operands, success_reward, undo)`},
		{Opts: envs.Options{"calls": 0}, Want: `option "calls": 0 is out of range (allowed 1..6)`},
		{Opts: envs.Options{"calls": 7}, Want: `option "calls": 7 is out of range (allowed 1..6)`},
		{Opts: envs.Options{"operands": 4}, Want: `option "operands": 4 is out of range (allowed 1..3)`},
		{Opts: envs.Options{"undo": 3}, Want: `option "undo": 3 is out of range (allowed 0..2)`},
		{Opts: envs.Options{"max_turns": 3}, Want: `option "max_turns": 3 is out of range (allowed 4..50 for 3 calls)`},
		{Opts: envs.Options{"calls": 6, "max_turns": 6}, Want: `option "max_turns": 6 is out of range (allowed 7..50 for 6 calls)`},
		{Opts: envs.Options{"undo": true}, Want: `option "undo": true has the wrong type (allowed integers)`},
		{Opts: envs.Options{"invalid_penalty": 0.1}, Want: `option "invalid_penalty": 0.1 is out of range (allowed -1..0)`},
		{Opts: envs.Options{"success_reward": 101}, Want: `option "success_reward": 101 is out of range (allowed > 0 and <= 100)`},
	})
}
