package shop

import (
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

func TestConfigFromOptions(t *testing.T) {
	envtest.CheckConfigs(t, ConfigFromOptions, []envtest.ConfigCase[Config]{
		{Name: "defaults", Opts: nil, Want: Config{Items: 6, Results: 3, MaxTurns: 12, InvalidPenalty: -0.1, SuccessReward: 1}},
		{Name: "larger", Opts: envs.Options{"items": 8, "results": 2, "max_turns": 20}, Want: Config{Items: 8, Results: 2, MaxTurns: 20, InvalidPenalty: -0.1, SuccessReward: 1}},
	})
}

func TestConfigErrors(t *testing.T) {
	envtest.CheckOptionErrors(t, Name, ConfigFromOptions, []envtest.OptionCase{
		{Opts: envs.Options{"item": 6}, Want: `env shop: unknown option "item" (allowed: invalid_penalty, items, max_turns, results, success_reward)`},
		{Opts: envs.Options{"items": 3}, Want: `option "items": 3 is out of range (allowed 4..8)`},
		{Opts: envs.Options{"items": 9}, Want: `option "items": 9 is out of range (allowed 4..8)`},
		{Opts: envs.Options{"results": 1}, Want: `option "results": 1 is out of range (allowed 2..4)`},
		{Opts: envs.Options{"max_turns": 3}, Want: `option "max_turns": 3 is out of range (allowed 4..50)`},
		{Opts: envs.Options{"items": "six"}, Want: `option "items": "six" has the wrong type (allowed integers)`},
		{Opts: envs.Options{"invalid_penalty": -3}, Want: `option "invalid_penalty": -3 is out of range (allowed -1..0)`},
		{Opts: envs.Options{"success_reward": 0}, Want: `option "success_reward": 0 is out of range (allowed > 0 and <= 100)`},
	})
}
