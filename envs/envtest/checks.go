package envtest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/graftrl/graftrl/envs"
)

// determinism checks that a task and its dynamics are fixed by the task seed and the actions.
func (s *suite) determinism(t *testing.T) {
	a, b := s.mustNew(t), s.mustNew(t)
	if a.MaxTurns() != b.MaxTurns() {
		t.Fatalf("two instances have MaxTurns %d and %d", a.MaxTurns(), b.MaxTurns())
	}
	p := newPlayer(2, a.Vocabulary(), s.actions)
	for range max(2, s.episodes/2) {
		for _, seed := range s.seeds {
			insA, obsA, errA := a.Reset(seed)
			insB, obsB, errB := b.Reset(seed)
			if errA != nil || errB != nil {
				t.Fatalf("Reset(%d): %v, %v", seed, errA, errB)
			}
			if insA != insB || !reflect.DeepEqual(obsA, obsB) || a.StateKey() != b.StateKey() {
				t.Fatalf("Reset(%d) differs between two instances:\n%q %+v key %q\n%q %+v key %q",
					seed, insA, obsA, a.StateKey(), insB, obsB, b.StateKey())
			}
			var history []string
			for i := 0; !obsA.Over(); i++ {
				if i >= a.MaxTurns() {
					t.Fatalf("seed %d: not over after MaxTurns = %d steps", seed, a.MaxTurns())
				}
				act := p.next(a)
				history = append(history, act)
				obsA, obsB = mustStep(t, a, act), mustStep(t, b, act)
				keyA, keyB := a.StateKey(), b.StateKey()
				if !reflect.DeepEqual(obsA, obsB) || keyA != keyB {
					t.Fatalf("seed %d after %q: two instances differ:\n%+v key %q\n%+v key %q", seed, history, obsA, keyA, obsB, keyB)
				}
				if again := a.StateKey(); again != keyA {
					t.Fatalf("seed %d after %q: StateKey changed from %q to %q between two calls", seed, history, keyA, again)
				}
				p.learn(act, obsA)
			}
		}
	}

	// The task of a seed does not depend on what the instance ran before.
	task := func(e envs.Env, seed int64) string {
		ins, obs, err := e.Reset(seed)
		if err != nil {
			t.Fatalf("Reset(%d): %v", seed, err)
		}
		return fmt.Sprintf("%q %+v key %q", ins, obs, e.StateKey())
	}
	tasks := map[int64]string{}
	distinct := map[string]bool{}
	for _, seed := range s.seeds {
		tasks[seed] = task(a, seed)
		distinct[tasks[seed]] = true
	}
	c := s.mustNew(t)
	for i := len(s.seeds) - 1; i >= 0; i-- {
		seed := s.seeds[i]
		if got := task(c, seed); got != tasks[seed] {
			t.Errorf("seed %d after other tasks: %s, want %s", seed, got, tasks[seed])
		}
		if got := task(c, seed); got != tasks[seed] {
			t.Errorf("seed %d reset twice: %s, want %s", seed, got, tasks[seed])
		}
	}
	if len(s.seeds) > 2 && len(distinct) < 2 {
		t.Errorf("%d task seeds all give the same task", len(s.seeds))
	}
}

