package frozenlake

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/grid"
)

// Name is the registry name of the environment.
const Name = "frozenlake"

// Size bounds: 4 is the classic lake; 8 is gymnasium's larger standard map and keeps the position
// words and the layout arrays small.
const (
	MinSize     = 4
	MaxSize     = 8
	DefaultSize = 4
)

// MaxSlip bounds the slip probability: beyond it a move goes sideways more often than ahead.
const MaxSlip = 0.9

// Config holds the options of a frozen lake; the yaml tags are the keys of the env section.
type Config struct {
	// Size is the side of the square lake.
	Size int `yaml:"size"`
	// Holes is the number of hole cells; stepping into one ends the episode in failure.
	Holes int `yaml:"holes"`
	// Slip is the probability that a move goes to one of the two perpendicular directions (half
	// each) instead of the intended one.
	Slip float64 `yaml:"slip"`
	// SlipSeed selects the random stream of the slips, together with the task seed and the episode
	// number of the instance (see the package doc).
	SlipSeed int64 `yaml:"slip_seed"`
	// MaxTurns is the step cap; it is at least the longest start-goal distance a layout can have.
	MaxTurns int `yaml:"max_turns"`
	// InvalidPenalty is the per-step reward r_t of an invalid action.
	InvalidPenalty float64 `yaml:"invalid_penalty"`
	// SuccessReward is the outcome R of reaching the goal.
	SuccessReward float64 `yaml:"success_reward"`
	// Map selects a standard lake, the same for every task seed, instead of one drawn per task
	// seed: MapGymnasium4x4 or MapGymnasium8x8. Empty (the default) draws the lakes.
	Map string `yaml:"map"`
	// SlipMode is how moves slip: SlipPerpendicular (the default, also when empty) or SlipGymnasium.
	SlipMode string `yaml:"slip_mode"`
}

// Standard maps (Config.Map).
const (
	// MapGymnasium4x4 is gymnasium's FrozenLake-v1 default 4×4 map, "SFFF FHFH FFFH HFFG": start
	// at r0 c0, goal at r3 c3, holes at r1 c1, r1 c3, r2 c3 and r3 c0.
	MapGymnasium4x4 = "4x4"
	// MapGymnasium8x8 is gymnasium's FrozenLake-v1 8×8 map (map_name="8x8"): start at r0 c0, goal
	// at r7 c7, 10 holes.
	MapGymnasium8x8 = "8x8"
)

// standardMaps holds the rows of each standard map in parseLayout's notation.
var standardMaps = map[string][]string{
	MapGymnasium4x4: {"S...", ".H.H", "...H", "H..G"},
	// SFFFFFFF FFFFFFFF FFFHFFFF FFFFFHFF FFFHFFFF FHHFFFHF FHFFHFHF FFFHFFFG
	MapGymnasium8x8: {"S.......", "........", "...H....", ".....H..", "...H....", ".HH...H.", ".H..H.H.", "...H...G"},
}

// Slip modes (Config.SlipMode).
const (
	// SlipPerpendicular: a move goes the intended way with probability 1−slip and to each of the
	// two perpendicular directions with probability slip/2; an intended move off the lake is an
	// invalid action.
	SlipPerpendicular = "perpendicular"
	// SlipGymnasium is gymnasium's FrozenLake is_slippery=True: a move goes the intended way and
	// to each of the two perpendicular directions with probability 1/3 each (the slip option is
	// not used), and every move is valid: one that goes off the lake leaves the agent in place,
	// an intended move towards the edge included.
	SlipGymnasium = "gymnasium"
)

// gymnasiumSlips reports whether moves slip as gymnasium's do (SlipGymnasium).
func (c Config) gymnasiumSlips() bool { return c.SlipMode == SlipGymnasium }

// DefaultConfig returns the defaults for a lake of the given side. The turn cap leaves twice the
// longest path for the detours that slips force.
func DefaultConfig(size int) Config {
	return Config{
		Size:           size,
		Holes:          size,
		Slip:           0.2,
		MaxTurns:       2*maxDistance(size) + 4,
		InvalidPenalty: -0.1,
		SuccessReward:  1,
	}
}

// maxDistance is the longest start-goal distance (ignoring slips) the generator accepts, the
// corner-to-corner Manhattan distance; minDistance the shortest, so that episodes are multi-turn.
func maxDistance(size int) int { return 2 * (size - 1) }
func minDistance(size int) int { return size - 1 }

// maxHoles bounds the holes so that the generator finds solvable layouts quickly.
func maxHoles(size int) int { return size * size / 4 }

