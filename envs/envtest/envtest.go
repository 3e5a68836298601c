// Package envtest is the conformance suite of graftrl environments: the properties the rollout
// collector and the step-level estimators rely on, checked on any envs.Env. Each environment package
// calls Run from a test and Fuzz from a fuzz target of its action parser:
//
//	func TestConformance(t *testing.T) {
//		envtest.Run(t, newEnv, envtest.ActionSet("up", "down", "left", "right"), envtest.Penalty(-0.1))
//	}
//
//	func FuzzMazeStep(f *testing.F) { envtest.Fuzz(f, newEnv) }
//
// The suite drives the env only through the envs.Env interface, and through envs.Cloner when the env
// implements it (the checks that need a copy are skipped otherwise), so that it applies unchanged to
// a remote env client. Episodes are played by a seeded random policy over the env's own vocabulary
// that remembers the texts the env accepted, mixed with garbage text; everything is reproducible.
//
// Run checks, one subtest each:
//
//   - Determinism: two instances given the same task seeds and the same actions return identical
//     instructions, observations (rewards, infos) and state keys; a third instance that resets the
//     seeds in another order gets the same tasks; Reset of one seed twice gives the same task.
//   - StepCap: no episode runs past MaxTurns steps; an episode that is not terminated earlier ends
//     exactly at the cap, with Truncated (and not Done) set; Done and Truncated are never both set;
//     Step before Reset and after the end is an error, not a panic.
//   - Rewards: the first observation carries no reward or flag; Outcome is 0 unless the step
//     succeeded, Success implies Done, Outcome > 0 on success.
//   - InvalidActions: garbage text (and the texts given with Invalid) sets Info.Invalid, costs the
//     penalty (one value for every invalid step, <= 0, or the one given with Penalty), ends nothing
//     but by the step cap, leaves the state key and Info.Distance as they were.
//   - StateKeys: the key is a function of the state, not of the history: after the same key the same
//     action gives the same result (observation, reward, info, next key; skipped for Stochastic and
//     Aliased envs, where only the validity of the action must agree); the observation of a state is
//     a function of its key (different observations never share a key; skipped for Aliased envs);
//     some key is reached by two valid-action histories of different lengths (a key that encodes the
//     history never is); StateKey has no side effect.
//   - Distance: Info.Distance is >= 0, envs.DistUnknown or envs.DistDead; 0 exactly on success;
//     DistDead or DistUnknown on a failed end; a valid step lowers a known distance by at most 1
//     (deterministic envs). With ActionSet and a Cloner, the distance obeys the Bellman equation of
//     shortest paths in every visited state: d(s) = 1 + min over actions of d(s'), and from a dead
//     state no action leads to success.
//   - Vocabulary: non-empty, no duplicates, no empty words or words with spaces, the same for every
//     instance and task seed, returned as a copy, at most MaxVocabulary words; every word of every
//     instruction, observation and accepted action of the random episodes is in it; texts are words
//     separated by single spaces. When the env has an ActionWords method (envs.ActionWorder), its
//     words are distinct vocabulary words and every accepted action uses only them.
//   - Clone: a clone starts with the original's key; stepping and resetting a clone leaves the
//     original untouched; the original and a second clone then continue identically.
//   - Idle: where the env has idle actions (envs.Idler), each is valid in every state, spends a
//     turn and changes nothing: the same key and distance, and (with a Cloner) the same future.
//   - ArbitraryText: random bytes, Unicode and word soups never panic or return an error.
//
// RunExpert checks the expert of an env that offers one (envs.ExpertOf) and its ValidActions on a
// panel of tasks; RunWithExpert runs both suites.
//
// Beside the suite, every env's own tests share the golden transcript whose hash pins what an env
// says and does (CheckGolden), tables of expected steps and options, the breadth-first oracle of
// distances (Oracle, StepsToSuccess), and the benchmark loops of Step and Reset.
package envtest

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
)

// Option adjusts the suite to what the environment declares about itself.
type Option func(*suite)

// Actions seeds the random policy with action texts the env accepts in some states (the policy
// also learns accepted texts as it plays). Every word of them must be in the vocabulary.
func Actions(texts ...string) Option {
	return func(s *suite) { s.actions = append(s.actions, texts...) }
}

// ActionSet gives action texts that cover every valid transition of every state (for example the
// four moves of a grid world), which enables the Bellman check of Info.Distance. It implies Actions.
func ActionSet(texts ...string) Option {
	return func(s *suite) {
		s.actions = append(s.actions, texts...)
		s.actionSet = append(s.actionSet, texts...)
	}
}

// Invalid adds texts that must be invalid actions in every state, on top of the suite's garbage.
func Invalid(texts ...string) Option {
	return func(s *suite) { s.invalid = append(s.invalid, texts...) }
}

