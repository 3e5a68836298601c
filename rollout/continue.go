package rollout

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/graftrl/graftrl/envs"
)

// Start is where a continued episode begins: a task, the actions that lead from its reset to the
// branch point (replayed, not sampled), and optionally the first action after it. Replaying the
// recorded actions of a trajectory rebuilds both halves of its context at step t exactly as the
// collector laid them out — the token prefix (instruction, observations, actions, in the
// episode or window layout) and the env state — without any env having to be cloned or reset
// to an arbitrary state.
type Start struct {
	// TaskSeed is the task: the env is reset with Reset(TaskSeed).
	TaskSeed int64
	// EpisodeSeed is passed to SeedEpisode before the reset when the env is an
	// envs.EpisodeSeeder, so that a stochastic env replays the recorded episode it came from.
	EpisodeSeed int64
	// History are the token ids of the actions replayed after the reset, one per step, as the
	// policy sampled them: the tokens whose Row.StepOf is that step, so ended by the
	// end-of-action token unless the action reached the length cap (see ActionTokens).
	History [][]int32
	// Branch, when set, is called with the env once History has been replayed, before the next
	// action is chosen (for example to reseed a stochastic env so that continuations from the
	// same point differ). It is not called when the episode ended during the replay.
	Branch func(envs.Env)
	// First, when non-nil, forces the first action after the history to these tokens (the
	// action whose value Q(s_t, a_t) is measured); nil lets the policy sample it (V(s_t)).
	First []int32
}

// ActionTokens returns the token ids of every step's action in a trajectory, as Start.History
// takes them: the tokens whose StepOf is that step, in order, over all rows (forced end-of-action
// tokens, which carry StepOf -1, are left out; the replay adds them again).
func ActionTokens(tr *Trajectory) [][]int32 {
	out := make([][]int32, len(tr.Steps))
	for _, r := range tr.Rows {
		for i, k := range r.StepOf {
			if k >= 0 && int(k) < len(out) {
				out[k] = append(out[k], r.Tokens[i])
			}
		}
	}
	return out
}

// checkAction reports whether ids form one whole action under the collector's rules: ended by
// the end-of-action token (and holding it nowhere else), or exactly ActionMaxTokens tokens long
// without it.
func (c *Collector) checkAction(ids []int32) error {
	n, end := c.cfg.ActionMaxTokens, c.format.End()
	switch {
	case len(ids) == 0:
		return fmt.Errorf("empty action")
	case len(ids) > n+1:
		return fmt.Errorf("action of %d tokens exceeds action_max_tokens %d", len(ids), n)
	}
	for i, id := range ids {
		if id < 0 || int(id) >= c.format.Size() {
			return fmt.Errorf("token %d outside the vocabulary (size %d)", id, c.format.Size())
		}
		if id == end && i != len(ids)-1 {
			return fmt.Errorf("end-of-action token inside the action")
		}
	}
	last, endText := ids[len(ids)-1], c.format.Decode([]int32{end})
	if last != end && len(ids) != n {
		return fmt.Errorf("action of %d tokens is neither ended by %s nor action_max_tokens (%d) long", len(ids), endText, n)
	}
	if last == end && len(ids) == n+1 {
		return fmt.Errorf("action of %d tokens plus %s exceeds action_max_tokens %d", n, endText, n)
	}
	return nil
}

// forcing is the replay plan of one running continuation.
type forcing struct {
	start    *Start
	actions  [][]int32 // History, then First when set
	next     int       // actions fully forced so far
	pos      int       // tokens of actions[next] forced so far
	branched bool
}

// newForcing is the replay plan of start: its History, then its First action when set.
func newForcing(start *Start) *forcing {
	p := &forcing{start: start, actions: start.History}
	if start.First != nil {
		p.actions = append(append([][]int32(nil), start.History...), start.First)
	}
	return p
}

// branch calls the start's Branch with env once, when the replay reaches the branch point (the
// end of History, before the next action's first token).
func (p *forcing) branch(env envs.Env) {
	if p.next == len(p.start.History) && p.pos == 0 && !p.branched {
		p.branched = true
		if p.start.Branch != nil {
			p.start.Branch(env)
		}
	}
}

// token is the next token of the continuation and its log-probability under logits: the next
// forced token while actions remain to replay, else one sampled from logits with rng (counted in
// st.SampledTokens).
func (p *forcing) token(logits []float32, rng *rand.Rand, st *Stats) (int32, float32) {
	if p.next < len(p.actions) {
		tok := p.actions[p.next][p.pos]
		lp := tokenLogProb(logits, tok)
		if p.pos++; p.pos == len(p.actions[p.next]) {
			p.next, p.pos = p.next+1, 0
		}
		return tok, lp
	}
	tok, lp := SampleToken(logits, false, rng)
	st.SampledTokens++
	return tok, lp
}

