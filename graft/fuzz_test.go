package graft

import (
	"bytes"
	"math"
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/rollout"
)

// decodeBatch turns fuzz bytes into a batch: the first byte picks the number of tasks, then each
// trajectory is a header byte (task, truncated, success, errored), an outcome byte, a length byte
// and one byte per step (next key out of 7, per-step reward, action out of 4, and now and then a
// key that does not continue from the previous step's next key).
func decodeBatch(data []byte) *rollout.Batch {
	if len(data) == 0 {
		return &rollout.Batch{Tasks: 1}
	}
	b := &rollout.Batch{Tasks: 1 + int(data[0]%4)}
	outcomes := []float64{0, 1, 0.5, -1, 2, 1e-9}
	rewards := []float64{0, -0.1, 0.5, -1}
	data = data[1:]
	for len(data) >= 3 {
		h, oc, n := data[0], data[1], int(data[2]%16)
		data = data[3:]
		t := rollout.Trajectory{
			Task:      int(h) % b.Tasks,
			Truncated: h&0x10 != 0,
			Success:   h&0x20 != 0,
			Outcome:   outcomes[int(oc)%len(outcomes)],
		}
		if h&0xc0 == 0xc0 {
			t.Err = "fault"
		}
		key := "k" + strconv.Itoa(int(oc>>4)%7)
		for ; n > 0 && len(data) > 0; n-- {
			c := data[0]
			data = data[1:]
			if c&0x80 != 0 && c&0x07 == 0 {
				key = "j" + strconv.Itoa(int(c>>3)%7) // a Key that breaks the chain
			}
			next := "k" + strconv.Itoa(int(c)%7)
			t.Steps = append(t.Steps, rollout.Step{Key: key, NextKey: next,
				Action: "a" + strconv.Itoa(int(c>>5)%4), Reward: rewards[int(c>>3)%len(rewards)]})
			key = next
		}
		b.Trajs = append(b.Trajs, t)
	}
	return b
}

// FuzzGraphBuild builds graphs from arbitrary trajectories and runs every estimator on them: no
// panic, advantages shaped like the batch, finite, zero on errored trajectories, finite
// diagnostics, and an export that succeeds.
func FuzzGraphBuild(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0x20, 1, 3, 1, 2, 3})
	f.Add([]byte{1, 0x10, 0, 5, 9, 9, 9, 9, 9, 0x21, 1, 2, 9, 10})
	f.Add([]byte{3, 0xc0, 1, 4, 1, 2, 3, 4, 0x01, 0x33, 7, 0x80, 0x88, 0x41, 1, 2, 3, 4})
	f.Add([]byte{2, 0x20, 1, 0, 0x00, 0, 15, 1, 8, 1, 8, 1, 8, 1, 8, 1, 8, 1, 8, 1, 8})
	ests := allEstimators(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		b := decodeBatch(data)
		for name, est := range ests {
			adv, d := est.Estimate(b)
			if len(adv) != len(b.Trajs) {
				t.Fatalf("%s: %d advantage rows for %d trajectories", name, len(adv), len(b.Trajs))
			}
			for i := range adv {
				if len(adv[i]) != len(b.Trajs[i].Steps) {
					t.Fatalf("%s: trajectory %d has %d advantages for %d steps", name, i, len(adv[i]), len(b.Trajs[i].Steps))
				}
				for k, a := range adv[i] {
					if math.IsNaN(a) || math.IsInf(a, 0) {
						t.Fatalf("%s: A[%d][%d] = %g", name, i, k, a)
					}
					if b.Trajs[i].Err != "" && a != 0 {
						t.Fatalf("%s: errored trajectory %d has A[%d] = %g", name, i, k, a)
					}
				}
			}
			for k, v := range d {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: diagnostic %s = %g", name, k, v)
				}
			}
		}
		var buf bytes.Buffer
		for task := 0; task < b.Tasks; task++ {
			for _, format := range []string{"dot", "json"} {
				buf.Reset()
				if err := ExportTask(b, task, DefaultOptions(), format, &buf); err != nil {
					t.Fatalf("export task %d as %s: %v", task, format, err)
				}
			}
		}
	})
}
