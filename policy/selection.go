package policy

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// selection lists, row by row, the positions of a minibatch whose log-probs the loss reads (those
// with Weight > 0: the action tokens), padded to q per row. The update gathers them so that the
// last block and the head run only there (see forwardAt); the loss is unchanged because every
// other position has weight 0.
type selection struct {
	rows, length, q int
	src             []int   // [rows·q] flat position b·length+t of each slot, −1 for padding
	pos             []int32 // [rows·q] position t of each slot (0 for padding)
}

// mostSelected is the largest number of selected positions (Weight > 0) in a row of the batch.
func mostSelected(b *TrainBatch) int {
	most := 0
	for r := range b.Rows {
		n := 0
		for _, w := range b.Weight[r*b.Len : (r+1)*b.Len] {
			if w > 0 {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// selectPositions builds the selection of a minibatch with q slots per row (q ≥ mostSelected).
func selectPositions(b *TrainBatch, q int) *selection {
	s := &selection{rows: b.Rows, length: b.Len, q: q}
	s.src = make([]int, b.Rows*s.q)
	s.pos = make([]int32, b.Rows*s.q)
	for r := range b.Rows {
		slot := r * s.q
		for t, w := range b.Weight[r*b.Len : (r+1)*b.Len] {
			if w > 0 {
				s.src[slot], s.pos[slot] = r*b.Len+t, int32(t)
				slot++
			}
		}
		for ; slot < (r+1)*s.q; slot++ {
			s.src[slot] = -1
		}
	}
	return s
}

// floats gathers a [rows·length] array into [rows, q] (0 at padding slots).
func (s *selection) floats(v []float32) *tensors.Tensor {
	return filledTensor(func(out []float32) {
		for i, j := range s.src {
			if j >= 0 {
				out[i] = v[j]
			}
		}
	}, s.rows, s.q)
}

// ints gathers a [rows·length] array into [rows, q] (pad at padding slots).
func (s *selection) ints(v []int32, pad int32) *tensors.Tensor {
	return filledTensor(func(out []int32) {
		for i, j := range s.src {
			out[i] = pad
			if j >= 0 {
				out[i] = v[j]
			}
		}
	}, s.rows, s.q)
}

// scatter spreads a gathered [rows·q] array back to [rows·length], with 0 at unselected positions.
func (s *selection) scatter(v []float32) []float32 {
	out := make([]float32, s.rows*s.length)
	for i, j := range s.src {
		if j >= 0 {
			out[j] = v[i]
		}
	}
	return out
}

// index is the Gather index [rows, q, 2] of (row, position) pairs.
func (s *selection) index() *tensors.Tensor {
	return filledTensor(func(out []int32) {
		for i, t := range s.pos {
			out[2*i], out[2*i+1] = int32(i/s.q), t
		}
	}, s.rows, s.q, 2)
}

// attentionBias is the causal bias [rows, heads, q, length] of the selected queries: 0 for keys at
// or before the query's position, negInf after.
func (s *selection) attentionBias(heads int) *tensors.Tensor {
	n := s.length
	return filledTensor(func(out []float32) {
		for r := range s.rows {
			for h := range heads {
				for i := range s.q {
					row := out[((r*heads+h)*s.q+i)*n:][:n]
					for j := int(s.pos[r*s.q+i]) + 1; j < n; j++ {
						row[j] = negInf
					}
				}
			}
		}
	}, s.rows, heads, s.q, n)
}

// actionBias is the action-token logit bias [rows, q, vocab]: bias at every selected position (all
// of them are action tokens), 0 at padding slots.
func (s *selection) actionBias(bias []float32) *tensors.Tensor {
	v := len(bias)
	return filledTensor(func(out []float32) {
		for i, j := range s.src {
			if j >= 0 {
				copy(out[i*v:(i+1)*v], bias)
			}
		}
	}, s.rows, s.q, v)
}

// filledTensor returns a new tensor of the given dimensions, zeros until fill writes its values
// in place (building a slice first and handing it to the tensor would copy it once more).
func filledTensor[T float32 | int32](fill func(flat []T), dims ...int) *tensors.Tensor {
	t := tensors.FromShape(shapes.Make(dtypes.FromGenericsType[T](), dims...))
	tensors.MustMutableFlatData(t, fill)
	return t
}