// stepCap checks that episodes end by termination or exactly at the step cap, and that stepping
// outside an episode is an error rather than a panic.
func (s *suite) stepCap(t *testing.T, rec []episode) {
	truncated, succeeded := 0, 0
	limit := s.mustNew(t).MaxTurns()
	for _, ep := range rec {
		n := len(ep.turns)
		last := ep.turns[n-1].obs
		for i, tu := range ep.turns[:n-1] {
			if tu.obs.Over() {
				t.Fatalf("seed %d: over at step %d but stepped again", ep.seed, i)
			}
		}
		if ep.cap < 1 || ep.cap > limit {
			t.Errorf("seed %d: the task's step cap %d is outside 1..MaxTurns = %d", ep.seed, ep.cap, limit)
		}
		switch {
		case last.Done && last.Truncated:
			t.Errorf("seed %d step %d: Done and Truncated both set: %+v", ep.seed, n-1, last)
		case last.Truncated && n != ep.cap:
			t.Errorf("seed %d: truncated after %d steps, the cap is %d", ep.seed, n, ep.cap)
		case !last.Done && n < ep.cap:
			t.Errorf("seed %d: the episode ended after %d < %d steps without Done", ep.seed, n, ep.cap)
		case n == ep.cap && !last.Over():
			t.Errorf("seed %d: step %d reached the cap without ending the episode", ep.seed, n)
		}
		if last.Truncated {
			truncated++
		}
		if last.Info.Success {
			succeeded++
		}
	}
	t.Logf("of %d random episodes %d succeeded and %d were truncated at their cap (MaxTurns %d)", len(rec), succeeded, truncated, limit)

	e := s.mustNew(t)
	if _, err, pan := safeStep(e, "xyzzy"); pan != nil || err == nil {
		t.Errorf("Step before Reset: error %v, panic %v; want an error", err, pan)
	}
	p := newPlayer(3, e.Vocabulary(), s.actions)
	s.playEpisode(t, e, p, s.seeds[0], nil)
	for _, a := range append([]string{"xyzzy"}, s.actions...) {
		if _, err, pan := safeStep(e, a); pan != nil || err == nil {
			t.Errorf("Step(%q) after the episode ended: error %v, panic %v; want an error", a, err, pan)
		}
	}
}

// rewards checks the relations between Reward, Outcome, Done, Truncated and Success.
func (s *suite) rewards(t *testing.T, rec []episode) {
	for _, ep := range rec {
		if f := ep.first; f.Reward != 0 || f.Outcome != 0 || f.Info.Invalid || f.Info.Success {
			t.Errorf("seed %d: first observation %+v has a reward, an outcome or a step flag", ep.seed, f)
		}
		for i, tu := range ep.turns {
			o := tu.obs
			switch {
			case o.Info.Success && !o.Done:
				t.Errorf("seed %d step %d: Success without Done: %+v", ep.seed, i, o)
			case o.Info.Success && !(o.Outcome > 0):
				t.Errorf("seed %d step %d: Success with outcome %v, want > 0", ep.seed, i, o.Outcome)
			case !o.Info.Success && o.Outcome != 0:
				t.Errorf("seed %d step %d: outcome %v without Success", ep.seed, i, o.Outcome)
			}
		}
	}
}

// invalidActions checks the invalid steps of the recording and of episodes that alternate garbage
// with random actions.
func (s *suite) invalidActions(t *testing.T, rec []episode) {
	bad := append(garbage(), s.invalid...)
	e := s.mustNew(t)
	p := newPlayer(4, e.Vocabulary(), s.actions)
	k := 0
	var eps []episode
	for _, seed := range s.seeds {
		eps = append(eps, s.playEpisode(t, e, p, seed, func(i int, proposal string) string {
			if i%2 == 1 {
				return proposal
			}
			k++
			return bad[k%len(bad)]
		}))
	}
	penalty, seen := s.penalty, s.hasPenalty
	check := func(ep episode, i int, mustBeInvalid bool) {
		tu := ep.turns[i]
		o := tu.obs
		if mustBeInvalid && !o.Info.Invalid {
			t.Errorf("seed %d step %d: Step(%q) was accepted: %+v", ep.seed, i, tu.action, o)
			return
		}
		if !o.Info.Invalid {
			return
		}
		prevObs, prevKey := ep.prev(i)
		if !seen {
			penalty, seen = o.Reward, true
		}
		switch {
		case o.Reward != penalty:
			t.Errorf("seed %d step %d: invalid Step(%q) has reward %v, want the penalty %v", ep.seed, i, tu.action, o.Reward, penalty)
		case o.Done || o.Outcome != 0 || o.Info.Success:
			t.Errorf("seed %d step %d: invalid Step(%q) ended the episode: %+v", ep.seed, i, tu.action, o)
		case tu.key != prevKey:
			t.Errorf("seed %d step %d: invalid Step(%q) changed the state key from %q to %q", ep.seed, i, tu.action, prevKey, tu.key)
		case o.Info.Distance != prevObs.Info.Distance:
			t.Errorf("seed %d step %d: invalid Step(%q) changed Info.Distance from %d to %d", ep.seed, i, tu.action, prevObs.Info.Distance, o.Info.Distance)
		}
	}
	for _, ep := range eps {
		for i := range ep.turns {
			check(ep, i, i%2 == 0)
		}
	}
	for _, ep := range rec {
		for i := range ep.turns {
			check(ep, i, false)
		}
	}
	if seen && penalty > 0 {
		t.Errorf("the invalid-action penalty is %v, want <= 0", penalty)
	}
}

