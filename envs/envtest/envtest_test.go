package envtest_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/envtest"
)

// line is a toy env for testing the suite: walk right from cell seed%3 to cell 5 of a line, with
// "left" and "right"; the observation is the cell word. bug selects one deliberate fault.
type line struct {
	bug     string
	pos     int
	turn    int
	valid   int
	started bool
	over    bool
	shared  *int // the clone-sharing bug keeps the position here
	resets  *int // the nondeterminism bug counts Resets across instances here
}

const lineGoal, lineCap = 5, 8

func (l *line) Reset(task int64) (string, envs.Observation, error) {
	l.pos = int((task%3 + 3) % 3)
	if l.bug == "nondeterministic" {
		*l.resets++
		l.pos = *l.resets % 3
	}
	l.turn, l.valid, l.started, l.over = 0, 0, true, false
	return "goal p5", envs.Observation{Text: l.text(), Info: envs.Info{Distance: l.distance()}}, nil
}

func (l *line) text() string {
	if l.bug == "vocabulary" && l.pos == 3 {
		return "p3 extra"
	}
	return "p" + string(rune('0'+l.position()))
}

func (l *line) position() int {
	if l.bug == "shared-clone" {
		return *l.shared
	}
	return l.pos
}

func (l *line) setPosition(p int) {
	l.pos = p
	if l.bug == "shared-clone" {
		*l.shared = p
	}
}

func (l *line) distance() int {
	d := lineGoal - l.position()
	if l.bug == "distance" && d == 2 {
		return 4
	}
	return d
}

func (l *line) Step(a string) (envs.Observation, error) {
	if !l.started || (l.over && l.bug != "step-after-end") {
		return envs.Observation{}, errors.New("line: not running")
	}
	if l.bug == "panic" && strings.Contains(a, "\x00") {
		panic("line: NUL")
	}
	l.turn++
	var o envs.Observation
	next := l.position()
	switch strings.TrimSpace(a) {
	case "left":
		next--
	case "right":
		next++
	default:
		next = -1
	}
	if next < 0 || next > lineGoal {
		o.Reward, o.Info.Invalid = -0.1, true
		if l.bug == "invalid-moves" {
			l.setPosition(min(l.position()+1, lineGoal-1))
		}
	} else {
		l.setPosition(next)
		l.valid++
	}
	o.Text, o.Info.Distance = l.text(), l.distance()
	if l.position() == lineGoal {
		o.Done, o.Outcome, o.Info.Success = true, 1, true
	}
	limit := lineCap
	if l.bug == "overrun" {
		limit++
	}
	o.Truncated = !o.Done && l.turn >= limit
	l.over = o.Over()
	return o, nil
}

func (l *line) StateKey() string {
	key := "p" + string(rune('0'+l.position()))
	switch l.bug {
	case "history-key":
		key += "/" + string(rune('a'+l.valid))
	case "aliased":
		key = "p" + string(rune('0'+l.position()/2))
	}
	return key
}

func (l *line) Vocabulary() []string {
	return []string{"p0", "p1", "p2", "p3", "p4", "p5", "left", "right", "goal"}
}

func (l *line) ActionWords() []string {
	if l.bug == "action-words" {
		return []string{"left"}
	}
	return []string{"left", "right"}
}

func (l *line) MaxTurns() int { return lineCap }

// ValidActions makes the line's expert the generic lookahead (envs.ExpertOf).
func (l *line) ValidActions() []string {
	if !l.started || l.over {
		return nil
	}
	var as []string
	if (l.position() > 0 && l.bug != "lists-too-few") || l.bug == "lists-invalid" {
		as = append(as, "left")
	}
	return append(as, "right")
}

// mutatingLine is a line whose expert spends a turn of the episode each time it is asked.
type mutatingLine struct{ line }

func (m *mutatingLine) ExpertAction() (string, error) {
	m.turn++
	return envs.LookaheadAction(m)
}

func (m *mutatingLine) Clone() envs.Env {
	c := *m
	return &c
}

func (l *line) Clone() envs.Env {
	c := *l
	return &c
}

