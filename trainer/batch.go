package trainer

import (
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/policy/spec"
	"github.com/graftrl/graftrl/rollout"
)

// trainRow is one token row of the batch with its per-step advantages.
type trainRow struct {
	row *rollout.Row
	adv []float64 // advantages of the trajectory's steps, indexed by Row.StepOf
}

// collectRows lists the rows of valid trajectories (Err == ""), each with its trajectory's advantages.
// With dropZero, rows whose action tokens all have zero advantage are left out; the count of
// dropped rows is returned.
func collectRows(b *rollout.Batch, adv rollout.Advantages, dropZero bool) (rows []trainRow, dropped int) {
	for i := range b.Trajs {
		t := &b.Trajs[i]
		if t.Err != "" {
			continue
		}
		for r := range t.Rows {
			row := &t.Rows[r]
			if dropZero && allZero(row, adv[i]) {
				dropped++
				continue
			}
			rows = append(rows, trainRow{row: row, adv: adv[i]})
		}
	}
	return rows, dropped
}

func allZero(row *rollout.Row, adv []float64) bool {
	for _, k := range row.StepOf {
		if k >= 0 && adv[k] != 0 {
			return false
		}
	}
	return true
}

// bucketLen rounds a sequence length up to a multiple of 16 (capped at maxLen) so that few input
// shapes — and therefore few compiled graphs — occur.
func bucketLen(n, maxLen int) int {
	b := (n + 15) / 16 * 16
	return min(max(b, 16), maxLen)
}

// bucketRows rounds a row count up to a multiple of 8 (16 above 64, 64 above 256).
func bucketRows(n int) int {
	switch {
	case n <= 64:
		return max(8, (n+7)/8*8)
	case n <= 256:
		return (n + 15) / 16 * 16
	default:
		return (n + 63) / 64 * 64
	}
}

// makeTrainBatch lays rows out as a padded policy.TrainBatch. Position t of a row predicts token
// t+1: its target, old log-prob, advantage and step come from token t+1. Padding rows and
// positions get weight 0. With padRows the row count is bucketed (bucketRows) so that few
// shapes are compiled; without, a minibatch has its own rows only (a pretrained model, whose
// every padding row would cost a forward and backward pass over the whole model).
func makeTrainBatch(rows []trainRow, loss policy.LossConfig, maxLen, maxSteps int, padRows bool) *policy.TrainBatch {
	longest := 0
	for _, r := range rows {
		longest = max(longest, len(r.row.Tokens)-1)
	}
	rowsN, length := len(rows), bucketLen(longest, maxLen)
	if padRows {
		rowsN = bucketRows(len(rows))
	}
	n := rowsN * length
	tb := &policy.TrainBatch{Rows: rowsN, Len: length, Tokens: make([]int32, n), Targets: make([]int32, n),
		OldLogp: make([]float32, n), Adv: make([]float32, n)}
	mask := make([]bool, n)
	step := loss.Objective == spec.ObjectiveStep
	if step {
		tb.Steps = maxSteps
		tb.StepOf = make([]int32, n)
		tb.StepAdv = make([]float32, rowsN*maxSteps)
		tb.StepWeight = make([]float32, rowsN*maxSteps)
		for i := range tb.StepOf {
			tb.StepOf[i] = -1
		}
	}
	totalSteps := 0
	for b, r := range rows {
		tok := r.row.Tokens
		// Steps of this row, renumbered from 0 (a window-layout row holds one step).
		local := map[int16]int32{}
		for t := 0; t+1 < len(tok) && t < length; t++ {
			i := b*length + t
			tb.Tokens[i], tb.Targets[i] = tok[t], tok[t+1]
			k := r.row.StepOf[t+1]
			if k < 0 {
				continue
			}
			mask[i] = true
			tb.OldLogp[i] = r.row.LogProb[t+1]
			tb.Adv[i] = float32(r.adv[k])
			if step {
				j, ok := local[k]
				if !ok {
					j = int32(len(local))
					local[k] = j
				}
				if int(j) < maxSteps {
					tb.StepOf[i] = j
					tb.StepAdv[b*maxSteps+int(j)] = float32(r.adv[k])
				}
			}
		}
		totalSteps += min(len(local), maxSteps)
	}
	tb.Weight = spec.AggregationWeights(loss.Aggregation, mask, rowsN, length, normConstant(loss, maxLen))
	if step && totalSteps > 0 {
		for b := range rows {
			for j := range maxSteps {
				if hasStep(tb, b, length, int32(j)) {
					tb.StepWeight[b*maxSteps+j] = float32(1 / float64(totalSteps))
				}
			}
		}
	}
	return tb
}

func hasStep(tb *policy.TrainBatch, b, length int, j int32) bool {
	for t := range length {
		if tb.StepOf[b*length+t] == j {
			return true
		}
	}
	return false
}

func normConstant(loss policy.LossConfig, maxLen int) float64 {
	if loss.NormConstant > 0 {
		return loss.NormConstant
	}
	return float64(maxLen)
}
