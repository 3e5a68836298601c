package gobackend

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// fuseGraph builds, with the backend builder's own API, a graph of chains of every kind fusing
// meets, on a parameter x of n values and a parameter y of its shape:
//
//	h    = x·y                      (read three times: an input of the chains below)
//	gelu = h·(1 + tanh(h·(0.5 + 0.25·(h·h))))
//	soft = e^(h − y) / 3            (the Sub's result owned by Exp)
//	neg  = −(2·soft) + gelu         (a scalar on the left of Mul)
//
// and returns the outputs gelu (also read by neg) and neg.
func fuseGraph(t *testing.T, b backends.Builder, n int) []backends.Op {
	t.Helper()
	must := mustOp(t)
	s := shapes.Make(dtypes.Float32, n)
	x := must(b.Parameter("x", s, nil))
	y := must(b.Parameter("y", s, nil))
	c := func(v float32) backends.Op { return must(b.Constant([]float32{v})) }
	h := must(b.Mul(x, y))
	inner := must(b.Add(c(0.5), must(b.Mul(must(b.Mul(h, h)), c(0.25)))))
	gelu := must(b.Mul(h, must(b.Add(must(b.Tanh(must(b.Mul(h, inner)))), c(1)))))
	soft := must(b.Div(must(b.Exp(must(b.Sub(h, y)))), c(3)))
	neg := must(b.Add(must(b.Neg(must(b.Mul(c(2), soft)))), gelu))
	return []backends.Op{gelu, neg}
}