// transition is what a step returned, without the truncation flag (the turn count is not part of
// the state).
type transition struct {
	text            string
	reward, outcome float64
	done, success   bool
	invalid         bool
	distance        int
	next            string
}

func transitionOf(tu turn) transition {
	o := tu.obs
	return transition{text: o.Text, reward: o.Reward, outcome: o.Outcome, done: o.Done, success: o.Info.Success,
		invalid: o.Info.Invalid, distance: o.Info.Distance, next: tu.key}
}

// stateKeys checks that the state key is a function of the state and not of the history.
func (s *suite) stateKeys(t *testing.T, rec []episode) {
	type sk struct {
		seed int64
		key  string
	}
	type ska struct {
		sk
		action string
	}
	results := map[ska]transition{}
	texts := map[sk]string{}
	depth := map[sk]int{}
	revisited := false
	for _, ep := range rec {
		valid := 0
		see := func(key string, text string, hasText bool) {
			k := sk{ep.seed, key}
			if d, ok := depth[k]; !ok {
				depth[k] = valid
			} else if d != valid {
				revisited = true
			}
			if !hasText || s.aliased {
				return
			}
			if prev, ok := texts[k]; !ok {
				texts[k] = text
			} else if prev != text {
				t.Errorf("seed %d: state key %q has two observations %q and %q; the key merges different states (declare Aliased if deliberate)",
					ep.seed, key, prev, text)
			}
		}
		see(ep.key0, ep.first.Text, true)
		for i, tu := range ep.turns {
			_, prevKey := ep.prev(i)
			got := transitionOf(tu)
			k := ska{sk{ep.seed, prevKey}, tu.action}
			if want, ok := results[k]; ok && !s.aliased {
				if s.stochastic {
					want = transition{invalid: want.invalid}
					got = transition{invalid: got.invalid}
				}
				if want != got {
					t.Errorf("seed %d: Step(%q) from state key %q gave %+v once and %+v another time; the key does not determine the state",
						ep.seed, tu.action, prevKey, want, got)
				}
			} else {
				results[k] = got
			}
			if !tu.obs.Info.Invalid {
				valid++
			}
			see(tu.key, tu.obs.Text, !tu.obs.Info.Invalid && !tu.obs.Over())
		}
	}
	if !revisited {
		t.Errorf("no state key was reached by two valid-action histories of different lengths in %d episodes; "+
			"does the key encode the history?", len(rec))
	}
	t.Logf("%d distinct (task, key) pairs, %d distinct (task, key, action) transitions", len(depth), len(results))
}