// Penalty sets the reward every invalid action must have.
func Penalty(p float64) Option {
	return func(s *suite) { s.penalty, s.hasPenalty = p, true }
}

// Stochastic declares that a state and an action may lead to different next states (the env draws
// randomness); only the validity of an action must then be a function of the state key.
func Stochastic() Option { return func(s *suite) { s.stochastic = true } }

// Aliased declares that the state key deliberately merges different states, so neither the
// observation nor the result of an action needs to be a function of the key.
func Aliased() Option { return func(s *suite) { s.aliased = true } }

// Seeds replaces the task seeds the suite plays.
func Seeds(seeds ...int64) Option {
	return func(s *suite) { s.seeds = append([]int64(nil), seeds...) }
}

// Episodes sets the number of random episodes played per task seed (default 8).
func Episodes(n int) Option { return func(s *suite) { s.episodes = n } }

// MaxVocabulary bounds the vocabulary size.
func MaxVocabulary(n int) Option { return func(s *suite) { s.maxVocab = n } }

// suite holds the options of one Run or Fuzz.
type suite struct {
	newEnv     func() (envs.Env, error)
	actions    []string
	actionSet  []string
	invalid    []string
	penalty    float64
	hasPenalty bool
	stochastic bool
	aliased    bool
	seeds      []int64
	episodes   int
	maxVocab   int
}

func newSuite(newEnv func() (envs.Env, error), opts []Option) *suite {
	s := &suite{
		newEnv: newEnv,
		// Small seeds, a negative one and one of a later panel (see envs.TaskSeeds).
		seeds:    []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -3, 2_000_017},
		episodes: 8,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// garbage returns texts no environment accepts as an action: empty, blank, words of no vocabulary,
// control bytes, invalid UTF-8, the policy's special tokens, and a long run of letters.
func garbage() []string {
	return []string{"", " ", "\t\n", "xyzzy", "xyzzy plugh", "🙂", "\x00", "\xff\xfe", "<eoa>", "<unk> <pad>",
		"\u212a", "ü", strings.Repeat("q", 300), "qq qq qq qq qq qq qq qq qq qq qq qq"}
}

// Run runs the conformance suite on instances made by newEnv (see the package doc). Each call of
// newEnv must return a fresh instance with the same configuration.
func Run(t *testing.T, newEnv func() (envs.Env, error), opts ...Option) {
	t.Helper()
	s := newSuite(newEnv, opts)
	probe := s.mustNew(t)
	if probe.MaxTurns() < 1 {
		t.Fatalf("MaxTurns() = %d, want >= 1", probe.MaxTurns())
	}
	// One recording of random episodes serves the checks that only read episodes.
	rec := s.record(t, s.mustNew(t), 1)
	t.Run("Determinism", func(t *testing.T) { s.determinism(t) })
	t.Run("StepCap", func(t *testing.T) { s.stepCap(t, rec) })
	t.Run("Rewards", func(t *testing.T) { s.rewards(t, rec) })
	t.Run("InvalidActions", func(t *testing.T) { s.invalidActions(t, rec) })
	t.Run("StateKeys", func(t *testing.T) { s.stateKeys(t, rec) })
	t.Run("Distance", func(t *testing.T) { s.distance(t, rec) })
	t.Run("Vocabulary", func(t *testing.T) { s.vocabulary(t, rec) })
	t.Run("Clone", func(t *testing.T) { s.clone(t) })
	t.Run("Idle", func(t *testing.T) { s.idle(t) })
	t.Run("ArbitraryText", func(t *testing.T) { s.arbitraryText(t) })
}

func (s *suite) mustNew(t testing.TB) envs.Env {
	t.Helper()
	e, err := s.newEnv()
	if err != nil {
		t.Fatalf("newEnv: %v", err)
	}
	if e == nil {
		t.Fatal("newEnv returned a nil Env")
	}
	return e
}

// player is the random policy of the suite. It proposes the texts the env accepted before (and those
// given with Actions), preferring, when the env is an envs.Cloner, those a clone accepts in the
// current state; fresh soups of one to three vocabulary words; and garbage.
type player struct {
	rng    *rand.Rand
	vocab  []string
	pool   []string
	inPool map[string]bool
}

// maxPool bounds the remembered texts, so that a large action space does not crowd out exploration;
// probeSize bounds the texts tried on clones per turn.
const (
	maxPool   = 512
	probeSize = 24
)

func newPlayer(seed uint64, vocab, actions []string) *player {
	p := &player{rng: rand.New(rand.NewPCG(seed, 0x656e7674)), vocab: vocab, inPool: map[string]bool{}}
	for _, a := range actions {
		p.remember(a)
	}
	return p
}

func (p *player) remember(a string) {
	if !p.inPool[a] && len(p.pool) < maxPool {
		p.inPool[a] = true
		p.pool = append(p.pool, a)
	}
}

// next returns the action text for the current state of e.
func (p *player) next(e envs.Env) string {
	x := p.rng.IntN(20)
	switch {
	case x == 0:
		g := garbage()
		return g[p.rng.IntN(len(g))]
	case x < 3 || len(p.pool) == 0:
		if len(p.vocab) == 0 {
			return "xyzzy"
		}
		return p.soup(1 + p.rng.IntN(3))
	case x < 17:
		if a, ok := p.probe(e); ok {
			return a
		}
	}
	return p.pool[p.rng.IntN(len(p.pool))]
}

// probe tries up to probeSize remembered texts on clones of e and returns one a clone accepted; ok is
// false when e is not a Cloner or no text was accepted. The accepted texts are grouped by their first
// word and a group is drawn first, so that a verb with many arguments (a search with many queries)
// does not crowd out one without (buy).
func (p *player) probe(e envs.Env) (string, bool) {
	c, isCloner := e.(envs.Cloner)
	if !isCloner {
		return "", false
	}
	groups := map[string][]string{}
	var verbs []string
	tried := map[string]bool{}
	for range min(probeSize, len(p.pool)) {
		a := p.pool[p.rng.IntN(len(p.pool))]
		if tried[a] {
			continue
		}
		tried[a] = true
		o, err, pan := safeStep(c.Clone(), a)
		if pan != nil {
			// The caller's step reports it, with the action and the state.
			return a, true
		}
		if err != nil || o.Info.Invalid {
			continue
		}
		verb, _, _ := strings.Cut(strings.TrimSpace(a), " ")
		if groups[verb] == nil {
			verbs = append(verbs, verb)
		}
		groups[verb] = append(groups[verb], a)
	}
	if len(verbs) == 0 {
		return "", false
	}
	g := groups[verbs[p.rng.IntN(len(verbs))]]
	return g[p.rng.IntN(len(g))], true
}

// soup returns n random vocabulary words separated by single spaces.
func (p *player) soup(n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = p.vocab[p.rng.IntN(len(p.vocab))]
	}
	return strings.Join(words, " ")
}

