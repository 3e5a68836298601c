package maze

import (
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// Name is the registry name of the environment.
const Name = "maze"

// Size bounds: 5 is the smallest grid on which start and goal can be size-1 steps apart with room for
// obstacles; 11 is the largest side the position words and cell keys cover (grid.MaxSide) and keeps
// the default step cap (24 turns) within the policy's context. Sizes 8..11 add position words to
// the vocabulary (see Maze.Vocabulary); sizes 5..7 keep the words, tasks and keys they always had.
const (
	MinSize     = 5
	MaxSize     = grid.MaxSide
	DefaultSize = 5
)

// Config holds the options of a maze; the yaml tags are the keys of the env section of a config.
type Config struct {
	// Size is the side of the square grid.
	Size int `yaml:"size"`
	// Walls is the number of wall cells.
	Walls int `yaml:"walls"`
	// Traps is the number of trap cells; stepping on one ends the episode in failure.
	Traps int `yaml:"traps"`
	// MaxTurns is the step cap; it is at least the longest start-goal distance a layout can have.
	MaxTurns int `yaml:"max_turns"`
	// TurnCapFactor, when not 0, replaces max_turns by a cap per task: ⌈factor × the task's
	// optimal length⌉ (the start's distance to the goal), so that every task leaves the same
	// slack for detours relative to its length.
	TurnCapFactor float64 `yaml:"turn_cap_factor"`
	// InvalidPenalty is the per-step reward r_t of an invalid action.
	InvalidPenalty float64 `yaml:"invalid_penalty"`
	// SuccessReward is the outcome R of reaching the goal.
	SuccessReward float64 `yaml:"success_reward"`
	// Labelled names each neighbour with its direction in one word (up-open, left-trap …)
	// instead of four words in fixed order; see the package doc.
	Labelled bool `yaml:"labelled"`
	// GoalHint appends the direction of the goal relative to the agent (goal-up or goal-down,
	// goal-left or goal-right; none when aligned) to every observation.
	GoalHint bool `yaml:"goal_hint"`
	// IdleActions adds the action look, which changes nothing but spends a turn (no penalty, not
	// invalid; the observation is the current view): a step that wastes time without going
	// anywhere, a self-loop of the state graph (see envs.Idler and the sft section's idle rate).
	IdleActions bool `yaml:"idle_actions"`
}

// DefaultConfig returns the defaults for a grid of the given side. Obstacles and the turn cap grow
// with the grid so that the default task stays equally hard to stumble through.
func DefaultConfig(size int) Config {
	return Config{
		Size:           size,
		Walls:          2 * (size - 3),
		Traps:          size / 2,
		MaxTurns:       maxDistance(size) + 4,
		InvalidPenalty: -0.1,
		SuccessReward:  1,
	}
}

// maxDistance is the longest start-goal BFS distance the generator accepts (the corner-to-corner
// Manhattan distance), so that max_turns >= maxDistance always leaves the task solvable in time.
func maxDistance(size int) int { return 2 * (size - 1) }

// minDistance is the shortest start-goal BFS distance the generator accepts, so episodes are multi-turn.
func minDistance(size int) int { return size - 1 }

// maxWalls and maxTraps bound the obstacles so that the generator finds solvable layouts quickly.
func maxWalls(size int) int { return size * size / 4 }
func maxTraps(size int) int { return size }

// Validate checks the ranges of the options; the errors are *envs.OptionError naming the key.
func (c Config) Validate() error {
	if err := envs.CheckRange(Name, "size", c.Size, MinSize, MaxSize); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "walls", c.Walls, 0, maxWalls(c.Size)); err != nil {
		return grid.SizeNote(err, c.Size)
	}
	if err := envs.CheckRange(Name, "traps", c.Traps, 0, maxTraps(c.Size)); err != nil {
		return grid.SizeNote(err, c.Size)
	}
	if err := grid.CheckTurns(Name, c.Size, c.MaxTurns, DefaultConfig(c.Size).MaxTurns, c.TurnCapFactor,
		maxDistance(c.Size)); err != nil {
		return err
	}
	return envs.CheckRewards(Name, c.InvalidPenalty, c.SuccessReward)
}

// ConfigFromOptions decodes and validates the options of the env section. Walls, traps and max_turns
// default by size, so size is decoded first and the defaults of that size are then overridden.
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
		{Key: "walls", Default: bySize(func(c Config) int { return c.Walls }), Help: "number of wall cells, 0..size²/4"},
		{Key: "traps", Default: bySize(func(c Config) int { return c.Traps }), Help: "number of trap cells (stepping on one fails the episode), 0..size"},
		grid.MaxTurnsDoc(bySize(func(c Config) int { return c.MaxTurns }), "2*(size-1)"),
		grid.TurnCapDoc(),
		{Key: "labelled", Default: "false", Help: "neighbours as direction-labelled words (up-open …) instead of four words in fixed order"},
		{Key: "goal_hint", Default: "false", Help: "append the goal's direction (goal-up, goal-left …) to observations"},
		{Key: "idle_actions", Default: "false", Help: "add the action look, which changes nothing but spends a turn (a wasted step)"},
		envs.PenaltyDoc(d.InvalidPenalty, "action"),
		envs.SuccessDoc(d.SuccessReward, "reaching the goal"),
	}
}

func init() {
	envs.Register(envs.Spec{
		Name:        Name,
		Description: "reach the goal cell of a small grid around walls and traps, one move per turn",
		Options:     optionDocs(),
		New:         envs.Constructor(ConfigFromOptions, New),
	})
}
