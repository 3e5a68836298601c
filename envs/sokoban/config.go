package sokoban

import (
	"fmt"
	"strconv"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// Name is the registry name of the environment.
const Name = "sokoban"

// Room bounds: the side includes the border walls, so 5..7 gives interiors of 3×3..5×5; 7 keeps the
// position words and the solver table (25³ states with two boxes) small.
const (
	MinSize     = 5
	MaxSize     = 7
	DefaultSize = 6
	// MaxBoxes is the largest number of boxes; the default is one, two is the harder level.
	MaxBoxes = 2
)

// minSolution is the shortest optimal solution the generator accepts, so that episodes are multi-turn
// and need more than one push.
const minSolution = 4

// maxSolution is the longest optimal solution the generator accepts, so that max_turns >= maxSolution
// always leaves the level solvable in time. The bounds keep about 90% of the solvable draws (all of
// them for size 5) while an episode at the default cap stays within ~250 tokens.
func maxSolution(size, boxes int) int {
	i := min(max(size, MinSize), MaxSize) - MinSize // out-of-range sizes are refused by Validate
	if boxes == 2 {
		return [...]int{8, 14, 18}[i]
	}
	return [...]int{10, 12, 16}[i]
}

// turnSlack is how many turns the default max_turns leaves beyond the longest accepted solution, for
// a detour or an invalid action.
const turnSlack = 4

// Config holds the options of a sokoban room; the yaml tags are the keys of the env section.
type Config struct {
	// Size is the side of the square room, border walls included.
	Size int `yaml:"size"`
	// Boxes is the number of boxes, and of targets.
	Boxes int `yaml:"boxes"`
	// Walls is the number of interior wall cells.
	Walls int `yaml:"walls"`
	// MaxTurns is the step cap; it is at least the longest optimal solution a level can have.
	MaxTurns int `yaml:"max_turns"`
	// InvalidPenalty is the per-step reward r_t of an invalid action.
	InvalidPenalty float64 `yaml:"invalid_penalty"`
	// SuccessReward is the outcome R of putting every box on a target.
	SuccessReward float64 `yaml:"success_reward"`
}

// DefaultConfig returns the defaults for a room of the given side and number of boxes.
func DefaultConfig(size, boxes int) Config {
	return Config{
		Size:           size,
		Boxes:          boxes,
		Walls:          size - 4,
		MaxTurns:       maxSolution(size, boxes) + turnSlack,
		InvalidPenalty: -0.1,
		SuccessReward:  1,
	}
}

// maxWalls bounds the interior walls to a quarter of the interior, so that rooms stay open enough
// for solvable levels to be common.
func maxWalls(size int) int { return (size - 2) * (size - 2) / 4 }

// Validate checks the ranges of the options; the errors are *envs.OptionError naming the key.
func (c Config) Validate() error {
	if err := envs.CheckRange(Name, "size", c.Size, MinSize, MaxSize); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "boxes", c.Boxes, 1, MaxBoxes); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "walls", c.Walls, 0, maxWalls(c.Size)); err != nil {
		return grid.SizeNote(err, c.Size)
	}
	if err := envs.CheckRange(Name, "max_turns", c.MaxTurns, maxSolution(c.Size, c.Boxes), grid.MaxTurnsLimit); err != nil {
		return envs.NoteAllowed(err, fmt.Sprintf(" for size %d and %d boxes", c.Size, c.Boxes))
	}
	return envs.CheckRewards(Name, c.InvalidPenalty, c.SuccessReward)
}

// ConfigFromOptions decodes and validates the options of the env section. Walls and max_turns default
// by size and boxes, so those are decoded first and the defaults they imply are then overridden.
func ConfigFromOptions(opts envs.Options) (Config, error) {
	return envs.DecodeOptions(Name, opts, DefaultConfig(DefaultSize, 1), func(probe Config) (Config, error) {
		if err := envs.CheckRange(Name, "size", probe.Size, MinSize, MaxSize); err != nil {
			return Config{}, err
		}
		return DefaultConfig(probe.Size, probe.Boxes), envs.CheckRange(Name, "boxes", probe.Boxes, 1, MaxBoxes)
	})
}

func optionDocs() []envs.OptionDoc {
	d := DefaultConfig(DefaultSize, 1)
	turns := func(boxes int) string {
		return fmt.Sprintf("%d, %d, %d (size 5, 6, 7)", DefaultConfig(5, boxes).MaxTurns, DefaultConfig(6, boxes).MaxTurns, DefaultConfig(7, boxes).MaxTurns)
	}
	return []envs.OptionDoc{
		{Key: "size", Default: strconv.Itoa(d.Size), Help: fmt.Sprintf("side of the square room including the border walls, %d..%d", MinSize, MaxSize)},
		{Key: "boxes", Default: strconv.Itoa(d.Boxes), Help: "number of boxes and targets, 1..2 (2 is the harder level)"},
		{Key: "walls", Default: "size-4: 1, 2, 3 (size 5, 6, 7)", Help: "interior wall cells, 0..(size-2)²/4"},
		grid.MaxTurnsDoc(turns(1)+" with 1 box; "+turns(2)+" with 2", "longest accepted optimal solution"),
		envs.PenaltyDoc(d.InvalidPenalty, "action"),
		envs.SuccessDoc(d.SuccessReward, "solving the room"),
	}
}

func init() {
	envs.Register(envs.Spec{
		Name:        Name,
		Description: "push the boxes of a small room onto their targets, one move per turn; boxes in corners are dead ends",
		Options:     optionDocs(),
		New:         envs.Constructor(ConfigFromOptions, New),
	})
}
