//go:build perfscratch

package policy

import (
	"fmt"
	"os"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends/simplego"
)

func cpuNow() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

func med(x []float64) float64 { s := append([]float64(nil), x...); sort.Float64s(s); return s[len(s)/2] }

func timeIt(n int, f func()) (wall, cpu float64) {
	var ws, cs []float64
	for range n {
		c0, t0 := cpuNow(), time.Now()
		f()
		ws = append(ws, time.Since(t0).Seconds()*1000)
		cs = append(cs, cpuNow()-c0)
	}
	return med(ws), med(cs)
}

func TestScratchParts(t *testing.T) {
	bc := os.Getenv("SCRATCH_BACKEND")
	if bc == "" {
		bc = "parallelism=-1"
	}
	be, err := simplego.New(bc)
	if err != nil {
		t.Fatal(err)
	}
	c := benchConfig()
	p, err := New(be, Options{Model: c, Loss: DefaultLossConfig(), Optim: DefaultOptimConfig(), Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	tb := benchBatch(c, 16, 64)
	p.Update(tb, 1e-4)
	p.Logits(16, 64, tb.Tokens)
	p.LogProbs(tb)
	for round := range 3 {
		w1, c1 := timeIt(5, func() { p.Logits(16, 64, tb.Tokens) })
		w2, c2 := timeIt(5, func() { p.LogProbs(tb) })
		w3, c3 := timeIt(5, func() { p.Update(tb, 1e-4) })
		fmt.Printf("%s r%d: logits %.1f/%.1f  logp %.1f/%.1f  train %.1f/%.1f (wall/cpu ms)\n", bc, round, w1, c1, w2, c2, w3, c3)
	}
}

func TestScratchProfile(t *testing.T) {
	bc := os.Getenv("SCRATCH_BACKEND")
	if bc == "" {
		bc = "parallelism=-1"
	}
	be, _ := simplego.New(bc)
	c := benchConfig()
	p, _ := New(be, Options{Model: c, Loss: DefaultLossConfig(), Optim: DefaultOptimConfig(), Seed: 7})
	tb := benchBatch(c, 16, 64)
	what := os.Getenv("SCRATCH_WHAT")
	for range 20 {
		switch what {
		case "logits":
			p.Logits(16, 64, tb.Tokens)
		default:
			p.Update(tb, 1e-4)
		}
	}
}

func TestScratchCfgs(t *testing.T) {
	cfgs := []string{"parallelism=-1", "parallelism=-1,dotgeneral_large", "parallelism=0,dotgeneral_large", "parallelism=-1,dotgeneral_large,ops_sequential"}
	rows := 16
	if os.Getenv("SCRATCH_ROWS") == "64" {
		rows = 64
	}
	type st struct{ p *Policy }
	var ps []*Policy
	c := benchConfig()
	tb := benchBatch(c, rows, 64)
	for _, bc := range cfgs {
		be, _ := simplego.New(bc)
		p, _ := New(be, Options{Model: c, Loss: DefaultLossConfig(), Optim: DefaultOptimConfig(), Seed: 7})
		p.Update(tb, 1e-4)
		ps = append(ps, p)
	}
	W := make([][]float64, len(cfgs))
	C := make([][]float64, len(cfgs))
	for range 5 {
		for i, p := range ps {
			w, c := timeIt(3, func() { p.Update(tb, 1e-4) })
			W[i] = append(W[i], w)
			C[i] = append(C[i], c)
		}
	}
	for i, bc := range cfgs {
		fmt.Printf("%-50s B%d wall %.1f cpu %.1f\n", bc, rows, med(W[i]), med(C[i]))
	}
}
