package rollout

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/tokens"
)

// Context layouts (ARCHITECTURE.md, Tokens).
const (
	// LayoutEpisode makes the whole episode one sequence: instruction, then observation/action
	// turns; the KV cache is reused across turns and each trajectory is one training row.
	LayoutEpisode = "episode"
	// LayoutWindow makes each step its own row: instruction, the last K turns, the current observation.
	LayoutWindow = "window"
)

// Decoder is the policy side of a rollout: one incremental decode step for a batch of rows.
// Rows with active[b] false may be skipped; their logits are ignored.
type Decoder interface {
	Step(tokens, pos []int32, active []bool) ([]float32, error)
}

// Config configures how episodes become token sequences.
type Config struct {
	// Layout is LayoutEpisode or LayoutWindow.
	Layout string
	// WindowTurns is K, the number of past turns a window-layout row keeps.
	WindowTurns int
	// MaxLen is the policy's context length; an episode that would outgrow it is truncated.
	MaxLen int
	// ActionMaxTokens caps an action's length (excluding the end-of-action token).
	ActionMaxTokens int
	// StepTimeout bounds each env Reset and Step (0: no limit). An env that takes longer ends its
	// episode as an error and is replaced by a fresh instance.
	StepTimeout time.Duration
	// ActionBias, when set, is added to the logits of every action token before sampling
	// (policy.Policy.ActionBias: the mask of tokens an action may use).
	ActionBias []float32
	// Retries is how many times an episode whose env lost its session (envs.ErrSessionLost) is
	// replayed on a new session before it counts as an error (0: never).
	Retries int
}

// Validate checks the layout options.
func (c Config) Validate() error {
	if c.Layout != LayoutEpisode && c.Layout != LayoutWindow {
		return fmt.Errorf("rollout.layout: %q is not allowed (allowed: episode, window)", c.Layout)
	}
	if c.WindowTurns < 0 || c.WindowTurns > 64 {
		return fmt.Errorf("rollout.window_turns: %d is out of range (allowed 0..64)", c.WindowTurns)
	}
	if c.ActionMaxTokens < 1 || c.ActionMaxTokens > 64 {
		return fmt.Errorf("rollout.action_max_tokens: %d is out of range (allowed 1..64)", c.ActionMaxTokens)
	}
	if c.Retries < 0 || c.Retries > 100 {
		return fmt.Errorf("faults.retries: %d is out of range (allowed 0..100)", c.Retries)
	}
	return nil
}

// PromptLen is the context an episode's first row holds before its first action: the
// instruction (Format.Instruction), then the first observation and the marker of the agent's
// turn (Format.Turn). An episode needs MaxLen ≥ PromptLen + ActionRoom to act at all; a shorter
// one is truncated before its first action.
func PromptLen(f Format, instruction, observation string) int {
	return len(f.Instruction(instruction)) + len(f.Turn(observation))
}

// LongestPrompt is the longest PromptLen of the tasks seeds, each reset on e in turn. A reset
// that fails or panics is left out (the episodes will say what is wrong with the env); one that
// outlasts timeout (> 0) ends the probe, since the next reset would hang too.
func LongestPrompt(e envs.Env, f Format, seeds []int64, timeout time.Duration) int {
	longest := 0
	for _, seed := range seeds {
		type first struct {
			instr string
			obs   envs.Observation
			err   error
		}
		done := make(chan first, 1)
		go func() {
			instr, obs, err := safeReset(e, seed)
			done <- first{instr, obs, err}
		}()
		var expired <-chan time.Time
		if timeout > 0 {
			expired = time.After(timeout)
		}
		select {
		case first := <-done:
			if first.err == nil {
				longest = max(longest, PromptLen(f, first.instr, first.obs.Text))
			}
		case <-expired:
			return longest
		}
	}
	return longest
}

// Stats summarise one collection.
type Stats struct {
	Episodes, EnvSteps, SampledTokens, DecodeCalls int
	// Retried counts the episodes that lost their env session and were completed on a new one.
	Retried             int
	EnvTime, DecodeTime time.Duration
}

