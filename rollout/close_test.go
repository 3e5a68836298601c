package rollout

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/tokens"
)

// closingEnv is a countEnv that holds a resource: it counts its Close calls. Told to, its first
// Step blocks until release is closed (an env call that overruns the step timeout).
type closingEnv struct {
	*countEnv
	mu      sync.Mutex
	closes  int
	closed  chan struct{} // closed by the first Close
	release chan struct{} // nil: Step never blocks
}

func (e *closingEnv) Step(a string) (envs.Observation, error) {
	if e.release != nil {
		<-e.release
		e.release = nil
	}
	return e.countEnv.Step(a)
}

func (e *closingEnv) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closes++
	if e.closes == 1 {
		close(e.closed)
	}
	return nil
}

func (e *closingEnv) closeCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closes
}

// The collector closes every env it created exactly once: those in its slots on Close, one it
// replaced after a timed-out call once that call returns, and on a failed NewCollector the
// ones built before the failure.
func TestCollectorClosesEveryEnv(t *testing.T) {
	vocab, err := tokens.NewVocab((&countEnv{}).Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var created []*closingEnv
	newEnv := func() (envs.Env, error) {
		e := &closingEnv{countEnv: &countEnv{max: 5}, closed: make(chan struct{})}
		if len(created) == 0 {
			e.release = release // the first env hangs on its first step
		}
		created = append(created, e)
		return e, nil
	}
	cfg := Config{Layout: LayoutEpisode, MaxLen: 64, ActionMaxTokens: 2, StepTimeout: 50 * time.Millisecond}
	c, err := NewCollector(cfg, Words{vocab}, newEnv, 2)
	if err != nil {
		t.Fatal(err)
	}
	ids := vocab.Encode(nil, "inc noop")
	dec := &scriptDecoder{vocab: vocab.Size(), inc: ids[0], noop: ids[1], noopRows: map[int]bool{}}
	b, _, err := c.Collect(dec, Request{Tasks: []int64{1}, Group: 2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if b.Trajs[0].Err == "" || b.Trajs[1].Err != "" {
		t.Fatalf("errors %q, %q: want the first episode to time out", b.Trajs[0].Err, b.Trajs[1].Err)
	}
	if len(created) != 3 {
		t.Fatalf("%d envs created, want 2 slots and 1 replacement", len(created))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := created[0].closeCount(); n != 0 {
		t.Fatalf("the replaced env was closed %d times while its call was still running", n)
	}
	close(release)
	select {
	case <-created[0].closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the replaced env was not closed after its call returned")
	}
	if err := c.Close(); err != nil { // a second Close closes nothing again
		t.Fatal(err)
	}
	for i, e := range created {
		if n := e.closeCount(); n != 1 {
			t.Errorf("env %d closed %d times, want once", i, n)
		}
	}

	// A factory that fails on the third instance: the two built before are closed.
	created = nil
	failing := func() (envs.Env, error) {
		if len(created) == 2 {
			return nil, errors.New("no more envs")
		}
		return newEnv()
	}
	if _, err := NewCollector(cfg, Words{vocab}, failing, 4); err == nil {
		t.Fatal("NewCollector succeeded with a failing factory")
	}
	for i, e := range created {
		if n := e.closeCount(); n != 1 {
			t.Errorf("after the failed NewCollector, env %d closed %d times, want once", i, n)
		}
	}
}
