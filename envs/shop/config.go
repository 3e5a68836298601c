package shop

import (
	"fmt"
	"strconv"

	"github.com/graftrl/graftrl/envs"
)

// Name is the registry name of the environment.
const Name = "shop"

// Catalogue bounds: MaxItems is the number of item id words (i1..i8).
const (
	MinItems       = 4
	MaxItems       = 8
	DefaultItems   = 6
	MinResults     = 2
	MaxResults     = 4
	DefaultResults = 3
)

// optimalSteps is the longest optimal solution of a task: search, click, select, buy.
const optimalSteps = 4

// maxTurnsLimit caps max_turns: the policy's context holds the whole episode.
const maxTurnsLimit = 50

// Config holds the options of a shop; the yaml tags are the keys of the env section.
type Config struct {
	// Items is the size of the catalogue of a task.
	Items int `yaml:"items"`
	// Results is the number of items a result page shows at most.
	Results int `yaml:"results"`
	// MaxTurns is the step cap; at least the 4 steps of the longest optimal solution.
	MaxTurns int `yaml:"max_turns"`
	// InvalidPenalty is the per-step reward r_t of an invalid action.
	InvalidPenalty float64 `yaml:"invalid_penalty"`
	// SuccessReward is the outcome R of buying the right item.
	SuccessReward float64 `yaml:"success_reward"`
}

// DefaultConfig returns the default shop: six items, three results per page, twelve turns (the
// optimal four and room to inspect the look-alikes).
func DefaultConfig() Config {
	return Config{
		Items:          DefaultItems,
		Results:        DefaultResults,
		MaxTurns:       12,
		InvalidPenalty: -0.1,
		SuccessReward:  1,
	}
}

// Validate checks the ranges of the options; the errors are *envs.OptionError naming the key.
func (c Config) Validate() error {
	if err := envs.CheckRange(Name, "items", c.Items, MinItems, MaxItems); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "results", c.Results, MinResults, MaxResults); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "max_turns", c.MaxTurns, optimalSteps, maxTurnsLimit); err != nil {
		return err
	}
	return envs.CheckRewards(Name, c.InvalidPenalty, c.SuccessReward)
}

// ConfigFromOptions decodes and validates the options of the env section.
func ConfigFromOptions(opts envs.Options) (Config, error) {
	return envs.DecodeOptions(Name, opts, DefaultConfig(), nil)
}

func optionDocs() []envs.OptionDoc {
	d := DefaultConfig()
	return []envs.OptionDoc{
		{Key: "items", Default: strconv.Itoa(d.Items), Help: fmt.Sprintf("items in the catalogue of a task, %d..%d", MinItems, MaxItems)},
		{Key: "results", Default: strconv.Itoa(d.Results), Help: fmt.Sprintf("items a result page shows at most, %d..%d", MinResults, MaxResults)},
		{Key: "max_turns", Default: strconv.Itoa(d.MaxTurns), Help: fmt.Sprintf("step cap, %d..%d", optimalSteps, maxTurnsLimit)},
		envs.PenaltyDoc(d.InvalidPenalty, "action"),
		envs.SuccessDoc(d.SuccessReward, "buying the right item"),
	}
}

func init() {
	envs.Register(envs.Spec{
		Name:        Name,
		Description: "find and buy the product of the instruction in a small web shop: search, click, select a size, buy",
		Options:     optionDocs(),
		New:         envs.Constructor(ConfigFromOptions, New),
	})
}
