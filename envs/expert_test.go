package envs

import (
	"errors"
	"strconv"
	"testing"
)

// ring is a small deterministic env for the lookahead expert: walk around a ring of ringCells cells
// from cell 0 to cell goal with "cw" (clockwise) and "ccw", or "wait" (a valid no-op); the cell
// ringCells-1 is a trap. Info.Distance is the exact shortest distance avoiding the trap.
type ring struct {
	goal, pos, turn int
	started, over   bool
}

const ringCells, ringCap = 8, 12

func (r *ring) dist(p int) int {
	if p == ringCells-1 {
		return DistDead
	}
	if p <= r.goal {
		return r.goal - p // the way around through the trap is closed
	}
	return p - r.goal
}

func (r *ring) Reset(task int64) (string, Observation, error) {
	r.goal = 1 + int(task%int64(ringCells-2))
	r.pos, r.turn, r.started, r.over = 0, 0, true, false
	return "goal " + strconv.Itoa(r.goal), Observation{Text: r.StateKey(), Info: Info{Distance: r.dist(0)}}, nil
}

func (r *ring) Step(a string) (Observation, error) {
	if !r.started || r.over {
		return Observation{}, errors.New("ring: not running")
	}
	r.turn++
	var o Observation
	switch a {
	case "cw":
		r.pos = (r.pos + 1) % ringCells
	case "ccw":
		r.pos = (r.pos + ringCells - 1) % ringCells
	case "wait":
	default:
		o.Reward, o.Info.Invalid = -0.1, true
	}
	o.Text, o.Info.Distance = r.StateKey(), r.dist(r.pos)
	switch {
	case r.pos == r.goal:
		o.Done, o.Outcome, o.Info.Success = true, 1, true
	case r.pos == ringCells-1:
		o.Done = true
	}
	o.Truncated = !o.Done && r.turn >= ringCap
	r.over = o.Over()
	return o, nil
}

func (r *ring) StateKey() string     { return "c" + strconv.Itoa(r.pos) }
func (r *ring) Vocabulary() []string { return []string{"cw", "ccw", "wait", "goal"} }
func (r *ring) MaxTurns() int        { return ringCap }
func (r *ring) Clone() Env           { c := *r; return &c }

// ValidActions lists the no-op first, so that an expert that ignored distances would never arrive.
func (r *ring) ValidActions() []string {
	if !r.started || r.over {
		return nil
	}
	return []string{"wait", "ccw", "cw"}
}

// ownExpert is a ring with an expert of its own, which ExpertOf must prefer to the lookahead.
type ownExpert struct{ ring }

func (o *ownExpert) ExpertAction() (string, error) { return "wait", nil }

func TestClosest(t *testing.T) {
	for _, c := range []struct {
		dists []int
		want  int
	}{
		{[]int{3}, 0},
		{[]int{3, 2, 4}, 1},
		{[]int{2, 1, 1}, 1},                           // ties go to the first
		{[]int{DistDead, 5, 0}, 2},                    // success is distance 0
		{[]int{DistDead, DistUnknown, 4}, 2},          // unknown distances never win
		{[]int{DistUnknown, DistDead}, 0},             // nothing known: the first
		{[]int{DistDead, 0, DistUnknown, 0, 1}, 1},    // the first success
		{[]int{7, DistDead, DistUnknown, 7, 6, 6}, 4}, // the first of the smallest
	} {
		if got := Closest(c.dists); got != c.want {
			t.Errorf("Closest(%v) = %d, want %d", c.dists, got, c.want)
		}
	}
}

// TestLookaheadSolvesTheRing plays the lookahead expert on every task of the ring: it reaches the
// goal in exactly the start's distance, steps only valid actions, and leaves the env as it was.
func TestLookaheadSolvesTheRing(t *testing.T) {
	r := &ring{}
	expert, ok := ExpertOf(r)
	if !ok {
		t.Fatal("ExpertOf(ring) offers no expert")
	}
	for task := range int64(ringCells - 2) {
		_, obs, _ := r.Reset(task)
		want := obs.Info.Distance
		steps := 0
		for !obs.Over() {
			before := *r
			a, err := expert()
			if err != nil {
				t.Fatalf("task %d: %v", task, err)
			}
			if *r != before {
				t.Fatalf("task %d: the expert changed the env from %+v to %+v", task, before, *r)
			}
			if obs, _ = r.Step(a); obs.Info.Invalid {
				t.Fatalf("task %d: the expert's %q is invalid", task, a)
			}
			steps++
		}
		if !obs.Info.Success || steps != want {
			t.Errorf("task %d: the expert ends %+v after %d steps, want success after %d", task, obs, steps, want)
		}
	}
}

func TestLookaheadChoices(t *testing.T) {
	r := &ring{}
	r.Reset(4) // goal 5
	r.pos = 6  // ccw reaches the goal, cw the trap, and wait stays at distance 1
	if a, err := LookaheadAction(r); a != "ccw" || err != nil {
		t.Errorf("between the goal and the trap, LookaheadAction = %q, %v; want ccw", a, err)
	}
	r.pos = 4
	if a, _ := LookaheadAction(r); a != "cw" {
		t.Errorf("next to the goal, LookaheadAction = %q, want cw", a)
	}
	r.over = true
	if a, err := LookaheadAction(r); !errors.Is(err, ErrNoAction) {
		t.Errorf("after the end, LookaheadAction = %q, %v; want ErrNoAction", a, err)
	}
	if _, err := LookaheadAction(fakeEnv{}); err == nil || errors.Is(err, ErrNoAction) {
		t.Errorf("LookaheadAction of an env without ValidActions and Clone: %v, want an error saying so", err)
	}
}

func TestExpertOfPrefersTheEnvsOwn(t *testing.T) {
	o := &ownExpert{}
	o.Reset(0)
	expert, ok := ExpertOf(o)
	if a, err := expert(); !ok || a != "wait" || err != nil {
		t.Errorf("ExpertOf(an env with ExpertAction) gives %q, %v; want the env's own wait", a, err)
	}
	if expert, ok := ExpertOf(fakeEnv{}); ok || expert != nil {
		t.Error("ExpertOf(an env with neither ExpertAction nor ValidActions and Clone) offers an expert")
	}
	// A clone-less env with ValidActions has no lookahead.
	type listsOnly struct {
		fakeEnv
		ValidActioner
	}
	if _, ok := ExpertOf(listsOnly{}); ok {
		t.Error("ExpertOf(an env with ValidActions but no Clone) offers an expert")
	}
}