// distance checks Info.Distance: its range, its value at the end of an episode, its change over one
// step, and with ActionSet the Bellman equation of shortest paths.
func (s *suite) distance(t *testing.T, rec []episode) {
	known := 0
	for _, ep := range rec {
		if d := ep.first.Info.Distance; d == 0 || d < envs.DistDead {
			t.Errorf("seed %d: first observation has Info.Distance %d", ep.seed, d)
		}
		for i, tu := range ep.turns {
			o := tu.obs
			d := o.Info.Distance
			prevObs, _ := ep.prev(i)
			pd := prevObs.Info.Distance
			if d >= 0 {
				known++
			}
			switch {
			case d < envs.DistDead:
				t.Errorf("seed %d step %d: Info.Distance %d is out of range", ep.seed, i, d)
			case o.Info.Success && d != 0 && d != envs.DistUnknown:
				t.Errorf("seed %d step %d: success with Info.Distance %d, want 0", ep.seed, i, d)
			case !o.Info.Success && d == 0:
				t.Errorf("seed %d step %d: Info.Distance 0 without success", ep.seed, i)
			case o.Done && !o.Info.Success && d != envs.DistDead && d != envs.DistUnknown:
				t.Errorf("seed %d step %d: failed end with Info.Distance %d, want DistDead", ep.seed, i, d)
			case pd == envs.DistDead && (d >= 0 || o.Info.Success):
				t.Errorf("seed %d step %d: Step(%q) from a dead state (DistDead) reached Info.Distance %d", ep.seed, i, tu.action, d)
			case !s.stochastic && pd >= 0 && d >= 0 && d < pd-1:
				t.Errorf("seed %d step %d: Step(%q) lowered Info.Distance from %d to %d in one step", ep.seed, i, tu.action, pd, d)
			}
		}
	}
	t.Logf("Info.Distance known on %d recorded steps", known)
	if len(s.actionSet) == 0 || s.stochastic {
		return
	}
	e := s.mustNew(t)
	if _, ok := e.(envs.Cloner); !ok {
		t.Log("not an envs.Cloner: Bellman check skipped")
		return
	}
	type sk struct {
		seed int64
		key  string
	}
	checked := map[sk]bool{}
	p := newPlayer(5, e.Vocabulary(), s.actions)
	for range 2 {
		for _, seed := range s.seeds {
			_, cur, err := e.Reset(seed)
			if err != nil {
				t.Fatalf("Reset(%d): %v", seed, err)
			}
			for i := 0; !cur.Over() && i < e.MaxTurns(); i++ {
				if k := (sk{seed, e.StateKey()}); !checked[k] {
					checked[k] = true
					s.bellman(t, e, seed, cur.Info.Distance)
				}
				a := p.next(e)
				cur = mustStep(t, e, a)
				p.learn(a, cur)
			}
		}
	}
	t.Logf("Bellman equation checked in %d states", len(checked))
}

// bellman checks d(s) = 1 + min_a d(s') at the current state of e (whose distance is d) by stepping
// clones with every action of the action set.
func (s *suite) bellman(t *testing.T, e envs.Env, seed int64, d int) {
	if d == envs.DistUnknown {
		return
	}
	best, valid := -1, 0
	for _, a := range s.actionSet {
		o := mustStep(t, e.(envs.Cloner).Clone(), a)
		if o.Info.Invalid {
			continue
		}
		valid++
		nd := o.Info.Distance
		if o.Info.Success {
			nd = 0
		}
		switch {
		case d == envs.DistDead && (o.Info.Success || nd >= 0):
			t.Errorf("seed %d key %q: Step(%q) from a dead state gives Info.Distance %d", seed, e.StateKey(), a, nd)
		case d >= 0 && nd >= 0 && nd < d-1:
			t.Errorf("seed %d key %q at distance %d: Step(%q) gives distance %d", seed, e.StateKey(), d, a, nd)
		}
		if nd >= 0 && (best < 0 || nd < best) {
			best = nd
		}
	}
	if d >= 1 && best != d-1 {
		t.Errorf("seed %d key %q at distance %d: the best of %d valid actions reaches distance %d, want %d",
			seed, e.StateKey(), d, valid, best, d-1)
	}
}

