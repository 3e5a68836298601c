package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// XLA compiles a graph for every new combination of input shapes, in seconds, while the pure-Go
// backend builds one in microseconds. On an xla backend every minibatch is therefore padded to a
// bucketed number of rows, sequence length and steps (bucket), so that a run meets a handful of
// shapes; the padding has weight 0 everywhere, so no sum changes (attention is causal, so the
// positions appended after a row's end are never attended to by the positions the loss reads).
// The go backend keeps exact shapes: padding would only add work to it.

// bucket rounds n up to 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, … (steps of 8 up to 32, then
// alternately ×1.5 and ×4/3), capped at limit when limit > 0.
func bucket(n, limit int) int {
	q := 8
	for q < n {
		if q < 32 {
			q += 8
		} else if q&(q-1) == 0 {
			q += q / 2
		} else {
			q += q / 3
		}
	}
	if limit > 0 {
		q = min(q, limit)
	}
	return q
}

// padBatch returns the minibatch padded to rows × length positions and steps steps per row (each
// at least the batch's own), every added entry 0 (weight 0: never read by the loss); the batch
// itself when nothing is added.
func padBatch(b *TrainBatch, rows, length, steps int) *TrainBatch {
	steps = max(steps, b.Steps)
	if rows == b.Rows && length == b.Len && steps == b.Steps {
		return b
	}
	return &TrainBatch{Rows: rows, Len: length, Steps: steps,
		Tokens: padded(b.Tokens, b.Rows, b.Len, rows, length), Targets: padded(b.Targets, b.Rows, b.Len, rows, length),
		OldLogp: padded(b.OldLogp, b.Rows, b.Len, rows, length), Adv: padded(b.Adv, b.Rows, b.Len, rows, length),
		Weight: padded(b.Weight, b.Rows, b.Len, rows, length), RefLogp: padded(b.RefLogp, b.Rows, b.Len, rows, length),
		StepOf:  padded(b.StepOf, b.Rows, b.Len, rows, length),
		StepAdv: padded(b.StepAdv, b.Rows, b.Steps, rows, steps), StepWeight: padded(b.StepWeight, b.Rows, b.Steps, rows, steps)}
}

// padded is a row-major [rows, width] array zero-padded to [toRows, toWidth]; an array of another
// size (one the update does not read: nil, or RefLogp with KL off) gives nil.
func padded[T float32 | int32](v []T, rows, width, toRows, toWidth int) []T {
	if len(v) != rows*width || v == nil {
		return nil
	}
	out := make([]T, toRows*toWidth)
	for r := range rows {
		copy(out[r*toWidth:], v[r*width:(r+1)*width])
	}
	return out
}

// unpad takes the [rows, length] corner of a row-major [rows', length'] array.
func unpad(v []float32, rows, length, paddedLen int) []float32 {
	if paddedLen == length {
		return v[:rows*length]
	}
	out := make([]float32, rows*length)
	for r := range rows {
		copy(out[r*length:(r+1)*length], v[r*paddedLen:])
	}
	return out
}

// shapeFor returns the padded shape of a rows × length minibatch with steps steps per row: rows
// a multiple of the devices, and on an xla backend all three bucketed.
func (p *Policy) shapeFor(rows, length, steps int) (int, int, int) {
	if p.bucketed {
		rows, length = bucket(rows, 0), bucket(length, p.cfg.MaxLen)
		if steps > 0 {
			steps = bucket(steps, 0)
		}
	}
	return (rows + p.devices - 1) / p.devices * p.devices, length, steps
}

// Compilations is what the policy's graphs cost to compile.
type Compilations struct {
	// Count is the number of distinct input shapes its executables have met (each one compiled
	// once).
	Count int
	// Time is the wall time of the calls that met a new shape: the compilation and that first
	// execution.
	Time time.Duration
}

// Compilations returns the compilations so far; differences between two calls are a phase's.
func (p *Policy) Compilations() Compilations { return p.compiled }

// exec runs e, counting a compilation when the input shapes are new to it.
func (p *Policy) exec(name string, e *context.Exec, args ...any) ([]*tensors.Tensor, error) {
	var key strings.Builder
	key.WriteString(name)
	for _, a := range args {
		if s, ok := a.(interface{ Shape() shapes.Shape }); ok {
			fmt.Fprintf(&key, "|%s", s.Shape())
		}
	}
	k := key.String()
	if p.shapesSeen[k] {
		return e.Exec(args...)
	}
	t0 := time.Now()
	out, err := e.Exec(args...)
	if err == nil {
		p.shapesSeen[k] = true
		p.compiled.Count++
		p.compiled.Time += time.Since(t0)
	}
	return out, err
}
