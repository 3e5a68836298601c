package openenv_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/openenv"
	"github.com/graftrl/graftrl/internal/interoptest"
)

// Local episodes for the OpenEnv client check (scripts/interop/openenv_client_check.py):
// TestInteropEpisodesExport plays a few episodes of every registered env locally, with its
// default options, and writes them as JSON into $GRAFTRL_INTEROP_OUT when it is set, else into a
// temporary directory. The check replays the same task seeds, episode seeds and actions with
// OpenEnv's own Python client against `graftrl serve-env` and compares every reply with them.

// interopStep is one recorded step: the action sent and what the local env returned.
type interopStep struct {
	Action     string             `json:"action"`
	Text       string             `json:"text"`
	StateKey   string             `json:"state_key"`
	StepReward float64            `json:"step_reward"`
	Outcome    float64            `json:"outcome"`
	Done       bool               `json:"done"`
	Truncated  bool               `json:"truncated"`
	Success    bool               `json:"success"`
	Invalid    bool               `json:"invalid_action"`
	Distance   int                `json:"distance"`
	Extra      map[string]float64 `json:"extra,omitempty"`
}

// interopEpisode is one local episode: its seeds, the reset's instruction and observation, and
// its steps up to the end (termination or the step cap).
type interopEpisode struct {
	Env           string        `json:"env"`
	TaskSeed      int64         `json:"task_seed"`
	EpisodeSeed   *int64        `json:"episode_seed"`
	Instruction   string        `json:"instruction"`
	Text          string        `json:"text"`
	StateKey      string        `json:"state_key"`
	ResetDistance int           `json:"distance"`
	Steps         []interopStep `json:"steps"`
}

// interopActions is how the export picks the next action: mostly the env's expert, sometimes a
// random action word, sometimes a word that is no action (an invalid action), so that episodes
// reach successes, failures, invalid actions and step caps.
func interopAction(rng *rand.Rand, expert func() (string, error), words []string) (string, error) {
	u := rng.Float64()
	switch {
	case u < 0.1:
		return "bogus", nil
	case u < 0.35 && len(words) > 0:
		return words[rng.IntN(len(words))], nil
	case expert != nil:
		return expert()
	case len(words) > 0:
		return words[rng.IntN(len(words))], nil
	}
	return "bogus", nil
}

// playInterop plays one episode on env: fixed actions when given, else picked by interopAction.
func playInterop(t *testing.T, env envs.Env, name string, task int64, episodeSeed *int64, rng *rand.Rand, actions []string) interopEpisode {
	t.Helper()
	if episodeSeed != nil {
		env.(envs.EpisodeSeeder).SeedEpisode(*episodeSeed)
	}
	instr, first, err := env.Reset(task)
	if err != nil {
		t.Fatalf("%s task %d: reset: %v", name, task, err)
	}
	ep := interopEpisode{Env: name, TaskSeed: task, EpisodeSeed: episodeSeed, Instruction: instr,
		Text: first.Text, StateKey: env.StateKey(), ResetDistance: first.Info.Distance}
	expert, _ := envs.ExpertOf(env)
	var words []string
	if aw, ok := env.(envs.ActionWorder); ok {
		words = aw.ActionWords()
	}
	for i := 0; ; i++ {
		var a string
		if actions != nil {
			if i == len(actions) {
				t.Fatalf("%s task %d: the replay is longer than the recording", name, task)
			}
			a = actions[i]
		} else if a, err = interopAction(rng, expert, words); err != nil {
			t.Fatalf("%s task %d: expert: %v", name, task, err)
		}
		o, err := env.Step(a)
		if err != nil {
			t.Fatalf("%s task %d: step %q: %v", name, task, a, err)
		}
		ep.Steps = append(ep.Steps, interopStep{Action: a, Text: o.Text, StateKey: env.StateKey(),
			StepReward: o.Reward, Outcome: o.Outcome, Done: o.Done, Truncated: o.Truncated,
			Success: o.Info.Success, Invalid: o.Info.Invalid, Distance: o.Info.Distance, Extra: o.Info.Extra})
		if o.Over() {
			return ep
		}
	}
}

// TestInteropEpisodesExport records four episodes (task seeds 0 to 3) of every registered env
// with its default options, checks that a fresh instance replays each of them exactly (the check
// against the server relies on it) and that they cover endings and invalid actions, and writes
// openenv_episodes.json.
func TestInteropEpisodesExport(t *testing.T) {
	var all []interopEpisode
	var invalid, success, capped int
	for _, name := range envs.Names() {
		if name == openenv.Name {
			continue
		}
		for task := int64(0); task < 4; task++ {
			env, err := envs.New(name, envs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var episodeSeed *int64
			if _, ok := env.(envs.EpisodeSeeder); ok {
				s := 1000 + 7*task
				episodeSeed = &s
			}
			ep := playInterop(t, env, name, task, episodeSeed, rand.New(rand.NewPCG(uint64(task), 11)), nil)
			envs.Close(env)
			actions := make([]string, len(ep.Steps))
			for i, s := range ep.Steps {
				actions[i] = s.Action
				if s.Invalid {
					invalid++
				}
				if s.Success {
					success++
				}
				if s.Truncated {
					capped++
				}
			}
			again, err := envs.New(name, envs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if replay := playInterop(t, again, name, task, episodeSeed, nil, actions); !reflect.DeepEqual(replay, ep) {
				t.Errorf("%s task %d: a fresh instance replays the episode differently:\n%+v\n%+v", name, task, replay, ep)
			}
			envs.Close(again)
			all = append(all, ep)
		}
	}
	if invalid == 0 || success == 0 {
		t.Errorf("the episodes have %d invalid actions and %d successes; want some of each", invalid, success)
	}
	t.Logf("%d episodes: %d invalid actions, %d successes, %d truncated", len(all), invalid, success, capped)
	if b := interoptest.WriteJSON(t, "openenv_episodes.json", map[string]any{"episodes": all}); !strings.Contains(string(b), `"env": "maze"`) {
		t.Errorf("maze is missing from the export")
	}
}
