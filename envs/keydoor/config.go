package keydoor

import (
	"strconv"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// Name is the registry name of the environment.
const Name = "keydoor"

// Size bounds: 5 is the smallest grid with room on both sides of the wall line; 11 is the largest
// side the position words and cell keys cover (grid.MaxSide), and its longest task (32 moves) leaves
// turn_cap_factor room up to 3. Sizes 8..11 add position words to the vocabulary (see
// KeyDoor.Vocabulary); sizes 5..7 keep the words, tasks and keys they always had.
const (
	MinSize     = 5
	MaxSize     = grid.MaxSide
	DefaultSize = 5
)

// Config holds the options of a key-and-door grid; the yaml tags are the keys of the env section.
type Config struct {
	// Size is the side of the square grid.
	Size int `yaml:"size"`
	// Walls is the number of wall cells besides the wall line.
	Walls int `yaml:"walls"`
	// KeyInState puts whether the key is held into the state key. Without it two states that differ
	// only by the key share a key (state aliasing), which tests how estimators cope with it.
	KeyInState bool `yaml:"key_in_state"`
	// MaxTurns is the step cap; it is at least the longest optimal path a layout can have.
	MaxTurns int `yaml:"max_turns"`
	// TurnCapFactor, when not 0, replaces max_turns by a cap per task: ⌈factor × the task's
	// optimal length⌉ (start to key to door to goal).
	TurnCapFactor float64 `yaml:"turn_cap_factor"`
	// InvalidPenalty is the per-step reward r_t of an invalid action.
	InvalidPenalty float64 `yaml:"invalid_penalty"`
	// SuccessReward is the outcome R of reaching the goal.
	SuccessReward float64 `yaml:"success_reward"`
}

// DefaultConfig returns the defaults for a grid of the given side.
func DefaultConfig(size int) Config {
	return Config{
		Size:           size,
		Walls:          size - 4,
		KeyInState:     true,
		MaxTurns:       maxDistance(size) + 4,
		InvalidPenalty: -0.1,
		SuccessReward:  1,
	}
}

// minDistance is the shortest optimal path the generator accepts (start to key to door to goal), so
// that episodes are multi-turn; maxDistance the longest, so that max_turns >= maxDistance always
// leaves the task solvable in time. maxDistance keeps about 95% of the draws.
func minDistance(size int) int { return size - 1 }
func maxDistance(size int) int { return 3*size - 1 }

// maxWalls bounds the extra walls so that the generator finds solvable layouts quickly.
func maxWalls(size int) int { return size - 1 }

// Validate checks the ranges of the options; the errors are *envs.OptionError naming the key.
func (c Config) Validate() error {
	if err := envs.CheckRange(Name, "size", c.Size, MinSize, MaxSize); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "walls", c.Walls, 0, maxWalls(c.Size)); err != nil {
		return grid.SizeNote(err, c.Size)
	}
	if err := grid.CheckTurns(Name, c.Size, c.MaxTurns, DefaultConfig(c.Size).MaxTurns, c.TurnCapFactor,
		maxDistance(c.Size)); err != nil {
		return err
	}
	return envs.CheckRewards(Name, c.InvalidPenalty, c.SuccessReward)
}

// ConfigFromOptions decodes and validates the options of the env section. Walls and max_turns default
// by size, so size is decoded first and the defaults of that size are then overridden.
func ConfigFromOptions(opts envs.Options) (Config, error) {
	return envs.DecodeOptions(Name, opts, DefaultConfig(DefaultSize), func(probe Config) (Config, error) {
		return DefaultConfig(probe.Size), envs.CheckRange(Name, "size", probe.Size, MinSize, MaxSize)
	})
}

func optionDocs() []envs.OptionDoc {
	d := DefaultConfig(DefaultSize)
	bySize := func(f func(Config) int) string {
		return grid.DefaultsBySize(MinSize, MaxSize, func(size int) int { return f(DefaultConfig(size)) })
	}
	return []envs.OptionDoc{
		grid.SizeDoc(d.Size, MinSize, MaxSize, smallSize),
		{Key: "walls", Default: bySize(func(c Config) int { return c.Walls }), Help: "wall cells besides the wall line with the door, 0..size-1"},
		{Key: "key_in_state", Default: strconv.FormatBool(d.KeyInState), Help: "whether the state key tells if the key is held; false aliases states on purpose"},
		grid.MaxTurnsDoc(bySize(func(c Config) int { return c.MaxTurns }), "3*size-1"),
		grid.TurnCapDoc(),
		envs.PenaltyDoc(d.InvalidPenalty, "action"),
		envs.SuccessDoc(d.SuccessReward, "reaching the goal"),
	}
}

func init() {
	envs.Register(envs.Spec{
		Name:        Name,
		Description: "pick up the key, open the door and reach the goal behind it, one move per turn",
		Options:     optionDocs(),
		New:         envs.Constructor(ConfigFromOptions, New),
	})
}
