package envs_test

import (
	"fmt"
	"strconv"

	"github.com/graftrl/graftrl/envs"
)

// countdown is a tiny environment: from a start number, the action "down" counts one down; reaching
// 0 is success. Any other text is an invalid action.
type countdown struct {
	start, n, turn int
}

// countdownOptions are countdown's configuration keys, holding their defaults before Decode.
type countdownOptions struct {
	Start int `yaml:"start"`
}

func (e *countdown) Reset(int64) (string, envs.Observation, error) {
	e.n, e.turn = e.start, 0
	return "count down to zero", envs.Observation{Text: "at " + strconv.Itoa(e.n), Info: envs.Info{Distance: e.n}}, nil
}

func (e *countdown) Step(action string) (envs.Observation, error) {
	e.turn++
	obs := envs.Observation{Truncated: e.turn >= e.MaxTurns()}
	if action != "down" {
		obs.Reward, obs.Info.Invalid = -0.1, true
	} else {
		e.n--
	}
	obs.Text, obs.Info.Distance = "at "+strconv.Itoa(e.n), e.n
	if e.n == 0 {
		obs.Done, obs.Truncated, obs.Outcome, obs.Info.Success = true, false, 1, true
	}
	return obs, nil
}

func (e *countdown) StateKey() string { return strconv.Itoa(e.n) }

func (e *countdown) Vocabulary() []string {
	return []string{"count", "down", "to", "zero", "at", "0", "1", "2", "3", "4", "5"}
}

func (e *countdown) MaxTurns() int { return 2 * e.start }

// An environment registers itself once, in its package's init: Register panics on a second
// registration of the name.
func init() {
	envs.Register(envs.Spec{
		Name:        "countdown",
		Description: "count down from a start number to zero, one step per turn",
		Options:     []envs.OptionDoc{{Key: "start", Default: "3", Help: "the number to count down from, 1..5"}},
		New: func(opts envs.Options) (envs.Env, error) {
			o := countdownOptions{Start: 3}
			if err := opts.Decode("countdown", &o); err != nil {
				return nil, err
			}
			if err := envs.CheckRange("countdown", "start", o.Start, 1, 5); err != nil {
				return nil, err
			}
			return &countdown{start: o.Start}, nil
		},
	})
}

// A registered environment is built by name from the options of a config's env section, as the
// trainer does for env.name; unknown keys and out-of-range values are refused by name.
func ExampleRegister() {
	e, err := envs.New("countdown", envs.Options{"start": 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	instruction, obs, _ := e.Reset(0)
	fmt.Printf("%s: %s\n", instruction, obs.Text)
	for _, action := range []string{"down", "up", "down"} {
		obs, _ = e.Step(action)
		fmt.Printf("%-4s → %s (key %s, reward %g, invalid %t, done %t, outcome %g)\n",
			action, obs.Text, e.StateKey(), obs.Reward, obs.Info.Invalid, obs.Done, obs.Outcome)
	}
	_, err = envs.New("countdown", envs.Options{"start": 9})
	fmt.Println(err)
	// Output:
	// count down to zero: at 2
	// down → at 1 (key 1, reward 0, invalid false, done false, outcome 0)
	// up   → at 1 (key 1, reward -0.1, invalid true, done false, outcome 0)
	// down → at 0 (key 0, reward 0, invalid false, done true, outcome 1)
	// env countdown: option "start": 9 is out of range (allowed 1..5)
}