// learn remembers an action the env accepted.
func (p *player) learn(action string, obs envs.Observation) {
	if !obs.Info.Invalid {
		p.remember(action)
	}
}

// turn is one recorded step: the action, what the env returned and the state key after it.
type turn struct {
	action string
	obs    envs.Observation
	key    string
}

// episode is one recorded episode.
type episode struct {
	seed        int64
	cap         int // the task's step cap (envs.TurnCapOf after Reset)
	instruction string
	first       envs.Observation
	key0        string
	turns       []turn
}

// prev returns the observation and key before turn i.
func (ep *episode) prev(i int) (envs.Observation, string) {
	if i == 0 {
		return ep.first, ep.key0
	}
	return ep.turns[i-1].obs, ep.turns[i-1].key
}

// record plays s.episodes random episodes of every seed on e, the seeds taking turns so that the
// env switches tasks between episodes.
func (s *suite) record(t *testing.T, e envs.Env, playerSeed uint64) []episode {
	t.Helper()
	p := newPlayer(playerSeed, e.Vocabulary(), s.actions)
	var eps []episode
	for range s.episodes {
		for _, seed := range s.seeds {
			eps = append(eps, s.playEpisode(t, e, p, seed, nil))
		}
	}
	return eps
}

// playEpisode plays one episode of the task seed with actions from p; when pick is not nil it chooses
// the action of each turn instead (given the turn index and p's proposal).
func (s *suite) playEpisode(t testing.TB, e envs.Env, p *player, seed int64, pick func(i int, proposal string) string) episode {
	t.Helper()
	ins, first, err := e.Reset(seed)
	if err != nil {
		t.Fatalf("Reset(%d): %v", seed, err)
	}
	ep := episode{seed: seed, cap: envs.TurnCapOf(e), instruction: ins, first: first, key0: e.StateKey()}
	if first.Over() {
		t.Fatalf("Reset(%d): the first observation ends the episode: %+v", seed, first)
	}
	limit := ep.cap
	for i := 0; ; i++ {
		if i >= limit {
			t.Fatalf("seed %d: the episode is not over after MaxTurns (its step cap) = %d steps (actions %v)", seed, limit, actionsOf(ep))
		}
		a := p.next(e)
		if pick != nil {
			a = pick(i, a)
		}
		obs := mustStep(t, e, a)
		p.learn(a, obs)
		ep.turns = append(ep.turns, turn{action: a, obs: obs, key: e.StateKey()})
		if obs.Over() {
			return ep
		}
	}
}

func actionsOf(ep episode) []string {
	var as []string
	for _, tu := range ep.turns {
		as = append(as, tu.action)
	}
	return as
}