// vocabulary checks the word list and that every text of the recording uses only its words.
func (s *suite) vocabulary(t *testing.T, rec []episode) {
	e := s.mustNew(t)
	voc := e.Vocabulary()
	if len(voc) == 0 {
		t.Fatal("empty vocabulary")
	}
	if s.maxVocab > 0 && len(voc) > s.maxVocab {
		t.Errorf("vocabulary has %d words, want at most %d", len(voc), s.maxVocab)
	}
	set := map[string]bool{}
	for _, w := range voc {
		switch {
		case w == "" || strings.ContainsAny(w, " \t\r\n\v\f") || !utf8.ValidString(w):
			t.Errorf("vocabulary word %q is empty, holds whitespace or is not UTF-8", w)
		case set[w]:
			t.Errorf("vocabulary word %q appears twice", w)
		}
		set[w] = true
	}
	voc[0] = "changed-by-envtest"
	if e.Vocabulary()[0] == voc[0] {
		t.Error("Vocabulary returns storage the caller can change")
	}
	want := e.Vocabulary()
	for _, seed := range s.seeds {
		if _, _, err := e.Reset(seed); err != nil {
			t.Fatal(err)
		}
		if got := e.Vocabulary(); !slices.Equal(got, want) {
			t.Fatalf("the vocabulary changed after Reset(%d): %v, was %v", seed, got, want)
		}
	}
	if got := s.mustNew(t).Vocabulary(); !slices.Equal(got, want) {
		t.Fatalf("two instances have different vocabularies: %v and %v", got, want)
	}
	checkText := func(what, text string, nonEmpty bool) {
		if err := textError(text, set); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		if nonEmpty && text == "" {
			t.Errorf("%s: empty observation", what)
		}
	}
	for _, a := range s.actions {
		for _, w := range strings.Fields(a) {
			if !set[w] {
				t.Errorf("action %q of the options: word %q is not in the vocabulary", a, w)
			}
		}
	}
	actionSet := map[string]bool{}
	aw, hasActionWords := e.(actionWorder)
	if hasActionWords {
		words := aw.ActionWords()
		if len(words) == 0 {
			t.Error("ActionWords is empty")
		}
		for _, w := range words {
			if !set[w] || actionSet[w] {
				t.Errorf("action word %q is not in the vocabulary or appears twice", w)
			}
			actionSet[w] = true
		}
	}
	for _, ep := range rec {
		checkText(fmt.Sprintf("seed %d instruction", ep.seed), ep.instruction, false)
		checkText(fmt.Sprintf("seed %d first observation", ep.seed), ep.first.Text, true)
		for i, tu := range ep.turns {
			checkText(fmt.Sprintf("seed %d step %d observation", ep.seed, i), tu.obs.Text, !tu.obs.Over())
			if !tu.obs.Info.Invalid {
				for _, w := range strings.Fields(asciiLower(tu.action)) {
					if !set[w] {
						t.Errorf("seed %d step %d: accepted action %q uses %q, not in the vocabulary", ep.seed, i, tu.action, w)
					}
					if hasActionWords && !actionSet[w] {
						t.Errorf("seed %d step %d: accepted action %q uses %q, not in ActionWords", ep.seed, i, tu.action, w)
					}
				}
			}
		}
	}
}

// actionWorder is implemented by envs that list the words their actions are made of (the
// envs.ActionWorder interface, declared here by its method so that the suite does not depend on it).
type actionWorder interface {
	ActionWords() []string
}

// textError reports a text that is not vocabulary words separated by single spaces.
func textError(text string, vocab map[string]bool) error {
	words := strings.Fields(text)
	if strings.Join(words, " ") != text {
		return fmt.Errorf("text %q is not words separated by single spaces", text)
	}
	for _, w := range words {
		if !vocab[w] {
			return fmt.Errorf("word %q of %q is not in the vocabulary", w, text)
		}
	}
	return nil
}

// asciiLower lower-cases ASCII letters only, as the env parsers do.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// clone checks that a clone starts in the original's state and then evolves independently.
func (s *suite) clone(t *testing.T) {
	e := s.mustNew(t)
	if _, ok := e.(envs.Cloner); !ok {
		t.Skip("not an envs.Cloner")
	}
	p := newPlayer(6, e.Vocabulary(), s.actions)
	for si, seed := range s.seeds {
		for _, prefix := range []int{0, 1, 3, 6} {
			if _, _, err := e.Reset(seed); err != nil {
				t.Fatal(err)
			}
			over := false
			for range prefix {
				if over = mustStep(t, e, p.next(e)).Over(); over {
					break
				}
			}
			if over {
				continue
			}
			key := e.StateKey()
			c1, c2 := e.(envs.Cloner).Clone(), e.(envs.Cloner).Clone()
			if c1.StateKey() != key || c2.StateKey() != key {
				t.Fatalf("seed %d: clones have keys %q, %q; the original %q", seed, c1.StateKey(), c2.StateKey(), key)
			}
			if c1.MaxTurns() != e.MaxTurns() || !slices.Equal(c1.Vocabulary(), e.Vocabulary()) {
				t.Fatalf("seed %d: the clone has another step cap or vocabulary", seed)
			}
			// Play the first clone to its end, then on another task.
			for i := 0; i <= e.MaxTurns(); i++ {
				if mustStep(t, c1, p.next(c1)).Over() {
					break
				}
			}
			other := s.seeds[(si+1)%len(s.seeds)]
			s.playEpisode(t, c1, p, other, nil)
			if _, _, err := c1.Reset(other); err != nil {
				t.Fatal(err)
			}
			if got := e.StateKey(); got != key {
				t.Fatalf("seed %d: stepping a clone changed the original's key from %q to %q", seed, key, got)
			}
			// The original and the second clone continue in lockstep.
			c3 := c2.(envs.Cloner).Clone()
			for i := 0; ; i++ {
				if i > e.MaxTurns() {
					t.Fatalf("seed %d: the original runs past the step cap", seed)
				}
				a := p.next(e)
				oe, oc, o3 := mustStep(t, e, a), mustStep(t, c2, a), mustStep(t, c3, a)
				if !s.stochastic && (!reflect.DeepEqual(oe, oc) || !reflect.DeepEqual(oe, o3) ||
					e.StateKey() != c2.StateKey() || e.StateKey() != c3.StateKey()) {
					t.Fatalf("seed %d prefix %d: after Step(%q) the original and its clones differ:\n%+v %q\n%+v %q\n%+v %q",
						seed, prefix, a, oe, e.StateKey(), oc, c2.StateKey(), o3, c3.StateKey())
				}
				if oe.Over() {
					break
				}
			}
		}
	}
}

