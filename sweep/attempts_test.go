package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A run trained over several attempts keeps what each one cost: the record of its last attempt
// carries the CPU and wall-clock times of the earlier ones, and RunLocal counts the training
// processes it started, failed ones included.
func TestAttemptsAddUp(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: cost\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\nset: [env_steps=20]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	sd := c.Dir()
	t.Setenv("GRAFTRL_FAKE_FAIL", "maze-grpo-s2")
	res, err := RunLocal(context.Background(), sd, m, LocalOptions{Workers: 1, Launcher: fakeLauncher(t)})
	if err == nil || res.Done != 1 || len(res.Failed) != 1 || res.Started != 2 {
		t.Fatalf("first pass: %+v, %v; want 1 done, 1 failed, 2 started", res, err)
	}
	first := Check(sd, &m.Runs[1], "").Attempt
	if first == nil || first.N != 1 || first.Ended == nil || first.EarlierCPUSeconds != 0 || first.EarlierWallSeconds != 0 {
		t.Fatalf("first attempt: %+v", first)
	}
	t.Setenv("GRAFTRL_FAKE_FAIL", "")
	res, err = RunLocal(context.Background(), sd, m, LocalOptions{Workers: 1, Launcher: fakeLauncher(t)})
	if err != nil || res.Done != 1 || res.Skipped != 1 || res.Started != 1 {
		t.Fatalf("second pass: %+v, %v; want 1 done, 1 skipped, 1 started", res, err)
	}
	second := Check(sd, &m.Runs[1], "").Attempt
	if second == nil || second.N != 2 || second.EarlierCPUSeconds != first.CPUSeconds || second.EarlierWallSeconds != first.Ended.Sub(first.Started).Seconds() {
		t.Fatalf("second attempt %+v; want the first's %v s of CPU and %v s of wall clock carried", second, first.CPUSeconds, first.Ended.Sub(first.Started).Seconds())
	}
	if got, want := second.TotalCPUSeconds(), first.CPUSeconds+second.CPUSeconds; got != want {
		t.Errorf("TotalCPUSeconds %v, want %v", got, want)
	}
	if got, want := second.TotalWallSeconds(), first.Ended.Sub(first.Started).Seconds()+second.Ended.Sub(second.Started).Seconds(); got != want {
		t.Errorf("TotalWallSeconds %v, want %v", got, want)
	}
}

// An interrupted sweep says what the next pass does: unfinished runs resume from their newest
// checkpoint (they are not started over).
func TestInterruptedSweepSaysResume(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: stop\nbase: tiny.yaml\ngrid:\n  seed: [1]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = RunLocal(ctx, c.Dir(), m, LocalOptions{Workers: 1, Launcher: fakeLauncher(t)})
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "unfinished ones resume from their newest checkpoint") || strings.Contains(err.Error(), "restart") {
		t.Errorf("interrupted sweep: %v", err)
	}
}