func newLine(bug string) func() (envs.Env, error) {
	resets := new(int)
	return func() (envs.Env, error) {
		if bug == "expert-mutates" {
			return &mutatingLine{line{shared: new(int), resets: resets}}, nil
		}
		return &line{bug: bug, shared: new(int), resets: resets}, nil
	}
}

// TestHelperSuite runs the suite on the line with the fault named by ENVTEST_BUG; it only runs in the
// subprocesses of TestSuiteCatchesFaults.
func TestHelperSuite(t *testing.T) {
	bug, ok := os.LookupEnv("ENVTEST_BUG")
	if !ok {
		t.Skip("helper of TestSuiteCatchesFaults")
	}
	envtest.Run(t, newLine(bug), envtest.ActionSet("left", "right"), envtest.Penalty(-0.1), envtest.MaxVocabulary(9))
}

// TestHelperExpert runs the expert checks on the line with the fault named by ENVTEST_BUG; it only
// runs in the subprocesses of TestExpertChecksCatchFaults.
func TestHelperExpert(t *testing.T) {
	bug, ok := os.LookupEnv("ENVTEST_BUG")
	if !ok {
		t.Skip("helper of TestExpertChecksCatchFaults")
	}
	envtest.RunExpert(t, newLine(bug), envtest.ActionSet("left", "right"))
}

// TestExpertPassesACorrectEnv runs the expert checks on the line without faults, whose expert is the
// generic lookahead.
func TestExpertPassesACorrectEnv(t *testing.T) {
	envtest.RunExpert(t, newLine(""), envtest.ActionSet("left", "right"), envtest.Panel(20))
}

// TestExpertChecksCatchFaults runs the expert checks in a subprocess on each faulty line and expects
// them to fail with the check that owns the fault.
func TestExpertChecksCatchFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	expectFaults(t, "TestHelperExpert", map[string]string{
		"distance":       "the expert fails within MaxTurns",
		"lists-invalid":  `the listed "left" is an invalid action`,
		"lists-too-few":  `"left" is valid but no action of ValidActions`,
		"expert-mutates": "asking the expert changed the env",
	})
}

// expectFaults runs the test helper in a subprocess on the line with each fault and expects it to
// fail with the output given for the fault.
func expectFaults(t *testing.T, helper string, faults map[string]string) {
	for bug, want := range faults {
		t.Run(bug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.v")
			cmd.Env = append(os.Environ(), "ENVTEST_BUG="+bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("%s passed an env with the fault %q:\n%s", helper, bug, out)
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("fault %q: output lacks %q:\n%s", bug, want, out)
			}
		})
	}
}

// TestSuitePassesACorrectEnv runs the suite on the line without faults.
func TestSuitePassesACorrectEnv(t *testing.T) {
	envtest.Run(t, newLine(""), envtest.ActionSet("left", "right"), envtest.Penalty(-0.1), envtest.MaxVocabulary(9))
}

// TestSuiteCatchesFaults runs the suite in a subprocess on each faulty line and expects it to fail
// with the check that owns the fault.
func TestSuiteCatchesFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	expectFaults(t, "TestHelperSuite", map[string]string{
		"nondeterministic": "--- FAIL: TestHelperSuite/Determinism",
		"history-key":      "does the key encode the history?",
		"aliased":          "the key merges different states",
		"invalid-moves":    "--- FAIL: TestHelperSuite/InvalidActions",
		"overrun":          "not over after MaxTurns",
		"vocabulary":       "--- FAIL: TestHelperSuite/Vocabulary",
		"shared-clone":     "--- FAIL: TestHelperSuite/Clone",
		"panic":            `panicked: line: NUL`,
		"distance":         "--- FAIL: TestHelperSuite/Distance",
		"step-after-end":   "after the episode ended",
		"action-words":     "not in ActionWords",
	})
}

// FuzzLine runs the suite's fuzz target on the correct line.
func FuzzLine(f *testing.F) {
	envtest.Fuzz(f, newLine(""), envtest.Actions("left", "right"), envtest.Penalty(-0.1))
}
