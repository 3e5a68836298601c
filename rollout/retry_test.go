package rollout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/tokens"
)

// lossyEnv is countEnv behind a session that is lost once, at the instance's call number at
// (Reset and Step counted): that call fails with envs.ErrSessionLost and, like a remote env,
// the instance needs a Reset before it can step again. With forever every call after the loss
// fails; with drift the env resets to another first observation after the loss.
type lossyEnv struct {
	countEnv
	calls, at      int
	lost, broken   bool
	forever, drift bool
}

func (e *lossyEnv) fault() error {
	e.calls++
	if e.calls == e.at || (e.forever && e.lost) {
		e.lost, e.broken = true, true
		return fmt.Errorf("reading the reply: connection reset: %w", envs.ErrSessionLost)
	}
	return nil
}

func (e *lossyEnv) Reset(task int64) (string, envs.Observation, error) {
	if err := e.fault(); err != nil {
		return "", envs.Observation{}, err
	}
	e.broken = false
	instr, obs, err := e.countEnv.Reset(task)
	if e.drift && e.lost {
		obs.Text = "n1"
	}
	return instr, obs, err
}

func (e *lossyEnv) Step(a string) (envs.Observation, error) {
	if e.broken {
		return envs.Observation{}, fmt.Errorf("no session: %w", envs.ErrSessionLost)
	}
	if err := e.fault(); err != nil {
		return envs.Observation{}, err
	}
	return e.countEnv.Step(a)
}

