package rollout

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/graftrl/graftrl/envs"
)

// Teacher chooses the action of a demonstration in the current state of e. rng is the
// collection's random stream (for exploration noise). learn says whether the policy should learn
// the action (an expert's) or only see it as context (exploration noise whose consequences the
// expert then recovers from). A teacher must not change e's state.
type Teacher func(e envs.Env, rng *rand.Rand) (action string, learn bool, err error)

// Demonstrate rolls out every task of req (Group times each) with teacher choosing every action,
// and lays the episodes out exactly as sampling does (the same Config, context layout and
// tokens): the words of a teacher's action, then the end-of-action token where sampling would
// produce one, are the action tokens of its step, with log-prob 0; the tokens of actions the
// teacher does not want learnt are context (Row.StepOf −1), so no row trains on them. Episodes run one after another
// on the collector's envs; req.Greedy is ignored. A fault in the env or the teacher ends only that
// episode (Trajectory.Err). An action whose words are not in the vocabulary, or that needs more
// than ActionMaxTokens tokens, is an error: the policy could never produce it.
func (c *Collector) Demonstrate(teacher Teacher, req Request, rng *rand.Rand) (*Batch, Stats, error) {
	var st Stats
	b := req.newBatch()
	ctx := context.Background()
	for i := range b.Trajs {
		s := &slot{idx: i % len(c.envs), traj: &b.Trajs[i]}
		if c.prepare(s, rng.Int64) {
			c.reset(ctx, s, &st)
			c.settle(ctx, []*slot{s}, &st)
		}
		for !s.over {
			text, learn, err := safeTeach(teacher, c.envs[s.idx], rng)
			if err != nil {
				s.traj.Err = err.Error()
				s.over = true
				c.closeRow(s)
				break
			}
			ids, err := c.actionTokens(text)
			if err != nil {
				return nil, st, err
			}
			s.untrained = !learn
			for _, id := range ids {
				if c.take(ctx, s, id, 0, &st) {
					break
				}
			}
			c.settle(ctx, []*slot{s}, &st)
			s.untrained = false
		}
	}
	st.Episodes = len(b.Trajs)
	return b, st, nil
}

// actionTokens encodes a teacher's action as the tokens sampling would produce for it
// (Format.EncodeAction) and, below the cap, the end token.
func (c *Collector) actionTokens(text string) ([]int32, error) {
	ids, err := c.format.EncodeAction(text)
	switch {
	case err != nil:
		return nil, err
	case len(ids) == 0:
		return nil, fmt.Errorf("rollout: the teacher's action %q has no words", text)
	case len(ids) > c.cfg.ActionMaxTokens:
		return nil, fmt.Errorf("rollout: the teacher's action %q has %d tokens, more than rollout.action_max_tokens = %d",
			text, len(ids), c.cfg.ActionMaxTokens)
	}
	for _, id := range ids {
		if c.cfg.ActionBias != nil && c.cfg.ActionBias[id] != 0 {
			return nil, fmt.Errorf("rollout: the teacher's action %q uses %q, which is not one of the environment's action words",
				text, c.format.Decode([]int32{id}))
		}
	}
	if len(ids) < c.cfg.ActionMaxTokens {
		ids = append(ids, c.format.End())
	}
	return ids, nil
}

// safeTeach runs the teacher, turning a panic into an error.
func safeTeach(teacher Teacher, e envs.Env, rng *rand.Rand) (text string, learn bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w in the teacher: %v", errPanic, r)
		}
	}()
	text, learn, err = teacher(e, rng)
	if err != nil {
		err = fmt.Errorf("teacher: %w", err)
	}
	return text, learn, err
}