// mustOp returns a function that passes an op through, failing the test on an error.
func mustOp(t *testing.T) func(backends.Op, error) backends.Op {
	return func(op backends.Op, err error) backends.Op {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
}

// tensorIn is an input of runGraph: float32 values and their dimensions.
type tensorIn struct {
	v    []float32
	dims []int
}

// runGraph compiles outputs on the builder bld of backend be and runs them on the inputs,
// returning each output's values.
func runGraph(t *testing.T, be backends.Backend, bld backends.Builder, outputs []backends.Op, inputs ...tensorIn) [][]float32 {
	t.Helper()
	exe, err := bld.Compile(outputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var in []backends.Buffer
	for _, a := range inputs {
		buf, err := be.BufferFromFlatData(0, a.v, shapes.Make(dtypes.Float32, a.dims...))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, buf)
	}
	out, err := exe.Execute(in, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float32, len(out))
	for i, o := range out {
		s, err := be.BufferShape(o)
		if err != nil {
			t.Fatal(err)
		}
		res[i] = make([]float32, s.Size())
		if err := be.BufferToFlatData(o, res[i]); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// unfusedForFusing returns the unfused Go backend, whose builders the fusing tests fuse by hand.
// It skips the test on a CPU without AVX, where fusing is meant not to run, and fails it for any
// other reason fusing is off (a GoMLX change that moved the node fields, say), which would
// otherwise turn fusing off unnoticed.
func unfusedForFusing(t *testing.T) backends.Backend {
	t.Helper()
	plain, err := newSimplego()
	if err != nil {
		t.Fatal(err)
	}
	if err := fuseProblem(); errors.Is(err, errNoAVX) {
		t.Skip("fusing does not run on a CPU without AVX")
	} else if err != nil {
		t.Fatalf("fusing is off on a CPU with AVX: %v", err)
	}
	return plain
}

// TestFuseChains checks which chains fuseGraph's graph fuses into (the programs derived by hand
// from the graph) and that the fused graph computes every value bit for bit as the unfused one,
// at sizes below the fusing threshold, with a partial block, with several blocks, and large
// enough to be split across the worker pool.
func TestFuseChains(t *testing.T) {
	plain := unfusedForFusing(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{100, 512, 513, 514, 515, 1024, 1025, 3000, 32768, 32769, 40000} {
		bld := plain.Builder("fused")
		outputs := fuseGraph(t, bld, n)
		var progs []string
		for _, node := range fuseChains(outputs) {
			f, ok := fieldsOf(node)
			if !ok {
				t.Fatal("node fields not found")
			}
			progs = append(progs, (*f.data).(*fusedProgram).String())
		}
		var want []string
		if n >= fusedMinSize {
			// Roots from the last node back: neg, absorbing Neg, Mul and soft's Div, Exp and Sub
			// (h is read elsewhere, gelu is an output); then gelu's chain (h·h read as one input).
			want = []string{
				"v0=sub(in0,in1) v1=exp(v0) v2=div(v1,in2) v3=mul(v2,in3) v4=neg(v3) v5=add(v4,in4) ",
				"v0=mul(in0,in0) v1=mul(v0,in1) v2=add(v1,in2) v3=mul(in0,v2) v4=tanh(v3) v5=add(v4,in3) v6=mul(in0,v5) ",
			}
		}
		if len(progs) != len(want) {
			t.Fatalf("n %d: fused %q, want %q", n, progs, want)
		}
		for i := range want {
			if progs[i] != want[i] {
				t.Fatalf("n %d: chain %d is %q, want %q", n, i, progs[i], want[i])
			}
		}
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(rng.NormFloat64()*2), float32(rng.NormFloat64())
		}
		x[0], y[0] = float32(math.Inf(1)), 1 // an infinity through every op
		x[1], y[1] = 50, 2                   // tanh's saturated branch, a large exponent
		got := runGraph(t, plain, bld, outputs, tensorIn{x, []int{n}}, tensorIn{y, []int{n}})
		ref := plain.Builder("plain")
		want2 := runGraph(t, plain, ref, fuseGraph(t, ref, n), tensorIn{x, []int{n}}, tensorIn{y, []int{n}})
		for o := range got {
			for i := range got[o] {
				if a, b := got[o][i], want2[o][i]; math.Float32bits(a) != math.Float32bits(b) && !(a != a && b != b) {
					t.Fatalf("n %d: output %d value %d: %v fused, %v unfused", n, o, i, a, b)
				}
			}
		}
		// One value by hand, as a check of the reference itself.
		h := x[2] * y[2]
		g := h * (float32(math.Tanh(float64(h*(0.5+h*h*0.25)))) + 1)
		if got[0][2] != g {
			t.Fatalf("n %d: gelu %v, want %v", n, got[0][2], g)
		}
	}
}

// TestFuseBroadcasts checks that a chain reads the operands of the broadcasts it absorbs spread
// in place — a per-row value over a row (layer norm's mean) and a per-column one over every row
// (a gain) — against the unfused graph bit for bit and against a Go loop.
func TestFuseBroadcasts(t *testing.T) {
	plain := unfusedForFusing(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for _, rc := range [][2]int{{37, 16}, {300, 24}, {1000, 40}} {
		rows, cols := rc[0], rc[1]
		build := func(b backends.Builder) []backends.Op {
			must := mustOp(t)
			s := shapes.Make(dtypes.Float32, rows, cols)
			x := must(b.Parameter("x", s, nil))
			m := must(b.Parameter("m", shapes.Make(dtypes.Float32, rows), nil))
			v := must(b.Parameter("v", shapes.Make(dtypes.Float32, cols), nil))
			centred := must(b.Sub(x, must(b.BroadcastInDim(m, s, []int{0}))))
			return []backends.Op{must(b.Mul(centred, must(b.BroadcastInDim(v, s, []int{1}))))}
		}
		bld := plain.Builder("fused")
		outputs := build(bld)
		fused := fuseChains(outputs)
		if len(fused) != 1 {
			t.Fatalf("%dx%d: %d fused nodes, want 1", rows, cols, len(fused))
		}
		f, _ := fieldsOf(fused[0])
		want := fmt.Sprintf("in1=bcast[%d %d][1 0] in2=bcast[%d %d][0 1] v0=sub(in0,in1) v1=mul(v0,in2) ", rows, cols, rows, cols)
		if got := (*f.data).(*fusedProgram).String(); got != want {
			t.Fatalf("program %q, want %q", got, want)
		}
		x, m, v := make([]float32, rows*cols), make([]float32, rows), make([]float32, cols)
		for _, s := range [][]float32{x, m, v} {
			for i := range s {
				s[i] = float32(rng.NormFloat64())
			}
		}
		inputs := []tensorIn{{x, []int{rows, cols}}, {m, []int{rows}}, {v, []int{cols}}}
		run := func(bld backends.Builder, outputs []backends.Op) []float32 {
			return runGraph(t, plain, bld, outputs, inputs...)[0]
		}
		got := run(bld, outputs)
		ref := plain.Builder("plain")
		unfused := run(ref, build(ref))
		for i := range got {
			r, c := i/cols, i%cols
			if w := (x[i] - m[r]) * v[c]; got[i] != w || math.Float32bits(got[i]) != math.Float32bits(unfused[i]) {
				t.Fatalf("%dx%d: value %d: %v fused, %v unfused, %v by hand", rows, cols, i, got[i], unfused[i], w)
			}
		}
	}
}

// TestFuseGraphChains checks that a chain takes in a value it reads more than once when nothing
// else reads it (the tanh of a GELU's gradient, read three times), that it leaves such a value a
// node of its own when something else reads it too, that values share scratch blocks once read
// for the last time, and that either way the values are the unfused graph's, bit for bit.
func TestFuseGraphChains(t *testing.T) {
	plain := unfusedForFusing(t)
	for _, tc := range []struct {
		n       int
		alsoOut bool
	}{{513, false}, {514, false}, {515, false}, {3000, false}, {3000, true}} {
		n, alsoOut := tc.n, tc.alsoOut
		// t = tanh(x·y); out = (y − t·t)·x + t, and t itself as a second output when alsoOut; at
		// sizes that leave a last block of 1, 2, 3 and 440 values.
		build := func(b backends.Builder) []backends.Op {
			must := mustOp(t)
			s := shapes.Make(dtypes.Float32, n)
			x := must(b.Parameter("x", s, nil))
			y := must(b.Parameter("y", s, nil))
			th := must(b.Tanh(must(b.Mul(x, y))))
			out := []backends.Op{must(b.Add(must(b.Mul(must(b.Sub(y, must(b.Mul(th, th)))), x)), th))}
			if alsoOut {
				out = append(out, th)
			}
			return out
		}
		bld := plain.Builder("fused")
		outputs := build(bld)
		var progs []string
		var slots [][]int
		for _, node := range fuseChains(outputs) {
			f, _ := fieldsOf(node)
			p := (*f.data).(*fusedProgram)
			progs, slots = append(progs, p.String()), append(slots, p.slot)
		}
		want := []string{"v0=mul(in0,in1) v1=tanh(v0) v2=mul(v1,v1) v3=sub(in1,v2) v4=mul(v3,in0) v5=add(v4,v1) "}
		// v1 writes over v0, read for the last time; v3 over v2, v4 over v3; v5 is the output.
		wantSlots := [][]int{{0, 0, 1, 1, 1, -1}}
		if alsoOut {
			want = []string{
				"v0=mul(in0,in0) v1=sub(in1,v0) v2=mul(v1,in2) v3=add(v2,in0) ", // t an input
				"v0=mul(in0,in1) v1=tanh(v0) ",
			}
			wantSlots = [][]int{{0, 0, 0, -1}, {0, -1}}
		}
		if fmt.Sprint(progs) != fmt.Sprint(want) || fmt.Sprint(slots) != fmt.Sprint(wantSlots) {
			t.Fatalf("n %d, t also an output %v: fused %q slots %v, want %q slots %v", n, alsoOut, progs, slots, want, wantSlots)
		}
		rng := rand.New(rand.NewPCG(25, 26))
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(rng.NormFloat64()*2), float32(rng.NormFloat64())
		}
		got := runFusedAndUnfused(t, plain, bld, outputs, build, x, y)
		th := float32(math.Tanh(float64(x[5] * y[5])))
		if w := (y[5]-th*th)*x[5] + th; got[0][5] != w {
			t.Fatalf("n %d, t also an output %v: value 5 is %v, by hand %v", n, alsoOut, got[0][5], w)
		}
	}
}

// TestFuseScalarLeft checks that Sub and Div with a scalar on the left join chains, the scalar
// read as a fill (the kernels take scalars on the right only), also as a chain of one op, and
// compute the unfused graph's values bit for bit, at sizes leaving a last block of 1, 2, 3 and
// 440 values.
func TestFuseScalarLeft(t *testing.T) {
	plain := unfusedForFusing(t)
	for _, n := range []int{513, 514, 515, 3000} {
		checkFuseScalarLeft(t, plain, n)
	}
}

// checkFuseScalarLeft is TestFuseScalarLeft on parameters of n values.
func checkFuseScalarLeft(t *testing.T, plain backends.Backend, n int) {
	t.Helper()
	// out0 = 3 / (1 − x·y), out1 = 2 − x
	build := func(b backends.Builder) []backends.Op {
		must := mustOp(t)
		s := shapes.Make(dtypes.Float32, n)
		x := must(b.Parameter("x", s, nil))
		y := must(b.Parameter("y", s, nil))
		c := func(v float32) backends.Op { return must(b.Constant([]float32{v})) }
		return []backends.Op{must(b.Div(c(3), must(b.Sub(c(1), must(b.Mul(x, y)))))), must(b.Sub(c(2), x))}
	}
	bld := plain.Builder("fused")
	outputs := build(bld)
	var progs []string
	for _, node := range fuseChains(outputs) {
		f, _ := fieldsOf(node)
		progs = append(progs, (*f.data).(*fusedProgram).String())
	}
	want := []string{
		"in0=bcast[][] v0=sub(in0,in1) ",
		"in2=bcast[][] in3=bcast[][] v0=mul(in0,in1) v1=sub(in2,v0) v2=div(in3,v1) ",
	}
	if fmt.Sprint(progs) != fmt.Sprint(want) {
		t.Fatalf("fused %q, want %q", progs, want)
	}
	rng := rand.New(rand.NewPCG(27, 28))
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	got := runFusedAndUnfused(t, plain, bld, outputs, build, x, y)
	if w := 3 / (1 - x[7]*y[7]); got[0][7] != w || got[1][7] != 2-x[7] {
		t.Fatalf("value 7: %v and %v, by hand %v and %v", got[0][7], got[1][7], w, 2-x[7])
	}
}

// runFusedAndUnfused runs the fused outputs (built on bld) and the graph build makes on a fresh
// builder, on the parameters x and y of len(x) values, fails the test where a value differs in
// its bits, and returns the fused graph's values.
func runFusedAndUnfused(t *testing.T, plain backends.Backend, bld backends.Builder, outputs []backends.Op,
	build func(backends.Builder) []backends.Op, x, y []float32) [][]float32 {
	t.Helper()
	inputs := []tensorIn{{x, []int{len(x)}}, {y, []int{len(y)}}}
	got := runGraph(t, plain, bld, outputs, inputs...)
	ref := plain.Builder("plain")
	unfused := runGraph(t, plain, ref, build(ref), inputs...)
	for o := range got {
		for i := range got[o] {
			if math.Float32bits(got[o][i]) != math.Float32bits(unfused[o][i]) {
				t.Fatalf("output %d value %d: %v fused, %v unfused", o, i, got[o][i], unfused[o][i])
			}
		}
	}
	return got
}