// checkStarts checks that every action of the starts (History and First) is one whole action
// under the collector's rules (checkAction), naming the first that is not.
func (c *Collector) checkStarts(starts []Start) error {
	for i := range starts {
		for k, a := range starts[i].History {
			if err := c.checkAction(a); err != nil {
				return fmt.Errorf("rollout: start %d: history action %d: %w", i, k, err)
			}
		}
		if starts[i].First != nil {
			if err := c.checkAction(starts[i].First); err != nil {
				return fmt.Errorf("rollout: start %d: first action: %w", i, err)
			}
		}
	}
	return nil
}

// Continue runs one episode per start with the policy behind dec: each env is reset to its
// task, the start's History (and First) are replayed — fed through the decoder token by token as
// context, exactly as the collector lays them out, and applied to the env — and then the policy
// samples the rest of the episode as Collect does (same layouts, same truncation, the same action
// masking through Config.ActionBias, the same fault handling). Trajectory i of the returned batch
// belongs to starts[i] (Task = i): its Steps include the replayed ones, its Rows the replayed
// tokens, each forced token with the log-probability the policy gives it (so the first forced
// tokens after the history carry log π(a_t | context_t)).
//
// Episodes run on the collector's Parallel() envs and Slots() decoder rows, one batched decode
// call per token; unlike Collect, a slot whose episode ended takes the next start at once, so
// that short continuations do not wait for long ones. rng drives sampling; the draw order is
// fixed, so the same starts and seed give the same batch. A replay that the env ends before the
// branch point (the end of History) leaves Trajectory.Err set ("history ended the episode …").
func (c *Collector) Continue(dec Decoder, starts []Start, rng *rand.Rand) (*Batch, Stats, error) {
	var st Stats
	if err := c.checkStarts(starts); err != nil {
		return nil, st, err
	}
	b := &Batch{Tasks: len(starts), Trajs: make([]Trajectory, len(starts))}
	for i := range starts {
		b.Trajs[i] = Trajectory{Task: i, TaskSeed: starts[i].TaskSeed}
	}
	ctx := context.Background()
	n := c.width
	slots := make([]*slot, n)
	plans := make([]*forcing, n)
	nextStart := 0
	// begin puts the next pending start into slot i (or leaves the slot empty when none is left).
	begin := func(i int) {
		for slots[i] = nil; nextStart < len(starts); {
			k := nextStart
			nextStart++
			s := &slot{idx: i, traj: &b.Trajs[k]}
			p := newForcing(&starts[k])
			st.Episodes++
			if c.prepare(s, func() int64 { return starts[k].EpisodeSeed }) {
				c.reset(ctx, s, &st)
				c.settle(ctx, []*slot{s}, &st)
			}
			if s.over {
				continue // the reset failed: the error is in the trajectory
			}
			slots[i], plans[i] = s, p
			return
		}
	}
	for i := range c.envs {
		begin(i)
	}
	tokens, pos := make([]int32, n), make([]int32, n)
	active := make([]bool, n)
	vocab := c.format.Size()
	for {
		logits, live, err := decode(dec, slots, tokens, pos, active, &st)
		if err != nil {
			return nil, st, err
		}
		if !live {
			return b, st, nil
		}
		for i, s := range slots {
			if !active[i] {
				continue
			}
			s.fed++
			if s.fed < len(s.seq) || !s.acting {
				continue
			}
			p := plans[i]
			p.branch(c.envs[i])
			lg := logits[i*vocab : (i+1)*vocab]
			if c.cfg.ActionBias != nil {
				lg = c.masked(lg)
			}
			tok, lp := p.token(lg, rng, &st)
			if !c.take(ctx, s, tok, lp, &st) {
				continue
			}
			c.settle(ctx, []*slot{s}, &st)
			if s.over {
				if s.traj.Err == "" && !p.branched {
					s.traj.Err = fmt.Sprintf("history ended the episode after %d of %d replayed actions", len(s.traj.Steps), len(p.start.History))
				}
				begin(i)
			}
		}
	}
}

// tokenLogProb is log softmax(logits)[tok], computed as SampleToken computes the log-probability
// of the token it draws.
func tokenLogProb(logits []float32, tok int32) float32 {
	maxL := math.Inf(-1)
	for _, l := range logits {
		maxL = math.Max(maxL, float64(l))
	}
	var z float64
	for _, l := range logits {
		z += math.Exp(float64(l) - maxL)
	}
	return float32(float64(logits[tok]) - maxL - math.Log(z))
}
