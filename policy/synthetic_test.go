package policy

import "testing"

// The benchmark minibatch is the one torch_ref.py builds: every third position an action token.
func TestSyntheticBatch(t *testing.T) {
	c := Config{Vocab: 11}
	b := SyntheticBatch(c, 2, 6, 1)
	for i, w := range b.Weight {
		if want := i%6%3 == 2; (w > 0) != want {
			t.Fatalf("position %d: weight %g", i, w)
		}
	}
}