// Request says what to roll out.
type Request struct {
	// Tasks are the task seeds; each is rolled out Group times.
	Tasks []int64
	Group int
	// Greedy picks the most likely token instead of sampling.
	Greedy bool
}

// newBatch lays out the request's trajectories, Group per task in task order, before any step.
func (req Request) newBatch() *Batch {
	b := &Batch{Tasks: len(req.Tasks)}
	for ti, seed := range req.Tasks {
		for range req.Group {
			b.Trajs = append(b.Trajs, Trajectory{Task: ti, TaskSeed: seed})
		}
	}
	return b
}

// Collector runs many episodes at once, feeding all active rows to the decoder in one batched
// call per token.
type Collector struct {
	cfg    Config
	format Format
	newEnv func() (envs.Env, error)
	// envs are the instances, one per episode that may run at once; an entry is nil after its
	// instance was abandoned in a call that the context cancelled, and rebuilt when needed.
	envs    []envs.Env
	width   int // decoder rows: Slots()
	scratch []float32
	// stopped is set when the context of the collection in progress made it abandon a call or
	// a retry: the collection then ends with the context's error.
	stopped atomic.Bool
}

// stopGrace is how long a call still in progress when the collection's context ends may take
// before it is abandoned: healthy calls complete, so a stop signal lets the iteration finish,
// while a call waiting on a remote server does not hold the stop up.
const stopGrace = 2 * time.Second

// NewCollector creates a collector for a decoder of slots rows, laying its episodes out in
// format f. newEnv builds one env instance
// per parallel episode — slots of them, or fewer when the env says that fewer may run at once
// (envs.Parallel: a remote server's session cap) — and more to replace instances whose calls
// time out. The collector owns every instance it builds: Close releases them.
func NewCollector(cfg Config, f Format, newEnv func() (envs.Env, error), slots int) (*Collector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Collector{cfg: cfg, format: f, newEnv: newEnv, width: slots}
	n := slots
	for len(c.envs) < n {
		e, err := newEnv()
		if err != nil {
			c.Close()
			return nil, err
		}
		if p, ok := e.(envs.Parallel); ok && len(c.envs) == 0 && p.MaxParallel() > 0 {
			n = min(n, p.MaxParallel())
		}
		c.envs = append(c.envs, e)
	}
	return c, nil
}

// Close closes the collector's env instances (envs.Close), each once, and returns the first
// error. An instance abandoned after a timed-out call is closed when that call returns, if it
// ever does. The collector must not be used afterwards; closing twice is harmless.
func (c *Collector) Close() error {
	var first error
	for _, e := range c.envs {
		if e == nil {
			continue
		}
		if err := envs.Close(e); err != nil && first == nil {
			first = err
		}
	}
	c.envs = nil
	return first
}

// Slots is the decoder batch size: the number of parallel episodes, unless the env allows fewer
// (Parallel).
func (c *Collector) Slots() int { return c.width }

// Parallel is the number of episodes that run at once: Slots(), or the env's MaxParallel when
// that is smaller.
func (c *Collector) Parallel() int { return len(c.envs) }

// instance returns slot i's env, building a new one when the last was abandoned.
func (c *Collector) instance(i int) (envs.Env, error) {
	if c.envs[i] == nil {
		e, err := c.newEnv()
		if err != nil {
			return nil, err
		}
		c.envs[i] = e
	}
	return c.envs[i], nil
}