// Validate checks the ranges of the options; the errors are *envs.OptionError naming the key.
func (c Config) Validate() error {
	if err := c.validateMap(); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "size", c.Size, MinSize, MaxSize); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "holes", c.Holes, 0, maxHoles(c.Size)); err != nil {
		return grid.SizeNote(err, c.Size)
	}
	if err := envs.CheckRange(Name, "slip", c.Slip, 0, MaxSlip); err != nil {
		return err
	}
	if err := envs.CheckRange(Name, "max_turns", c.MaxTurns, maxDistance(c.Size), grid.MaxTurnsLimit); err != nil {
		return grid.SizeNote(err, c.Size)
	}
	if err := envs.CheckRewards(Name, c.InvalidPenalty, c.SuccessReward); err != nil {
		return err
	}
	if c.SlipMode != "" && c.SlipMode != SlipPerpendicular && c.SlipMode != SlipGymnasium {
		return &envs.OptionError{Env: Name, Key: "slip_mode", Value: c.SlipMode,
			Reason: "is not a slip mode", Allowed: SlipPerpendicular + ", " + SlipGymnasium}
	}
	return nil
}

// validateMap checks that size and holes agree with a standard map (first, so that a size that
// contradicts the map is named as such rather than as a hole count out of range).
func (c Config) validateMap() error {
	if c.Map == "" {
		return nil
	}
	rows, ok := standardMaps[c.Map]
	if !ok {
		return &envs.OptionError{Env: Name, Key: "map", Value: c.Map, Reason: "is not a standard map", Allowed: MapGymnasium4x4 + ", " + MapGymnasium8x8}
	}
	if c.Size != len(rows) {
		return &envs.OptionError{Env: Name, Key: "size", Value: c.Size, Reason: "differs from the map's",
			Allowed: strconv.Itoa(len(rows)) + " for map " + c.Map}
	}
	if h := mapHoles(rows); c.Holes != h {
		return &envs.OptionError{Env: Name, Key: "holes", Value: c.Holes, Reason: "differs from the map's",
			Allowed: strconv.Itoa(h) + " for map " + c.Map}
	}
	return nil
}

// mapHoles counts the holes of a map's rows.
func mapHoles(rows []string) int {
	n := 0
	for _, r := range rows {
		n += strings.Count(r, "H")
	}
	return n
}

// ConfigFromOptions decodes and validates the options of the env section. Holes and max_turns
// default by size, so size is decoded first and the defaults of that size are then overridden.
func ConfigFromOptions(opts envs.Options) (Config, error) {
	return envs.DecodeOptions(Name, opts, DefaultConfig(DefaultSize), func(probe Config) (Config, error) {
		if err := envs.CheckRange(Name, "size", probe.Size, MinSize, MaxSize); err != nil {
			return Config{}, err
		}
		rows, ok := standardMaps[probe.Map]
		if !ok {
			return DefaultConfig(probe.Size), nil
		}
		// A map fixes the side and the holes; explicit size and holes keys must agree with it.
		cfg := DefaultConfig(len(rows))
		cfg.Holes = mapHoles(rows)
		return cfg, nil
	})
}

func optionDocs() []envs.OptionDoc {
	d := DefaultConfig(DefaultSize)
	bySize := func(f func(Config) int) string {
		return fmt.Sprintf("%d, %d, %d, %d (size 4, 5, 6, 7)", f(DefaultConfig(4)), f(DefaultConfig(5)), f(DefaultConfig(6)), f(DefaultConfig(7)))
	}
	return []envs.OptionDoc{
		{Key: "size", Default: strconv.Itoa(d.Size), Help: fmt.Sprintf("side of the square lake, %d..%d", MinSize, MaxSize)},
		{Key: "holes", Default: bySize(func(c Config) int { return c.Holes }), Help: "number of holes (stepping into one fails the episode), 0..size²/4"},
		{Key: "slip", Default: strconv.FormatFloat(d.Slip, 'g', -1, 64), Help: fmt.Sprintf("probability that a move goes sideways instead, 0..%g", MaxSlip)},
		{Key: "slip_seed", Default: "0", Help: "selects the random stream of the slips (with the task seed and the instance's episode number)"},
		grid.MaxTurnsDoc(bySize(func(c Config) int { return c.MaxTurns }), "2*(size-1)"),
		envs.PenaltyDoc(d.InvalidPenalty, "action"),
		envs.SuccessDoc(d.SuccessReward, "reaching the goal"),
		{Key: "map", Default: `""`, Help: "a standard lake for every task seed instead of one drawn per seed: 4x4 (gymnasium's FrozenLake-v1 map SFFF FHFH FFFH HFFG) or 8x8 (its map_name=\"8x8\")"},
		{Key: "slip_mode", Default: SlipPerpendicular, Help: "perpendicular (slip/2 each way, moves off the lake invalid) or gymnasium (is_slippery=True: ahead, left, right 1/3 each, every move valid)"},
	}
}

func init() {
	envs.Register(envs.Spec{
		Name:        Name,
		Description: "cross a slippery frozen lake to the goal around holes; moves go sideways with the slip probability",
		Options:     optionDocs(),
		New:         envs.Constructor(ConfigFromOptions, New),
	})
}
