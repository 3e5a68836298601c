package maze

import (
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs/envtest"
	"github.com/graftrl/graftrl/envs/grid"
)

// FuzzMazeStep feeds arbitrary action text after a prefix of moves: no panic, an invalid action leaves
// the state and the position text as they were, and a valid one is exactly a known action word.
func FuzzMazeStep(f *testing.F) {
	for _, s := range []string{"", "up", "DOWN", " left ", "right\n", "up up", "🙂", "\x00", "\u212a", "uP", "lef"} {
		f.Add(uint8(0), s)
	}
	f.Fuzz(func(t *testing.T, prefix uint8, action string) {
		m := mustGrid(t, corridor, DefaultConfig(5))
		envtest.MustReset(t, m, 0)
		// A prefix of up to four moves puts the agent in different cells (never past a trap or the goal).
		for _, a := range []string{"down", "down", "right", "down"}[:prefix%5] {
			envtest.MustStep(t, m, a)
		}
		key, turn := m.StateKey(), m.ep.Turn()
		obs, err := m.Step(action)
		if err != nil {
			t.Fatal(err)
		}
		word := strings.ToLower(strings.TrimSpace(action))
		isWord := word == "up" || word == "down" || word == "left" || word == "right"
		if _, ok := grid.ParseDirection(action); ok != isWord {
			t.Fatalf("grid.ParseDirection(%q) ok = %v, want %v", action, ok, isWord)
		}
		if m.ep.Turn() != turn+1 {
			t.Fatalf("turn %d after %d", m.ep.Turn(), turn)
		}
		if !isWord && !obs.Info.Invalid {
			t.Fatalf("Step(%q) accepted", action)
		}
		if obs.Info.Invalid {
			if m.StateKey() != key || obs.Reward != -0.1 || obs.Done || !strings.HasPrefix(obs.Text, "invalid "+key[:2]+" "+key[2:]+" ") {
				t.Fatalf("invalid Step(%q) from %s: key %s, %+v", action, key, m.StateKey(), obs)
			}
		} else if m.StateKey() == key || obs.Reward != 0 {
			t.Fatalf("valid Step(%q) from %s: key %s, %+v", action, key, m.StateKey(), obs)
		}
	})
}