// arbitraryText steps random bytes, random Unicode and vocabulary soups with odd separators.
func (s *suite) arbitraryText(t *testing.T) {
	e := s.mustNew(t)
	voc := e.Vocabulary()
	set := map[string]bool{}
	for _, w := range voc {
		set[w] = true
	}
	rng := rand.New(rand.NewPCG(7, 0x61726269))
	seps := []string{" ", "  ", "\t", "\n", "", " \r\n ", ",", "\x00"}
	var texts []string
	texts = append(texts, garbage()...)
	for range 100 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		texts = append(texts, string(b))
		r := make([]rune, 1+rng.IntN(6))
		for i := range r {
			r[i] = rune(rng.IntN(0x2000))
		}
		texts = append(texts, string(r))
		n := 1 + rng.IntN(8)
		var sb strings.Builder
		if rng.IntN(4) == 0 {
			sb.WriteString(seps[rng.IntN(len(seps))])
		}
		for i := range n {
			if i > 0 {
				sb.WriteString(seps[rng.IntN(len(seps))])
			}
			w := voc[rng.IntN(len(voc))]
			if rng.IntN(5) == 0 {
				w = strings.ToUpper(w)
			}
			sb.WriteString(w)
		}
		texts = append(texts, sb.String())
	}
	for _, a := range s.actions {
		texts = append(texts, strings.ToUpper(a), " "+a+" ", a+" "+a, a+"\n")
	}
	over := true
	for i, text := range texts {
		if over || i%10 == 0 {
			if _, _, err := e.Reset(s.seeds[i%len(s.seeds)]); err != nil {
				t.Fatal(err)
			}
		}
		key := e.StateKey()
		o, err, pan := safeStep(e, text)
		if pan != nil {
			t.Fatalf("Step(%q) panicked: %v", text, pan)
		}
		if err != nil {
			t.Fatalf("Step(%q): %v", text, err)
		}
		if o.Info.Invalid && e.StateKey() != key {
			t.Errorf("invalid Step(%q) changed the key from %q to %q", text, key, e.StateKey())
		}
		if err := textError(o.Text, set); err != nil {
			t.Errorf("Step(%q): %v", text, err)
		}
		over = o.Over()
	}
}

// mustStep steps e and stops the test on an error or a panic, naming the action and the state.
func mustStep(t testing.TB, e envs.Env, action string) envs.Observation {
	t.Helper()
	key := e.StateKey()
	obs, err, pan := safeStep(e, action)
	if pan != nil {
		t.Fatalf("Step(%q) in state %q panicked: %v", action, key, pan)
	}
	if err != nil {
		t.Fatalf("Step(%q) in state %q: %v", action, key, err)
	}
	return obs
}

// safeStep steps e and turns a panic into a value.
func safeStep(e envs.Env, action string) (obs envs.Observation, err error, pan any) {
	defer func() { pan = recover() }()
	obs, err = e.Step(action)
	return obs, err, nil
}