// slot is the state of one running episode.
type slot struct {
	idx      int // index of the slot's env in Collector.envs
	traj     *Trajectory
	instr    []int32 // the row's opening (Format.Instruction)
	turns    [][]int32
	seq      []int32 // the current row's tokens
	logp     []float32
	stepOf   []int16
	fed      int // tokens of seq already in the decoder's cache
	acting   bool
	action   []int32
	capped   bool // the action reached the token cap without its end token
	key      string
	over     bool
	turnBase int // in the window layout: index in seq where the current turn starts
	// untrained makes the current action's tokens context rather than targets (a demonstration's
	// exploration noise).
	untrained bool

	// What a replay on a new session checks against (see retry): the episode seed passed to
	// the env (seeded: it took one), the reset's instruction, observation and state key, and the
	// observation after each step.
	episodeSeed int64
	seeded      bool
	instrText   string
	first       envs.Observation
	firstKey    string
	obs         []envs.Observation
	// lost is the error of a call whose session was lost, waiting for a retry (settle): the
	// Reset (lostReset) or the Step of action pending.
	lost      error
	lostReset bool
	pending   string
	retried   bool
}

// Collect rolls out every task of the request Group times and returns the batch. Episodes run
// in waves of Parallel() episodes. rng drives sampling; the draw order is fixed, so the same seed
// gives the same batch. A fault in one episode (error or panic in the env) ends only that
// episode, recorded in Trajectory.Err; an episode whose env lost its session is replayed on a
// new one first (Config.Retries), which changes nothing else in the batch.
func (c *Collector) Collect(dec Decoder, req Request, rng *rand.Rand) (*Batch, Stats, error) {
	return c.CollectContext(context.Background(), dec, req, rng)
}

// CollectContext is Collect that stops waiting when ctx is done: an env call that has not
// returned stopGrace after that (a hung env, a wait for a remote server), or a retry's backoff, is
// abandoned (the instance is closed when its call returns and rebuilt for the next collection)
// and ctx's error is returned, without a batch. A collection whose calls all return in time
// completes.
func (c *Collector) CollectContext(ctx context.Context, dec Decoder, req Request, rng *rand.Rand) (*Batch, Stats, error) {
	var st Stats
	c.stopped.Store(false)
	b := req.newBatch()
	for start := 0; start < len(b.Trajs); start += len(c.envs) {
		end := min(start+len(c.envs), len(b.Trajs))
		if err := c.wave(ctx, dec, b.Trajs[start:end], req.Greedy, rng, &st); err != nil {
			return nil, st, err
		}
	}
	st.Episodes = len(b.Trajs)
	return b, st, nil
}

// wave runs len(trajs) ≤ Parallel() episodes to completion.
func (c *Collector) wave(ctx context.Context, dec Decoder, trajs []Trajectory, greedy bool, rng *rand.Rand, st *Stats) error {
	n := c.width
	slots := make([]*slot, n)
	for i := range trajs {
		s := &slot{idx: i, traj: &trajs[i]}
		slots[i] = s
		if c.prepare(s, rng.Int64) {
			c.reset(ctx, s, st)
		}
	}
	if err := c.settle(ctx, slots, st); err != nil {
		return err
	}
	tokens, pos := make([]int32, n), make([]int32, n)
	active := make([]bool, n)
	vocab := c.format.Size()
	for {
		logits, live, err := decode(dec, slots, tokens, pos, active, st)
		if err != nil || !live {
			return err
		}
		for i, s := range slots {
			if !active[i] {
				continue
			}
			s.fed++
			if s.fed < len(s.seq) || !s.acting {
				continue
			}
			lg := logits[i*vocab : (i+1)*vocab]
			if c.cfg.ActionBias != nil {
				lg = c.masked(lg)
			}
			tok, lp := SampleToken(lg, greedy, rng)
			st.SampledTokens++
			c.take(ctx, s, tok, lp, st)
		}
		if err := c.settle(ctx, slots, st); err != nil {
			return err
		}
	}
}

// take appends a policy token and its log-prob to s. When the token ends the action (the end
// token, or the cap reached, which is closed by a forced end token — context, not trained — where
// actions may have several tokens; one-token actions need none) the action goes to the env. It
// reports whether it did.
func (c *Collector) take(ctx context.Context, s *slot, tok int32, lp float32, st *Stats) bool {
	s.seq = append(s.seq, tok)
	s.logp = append(s.logp, lp)
	k := int16(len(s.traj.Steps))
	if s.untrained {
		k = -1
	}
	s.stepOf = append(s.stepOf, k)
	s.capped = false
	if tok != c.format.End() {
		s.action = append(s.action, tok)
		if len(s.action) < c.cfg.ActionMaxTokens {
			return false
		}
		s.capped = true
		if c.format.ForcedEnd(c.cfg.ActionMaxTokens) {
			c.push(s, c.format.End())
		}
	}
	c.push(s, c.format.AfterAction()...)
	c.act(ctx, s, st)
	return true
}

