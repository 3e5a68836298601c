package policy

import (
	"math/rand/v2"

	"github.com/graftrl/graftrl/policy/spec"
)

// SyntheticBatch is the minibatch of the benchmarks and tests, the same as scripts/bench/torch_ref.py's: random tokens and targets,
// every third position an action token (token-mean weights), old log-prob −4.1, advantages
// N(0, 1).
func SyntheticBatch(c Config, rows, length int, seed uint64) *TrainBatch {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := rows * length
	b := &TrainBatch{Rows: rows, Len: length, Tokens: make([]int32, n), Targets: make([]int32, n),
		OldLogp: make([]float32, n), Adv: make([]float32, n)}
	mask := make([]bool, n)
	for i := range n {
		b.Tokens[i], b.Targets[i] = int32(rng.IntN(c.Vocab)), int32(rng.IntN(c.Vocab))
		b.OldLogp[i] = -4.1
		b.Adv[i] = float32(rng.NormFloat64())
		mask[i] = i%length%3 == 2
	}
	b.Weight = spec.AggregationWeights(spec.AggTokenMean, mask, rows, length, 0)
	return b
}