// collectLossy collects 3 tasks × 4 with a sampling decoder on envs built by env (given the
// instance's number).
func collectLossy(t *testing.T, cfg Config, slots int, env func(i int) envs.Env) (*Batch, Stats) {
	t.Helper()
	vocab, err := tokens.NewVocab((&countEnv{}).Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	built := 0
	c, err := NewCollector(cfg, Words{vocab}, func() (envs.Env, error) { built++; return env(built - 1), nil }, slots)
	if err != nil {
		t.Fatal(err)
	}
	fav := append(vocab.Encode(nil, "inc"), tokens.EOAID)
	dec := &hashDecoder{vocab: vocab.Size(), favour: fav}
	b, st, err := c.Collect(dec, Request{Tasks: []int64{1, 2, 3}, Group: 4}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	return b, st
}

// An episode whose session is lost — at its reset or at any step — is replayed on a new session
// and carries on: the batch is exactly the one collected without faults (same actions, tokens,
// log-probs and outcomes), and the retried episodes are counted.
func TestLostSessionsAreReplayed(t *testing.T) {
	for _, layout := range []string{LayoutEpisode, LayoutWindow} {
		t.Run(layout, func(t *testing.T) {
			cfg := Config{Layout: layout, WindowTurns: 1, MaxLen: 64, ActionMaxTokens: 2, Retries: 3}
			want, wst := collectLossy(t, cfg, 6, func(int) envs.Env { return &countEnv{max: 6} })
			// Instance i loses its session at call 1 + i%5: the first reset, or a step.
			got, st := collectLossy(t, cfg, 6, func(i int) envs.Env { return &lossyEnv{countEnv: countEnv{max: 6}, at: 1 + i%5} })
			for i, tr := range got.Trajs {
				if tr.Err != "" {
					t.Fatalf("trajectory %d: %s", i, tr.Err)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal("the batch with replayed episodes differs from the batch without faults")
			}
			if st.Retried != 6 || wst.Retried != 0 {
				t.Fatalf("retried %d (want one per instance, 6) and %d without faults", st.Retried, wst.Retried)
			}
			if st.EnvSteps != wst.EnvSteps {
				t.Fatalf("env steps %d, want %d: replayed steps are not counted", st.EnvSteps, wst.EnvSteps)
			}
		})
	}
}

// A lost episode becomes an error when the env replays differently (not deterministic), when
// the session stays lost through every retry, and at once without retries.
func TestLostSessionsThatCannotBeReplayed(t *testing.T) {
	cases := []struct {
		name, want string
		retries    int
		env        func(i int) envs.Env
	}{
		{"drifting env", "not deterministic", 3, func(int) envs.Env { return &lossyEnv{countEnv: countEnv{max: 6}, at: 3, drift: true} }},
		{"lost for good", "still lost after 2 retries", 2, func(int) envs.Env { return &lossyEnv{countEnv: countEnv{max: 6}, at: 3, forever: true} }},
		{"no retries", "session lost", 0, func(int) envs.Env { return &lossyEnv{countEnv: countEnv{max: 6}, at: 3} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 2, Retries: tc.retries}
			b, st := collectLossy(t, cfg, 3, tc.env)
			failed := 0
			for _, tr := range b.Trajs {
				if tr.Err != "" {
					failed++
					if !strings.Contains(tr.Err, tc.want) {
						t.Fatalf("error %q, want it to say %q", tr.Err, tc.want)
					}
				}
			}
			if failed == 0 || st.Retried != 0 {
				t.Fatalf("%d episodes failed, %d retried; want failures and no retried episode", failed, st.Retried)
			}
		})
	}
}

// parallelEnv is countEnv that allows n instances to run at once (envs.Parallel).
type parallelEnv struct {
	countEnv
	n int
}

func (e *parallelEnv) MaxParallel() int { return e.n }

// A collector never runs more episodes at once than the env allows: it builds that many
// instances, keeps the decoder's width, and runs the request in waves.
func TestCollectorRespectsMaxParallel(t *testing.T) {
	built := 0
	vocab, err := tokens.NewVocab((&countEnv{}).Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 2}, Words{vocab}, func() (envs.Env, error) {
		built++
		return &parallelEnv{countEnv: countEnv{max: 6}, n: 3}, nil
	}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if built != 3 || c.Parallel() != 3 || c.Slots() != 8 {
		t.Fatalf("built %d instances, Parallel %d, Slots %d; want 3, 3, 8", built, c.Parallel(), c.Slots())
	}
	ids := vocab.Encode(nil, "inc noop")
	dec := &scriptDecoder{vocab: vocab.Size(), inc: ids[0], noop: ids[1], noopRows: map[int]bool{}}
	b, _, err := c.Collect(dec, Request{Tasks: []int64{1, 2, 3, 4}, Group: 2}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range b.Trajs {
		if tr.Err != "" || !tr.Success {
			t.Fatalf("trajectory %d: error %q, success %v", i, tr.Err, tr.Success)
		}
	}
	if len(dec.lastActive) != 8 {
		t.Fatalf("decoder called with %d rows, want 8", len(dec.lastActive))
	}
	for i, a := range dec.lastActive[3:] {
		if a {
			t.Fatalf("row %d active beyond the 3 parallel episodes", i+3)
		}
	}
}

// blockingEnv is countEnv whose Reset blocks until release is closed.
type blockingEnv struct {
	countEnv
	release chan struct{}
}

func (e *blockingEnv) Reset(task int64) (string, envs.Observation, error) {
	<-e.release
	return e.countEnv.Reset(task)
}

// A cancelled context ends a collection at once, whether an env call hangs or a lost session is
// waiting out its retry backoff.
func TestCollectStopsOnCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	cases := map[string]func() envs.Env{
		"hanging reset": func() envs.Env { return &blockingEnv{countEnv: countEnv{max: 6}, release: release} },
		"retry backoff": func() envs.Env { return &lossyEnv{countEnv: countEnv{max: 6}, at: 1, forever: true} },
	}
	for name, env := range cases {
		t.Run(name, func(t *testing.T) {
			vocab, err := tokens.NewVocab((&countEnv{}).Vocabulary())
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 2, Retries: 100}
			c, err := NewCollector(cfg, Words{vocab}, func() (envs.Env, error) { return env(), nil }, 2)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			done := make(chan error, 1)
			go func() {
				_, _, err := c.CollectContext(ctx, &hashDecoder{vocab: vocab.Size()}, Request{Tasks: []int64{1}, Group: 2}, rand.New(rand.NewPCG(1, 2)))
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("error %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second): // 100 retries would take minutes
				t.Fatal("the collection did not stop when its context was cancelled")
			}
		})
	}
}

// A context that ends while every env call returns in time does not stop the collection: a stop
// signal lets a healthy iteration finish.
func TestCollectFinishesHealthyCallsAfterCancel(t *testing.T) {
	vocab, err := tokens.NewVocab((&countEnv{}).Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 2, Retries: 3}, Words{vocab},
		func() (envs.Env, error) { return &countEnv{max: 6}, nil }, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, _, err := c.CollectContext(ctx, &hashDecoder{vocab: vocab.Size()}, Request{Tasks: []int64{1, 2}, Group: 2}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatalf("collection with a cancelled context and healthy envs: %v", err)
	}
	for i, tr := range b.Trajs {
		if tr.Err != "" {
			t.Fatalf("trajectory %d: %s", i, tr.Err)
		}
	}
}
