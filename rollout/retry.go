package rollout

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/graftrl/graftrl/envs"
)

// Backoff before the k-th replay of an episode whose session was lost: firstRetryBackoff,
// doubling up to maxRetryBackoff, so that a restarting server has a few seconds to come back.
const (
	firstRetryBackoff = 250 * time.Millisecond
	maxRetryBackoff   = 4 * time.Second
)

// retryable reports whether a failed call is retried on a new session: the env lost its
// session (envs.ErrSessionLost) and retries are configured.
func (c *Collector) retryable(err error) bool {
	return c.cfg.Retries > 0 && errors.Is(err, envs.ErrSessionLost)
}

// retryResult is the outcome of one episode's retry: the reply to the call that was lost.
type retryResult struct {
	instr   string
	obs     envs.Observation
	envTime time.Duration
	err     error
}

// settle retries, all at once, the episodes of slots whose session was lost (retry) and carries
// each on from the reply to its lost call, or ends it as an error. It returns ctx's error when the
// collection was stopped (a call or a backoff abandoned when ctx ended).
func (c *Collector) settle(ctx context.Context, slots []*slot, st *Stats) error {
	var lost []*slot
	for _, s := range slots {
		if s != nil && s.lost != nil {
			lost = append(lost, s)
		}
	}
	res := make([]retryResult, len(lost))
	var wg sync.WaitGroup
	for k, s := range lost {
		wg.Go(func() { res[k] = c.retry(ctx, s) })
	}
	wg.Wait()
	for k, s := range lost {
		r := res[k]
		st.EnvTime += r.envTime
		s.lost = nil
		switch {
		case r.err != nil:
			s.traj.Err = r.err.Error()
			s.over = true
			c.closeRow(s)
			continue
		case !s.retried:
			s.retried = true
			st.Retried++
		}
		if s.lostReset {
			s.lostReset = false
			c.started(s, r.instr, r.obs)
		} else {
			c.record(s, s.pending, r.obs)
		}
	}
	if c.stopped.Load() {
		return ctx.Err()
	}
	return nil
}

// retry replays the episode of slot s on a new session of its env: after a backoff it resets the
// env to the task (with the same episode seed), replays the recorded actions, checking that every
// observation and state key is the recorded one, and sends the call that was lost again. As the
// env is deterministic given its seeds, the episode then goes on exactly as it would have without
// the fault, and nothing is sampled again. A session lost during the replay is tried again, up to
// Config.Retries times in all; any other failure, or an env that replays differently, ends the
// episode as an error.
func (c *Collector) retry(ctx context.Context, s *slot) retryResult {
	var r retryResult
	backoff := firstRetryBackoff
	for range c.cfg.Retries {
		select {
		case <-ctx.Done():
			c.stopped.Store(true)
			r.err = ctx.Err()
			return r
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxRetryBackoff)
		t0 := time.Now()
		r.instr, r.obs, r.err = c.replay(ctx, s)
		r.envTime += time.Since(t0)
		if !errors.Is(r.err, envs.ErrSessionLost) || ctx.Err() != nil {
			if r.err != nil {
				r.err = fmt.Errorf("retry on a new session after %v: %w", s.lost, r.err)
			}
			return r
		}
	}
	r.err = fmt.Errorf("%w (still lost after %d retries on a new session)", r.err, c.cfg.Retries)
	return r
}

// replay is one attempt of retry.
func (c *Collector) replay(ctx context.Context, s *slot) (string, envs.Observation, error) {
	var instr string
	var obs envs.Observation
	err := c.call(ctx, s.idx, "Reset", func(e envs.Env) (err error) {
		if es, ok := e.(envs.EpisodeSeeder); ok && s.seeded {
			es.SeedEpisode(s.episodeSeed)
		}
		instr, obs, err = safeReset(e, s.traj.TaskSeed)
		return err
	})
	if err != nil || s.lostReset {
		return instr, obs, err
	}
	if instr != s.instrText || !reflect.DeepEqual(obs, s.first) || c.envs[s.idx].StateKey() != s.firstKey {
		return "", obs, errors.New("the env reset the task differently: it is not deterministic, so the episode cannot be replayed")
	}
	step := func(action string) error {
		return c.call(ctx, s.idx, "Step", func(e envs.Env) (err error) {
			obs, err = safeStep(e, action)
			return err
		})
	}
	for k, rec := range s.traj.Steps {
		if err := step(rec.Action); err != nil {
			return "", obs, err
		}
		if !reflect.DeepEqual(obs, s.obs[k]) || c.envs[s.idx].StateKey() != rec.NextKey {
			return "", obs, fmt.Errorf("the env answered replayed step %d differently: it is not deterministic, so the episode cannot be replayed", k)
		}
	}
	err = step(s.pending)
	return "", obs, err
}