// masked returns logits plus the action bias (in a scratch buffer reused across calls).
func (c *Collector) masked(logits []float32) []float32 {
	if len(c.scratch) != len(logits) {
		c.scratch = make([]float32, len(logits))
	}
	for i, l := range logits {
		c.scratch[i] = l + c.cfg.ActionBias[i]
	}
	return c.scratch
}

// push appends a context token (never trained on).
func (c *Collector) push(s *slot, ids ...int32) {
	for _, id := range ids {
		s.seq = append(s.seq, id)
		s.logp = append(s.logp, 0)
		s.stepOf = append(s.stepOf, -1)
	}
}

// prepare readies slot s's env for a new episode: it rebuilds an instance abandoned earlier and
// passes an envs.EpisodeSeeder the seed that draw gives (draw is not called for other envs).
// It reports false, with the episode ended as an error, when no instance can be built.
func (c *Collector) prepare(s *slot, draw func() int64) bool {
	e, err := c.instance(s.idx)
	if err != nil {
		s.traj.Err = err.Error()
		s.over = true
		return false
	}
	if es, ok := e.(envs.EpisodeSeeder); ok {
		s.episodeSeed, s.seeded = draw(), true
		es.SeedEpisode(s.episodeSeed)
	}
	return true
}

// reset starts a slot's episode and lays out its first row.
func (c *Collector) reset(ctx context.Context, s *slot, st *Stats) {
	t0 := time.Now()
	var instr string
	var obs envs.Observation
	err := c.call(ctx, s.idx, "Reset", func(e envs.Env) (err error) {
		instr, obs, err = safeReset(e, s.traj.TaskSeed)
		return err
	})
	st.EnvTime += time.Since(t0)
	if err != nil {
		if c.retryable(err) {
			s.lost, s.lostReset = err, true
			return
		}
		s.traj.Err = err.Error()
		s.over = true
		return
	}
	c.started(s, instr, obs)
}

// started lays out the first row of an episode whose env was reset.
func (c *Collector) started(s *slot, instr string, obs envs.Observation) {
	s.instrText, s.first, s.firstKey = instr, obs, c.envs[s.idx].StateKey()
	s.traj.StartDistance = obs.Info.Distance
	s.instr = c.format.Instruction(instr)
	s.key = s.firstKey
	c.beginTurn(s, obs.Text)
}

// beginTurn lays out the observation and hands the turn to the agent, or truncates the episode
// when the context cannot hold another turn.
func (c *Collector) beginTurn(s *slot, obsText string) {
	obs := c.format.Turn(obsText)
	need := len(obs) + c.cfg.ActionRoom(c.format)
	if c.cfg.Layout == LayoutEpisode {
		if s.seq == nil {
			c.push(s, s.instr...)
		}
		if len(s.seq)+need > c.cfg.MaxLen {
			c.truncate(s)
			return
		}
		c.push(s, obs...)
	} else {
		// Window: a fresh row of the instruction, as many of the last K turns as fit, the observation.
		keep := min(c.cfg.WindowTurns, len(s.turns))
		for ; keep >= 0; keep-- {
			n := len(s.instr) + need
			for _, t := range s.turns[len(s.turns)-keep:] {
				n += len(t)
			}
			if n <= c.cfg.MaxLen {
				break
			}
		}
		if keep < 0 {
			c.truncate(s)
			return
		}
		s.seq, s.logp, s.stepOf, s.fed = nil, nil, nil, 0
		c.push(s, s.instr...)
		for _, t := range s.turns[len(s.turns)-keep:] {
			c.push(s, t...)
		}
		s.turnBase = len(s.seq)
		c.push(s, obs...)
	}
	s.acting = true
	s.action = s.action[:0]
}

// act sends the finished action to the env and records the step.
func (c *Collector) act(ctx context.Context, s *slot, st *Stats) {
	s.acting = false
	text := c.format.Action(s.action, s.capped)
	t0 := time.Now()
	var obs envs.Observation
	err := c.call(ctx, s.idx, "Step", func(e envs.Env) (err error) {
		obs, err = safeStep(e, text)
		return err
	})
	st.EnvTime += time.Since(t0)
	st.EnvSteps++
	if err != nil {
		if c.retryable(err) {
			s.lost, s.pending = err, text
			return
		}
		s.traj.Err = err.Error()
		s.over = true
		c.closeRow(s)
		return
	}
	c.record(s, text, obs)
}

// record stores the step the env answered with obs, then hands the next turn to the agent or
// ends the episode.
func (c *Collector) record(s *slot, text string, obs envs.Observation) {
	next := c.envs[s.idx].StateKey()
	s.obs = append(s.obs, obs)
	s.traj.Steps = append(s.traj.Steps, Step{Key: s.key, NextKey: next, Action: text, Reward: obs.Reward,
		Invalid: obs.Info.Invalid, Distance: obs.Info.Distance})
	s.key = next
	if c.cfg.Layout == LayoutWindow {
		s.turns = append(s.turns, append([]int32(nil), s.seq[s.turnBase:]...))
		c.closeRow(s)
	}
	if obs.Over() {
		s.traj.Success = obs.Info.Success
		s.traj.Truncated = obs.Truncated && !obs.Done
		if obs.Done {
			s.traj.Outcome = obs.Outcome
		}
		s.over = true
		if c.cfg.Layout == LayoutEpisode {
			c.closeRow(s)
		}
		return
	}
	c.beginTurn(s, obs.Text)
}

// truncate ends an episode that outgrew the context: a failure with outcome 0.
func (c *Collector) truncate(s *slot) {
	s.traj.Truncated = true
	s.over = true
	if c.cfg.Layout == LayoutEpisode {
		c.closeRow(s)
	}
}

// closeRow stores the current row in the trajectory (if it holds any action token).
func (c *Collector) closeRow(s *slot) {
	has := false
	for _, k := range s.stepOf {
		has = has || k >= 0
	}
	if has {
		s.traj.Rows = append(s.traj.Rows, Row{Tokens: s.seq, LogProb: s.logp, StepOf: s.stepOf})
	}
	s.seq, s.logp, s.stepOf = nil, nil, nil
}

// SampleToken draws a token from softmax(logits) (or takes the argmax when greedy) and returns
// it with its log-probability under the policy: how rollouts pick every action token (graftrl
// bench times its sampling with it too).
func SampleToken(logits []float32, greedy bool, rng *rand.Rand) (int32, float32) {
	maxL := math.Inf(-1)
	best := 0
	for i, l := range logits {
		if float64(l) > maxL {
			maxL, best = float64(l), i
		}
	}
	var small [256]float64 // e^(l − max) per token, computed once for both sums
	e := small[:0]
	if len(logits) > len(small) {
		e = make([]float64, 0, len(logits))
	}
	var z float64
	for _, l := range logits {
		x := math.Exp(float64(l) - maxL)
		e = append(e, x)
		z += x
	}
	logZ := maxL + math.Log(z)
	pick := best
	if !greedy {
		u := rng.Float64() * z
		pick = len(logits) - 1
		acc := 0.0
		for i, x := range e {
			acc += x
			if u < acc {
				pick = i
				break
			}
		}
	}
	return int32(pick), float32(float64(logits[pick]) - logZ)
}

// call runs f on slot i's env, bounded by StepTimeout and by ctx (plus stopGrace). A call that
// overruns is abandoned (its goroutine may never return, so the instance is never touched
// again) and the slot gets a fresh env for its next episode (built now after a timeout, when the
// slot is next prepared after a stop); the abandoned instance is closed once its call returns.
func (c *Collector) call(ctx context.Context, i int, op string, f func(envs.Env) error) error {
	e := c.envs[i]
	if c.cfg.StepTimeout <= 0 && ctx.Done() == nil {
		return f(e)
	}
	done := make(chan error, 1)
	go func() { done <- f(e) }()
	var timeout <-chan time.Time
	if c.cfg.StepTimeout > 0 {
		timer := time.NewTimer(c.cfg.StepTimeout)
		defer timer.Stop()
		timeout = timer.C
	}
	abandon := func() {
		go func() {
			<-done
			envs.Close(e)
		}()
	}
	select {
	case err := <-done:
		return err
	case <-timeout:
		abandon()
		c.envs[i] = nil
		if fresh, err := c.newEnv(); err == nil {
			c.envs[i] = fresh
		}
		return fmt.Errorf("env %s timed out after %s", op, c.cfg.StepTimeout)
	case <-ctx.Done():
		grace := time.NewTimer(stopGrace)
		defer grace.Stop()
		select {
		case err := <-done:
			return err
		case <-timeout:
		case <-grace.C:
		}
		abandon()
		c.envs[i] = nil
		c.stopped.Store(true)
		return fmt.Errorf("env %s abandoned: %w", op, ctx.Err())
	}
}

// errPanic wraps a panic raised inside an environment.
var errPanic = errors.New("environment panicked")

func safeReset(e envs.Env, seed int64) (instr string, obs envs.Observation, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w in Reset(%d): %v", errPanic, seed, r)
		}
	}()
	instr, obs, err = e.Reset(seed)
	if err != nil {
		err = fmt.Errorf("env Reset(%d): %w", seed, err)
	}
	return instr, obs, err
}

func safeStep(e envs.Env, action string) (obs envs.Observation, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w in Step(%q): %v", errPanic, action, r)
		}
	}()
	obs, err = e.Step(action)
	if err != nil {
		err = fmt.Errorf("env Step(%q): %w", action, err)
	}
	return obs, err
}

// Feeder is a Decoder that can also take many tokens of one row in one call (a prefill): Feed
// appends tokens to row's sequence from position pos (0 starts a new sequence). The collector
// feeds a row's context that way up to its last token, whose logits the next Step returns.
type Feeder interface {
	Feed(row int, tokens []int32, pos int32) error
}

// decode runs one decoder step for every live slot, after feeding a Feeder each slot's pending
// context but its last token, and reports whether any slot was live.
func decode(dec Decoder, slots []*slot, tokens, pos []int32, active []bool, st *Stats) ([]float32, bool, error) {
	t0 := time.Now()
	if f, ok := dec.(Feeder); ok {
		for i, s := range slots {
			if s == nil || s.over || len(s.seq)-s.fed < 2 {
				continue
			}
			if err := f.Feed(i, s.seq[s.fed:len(s.seq)-1], int32(s.fed)); err != nil {
				return nil, false, fmt.Errorf("rollout: decode: %w", err)
			}
			s.fed = len(s.seq) - 1
		}
	}
	if !feedInputs(slots, tokens, pos, active) {
		return nil, false, nil
	}
	logits, err := dec.Step(tokens, pos, active)
	st.DecodeTime += time.Since(t0)
	st.DecodeCalls++
	if err != nil {
		return nil, false, fmt.Errorf("rollout: decode: %w", err)
	}
	return logits, true, nil
}

// feedInputs sets, for every slot, the decoder's next input: the slot's next token and position
// if its episode is live (active), padding otherwise. It reports whether any slot is live.
func feedInputs(slots []*slot, toks, pos []int32, active []bool) bool {
	live := false
	for i, s := range slots {
		active[i] = s != nil && !s.over
		toks[i], pos[i] = tokens.PadID, 0
		if active[i] {
			live = true
			toks[i], pos[i] = s.seq[s.fed], int32(s.fed)
		}
	}
	return live
}
