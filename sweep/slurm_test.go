package sweep

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The batch script is golden: resources from the sweep config, one task per run.
func TestScriptGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    ScriptParams
	}{
		{"minimal", ScriptParams{Sweep: "h2h", Dir: "/scratch/sweeps/h2h", WorkDir: "/home/me/graftrl", Binary: "/home/me/bin/graftrl",
			Slurm: SlurmConfig{CPUsPerTask: 1}}},
		{"full", ScriptParams{Sweep: "h2h", Dir: "/scratch/my sweeps/h2h", WorkDir: "/home/me/graftrl", Binary: "/opt/it's/graftrl",
			Slurm: SlurmConfig{Partition: "gpu", Time: "01:30:00", CPUsPerTask: 4, GPUs: 1, MaxParallel: 8, JobName: "ablation",
				Extra: []string{"#SBATCH --mem=8G", "#SBATCH --account=rl", "module load cuda"}}}},
	} {
		got := Script(tc.p)
		path := filepath.Join("testdata", "script-"+tc.name+".sbatch")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./sweep -run TestScriptGolden -update writes it)", err)
		}
		if got != string(want) {
			t.Errorf("%s: script differs from %s:\n%s", tc.name, path, got)
		}
	}
}

func TestArraySpec(t *testing.T) {
	for _, tc := range []struct {
		idx  []int
		max  int
		want string
	}{
		{[]int{0, 1, 2, 3, 4, 5}, 0, "0-5"},
		{[]int{0, 1, 2, 3}, 2, "0-3%2"},
		{[]int{5, 1, 3, 4, 1}, 0, "1,3-5"},
		{[]int{7}, 1, "7%1"},
		{[]int{0, 2, 4, 5, 6, 9}, 0, "0,2,4-6,9"},
	} {
		if got := ArraySpec(tc.idx, tc.max); got != tc.want {
			t.Errorf("ArraySpec(%v, %d) = %q, want %q", tc.idx, tc.max, got, tc.want)
		}
	}
	args := SubmitArgs("/d/slurm/sweep.sbatch", []int{0, 1, 2, 3}, 2)
	if strings.Join(args, " ") != "--parsable --array=0-3%2 /d/slurm/sweep.sbatch" {
		t.Errorf("sbatch args %q", args)
	}
}

func TestParseSqueue(t *testing.T) {
	out := "41_0|COMPLETED|None\n41_1|RUNNING|node1\n41_2|PENDING|(JobArrayTaskLimit)\n42|RUNNING|node1\n41_[3-5]|PENDING|(Resources)\n\n41_6|CANCELLED+|None\n"
	got := ParseSqueue(out)
	want := []TaskState{{"41", 0, "COMPLETED", "None"}, {"41", 1, "RUNNING", "node1"}, {"41", 2, "PENDING", "(JobArrayTaskLimit)"}, {"41", 6, "CANCELLED", "None"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("task %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[0].Active() || !got[1].Active() || !got[2].Active() || got[3].Active() {
		t.Error("Active")
	}
}

// fakeSlurm puts sbatch and squeue scripts on PATH: sbatch records its arguments and prints a
// job id; squeue prints what the file squeue.out holds.
func fakeSlurm(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	sbatch := "#!/bin/sh\necho \"$@\" > " + filepath.Join(bin, "sbatch.args") + "\necho '4242;cluster'\n"
	squeue := "#!/bin/sh\necho \"$@\" > " + filepath.Join(bin, "squeue.args") + "\ncat " + filepath.Join(bin, "squeue.out") + " 2>/dev/null\n"
	for name, body := range map[string]string{"sbatch": sbatch, "squeue": squeue} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return bin
}

// SubmitSlurm writes the script, submits the unfinished runs as one array through sbatch and
// records the job; status joins squeue's task states with the run directories.
func TestSubmitSlurm(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: sl\nbase: tiny.yaml\ngrid:\n  estimator: [grpo, graft]\n  seed: [1, 2]\nexecutor: slurm\nslurm: {partition: debug, max_parallel: 2}\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	sd := c.Dir()
	// Run 1 is finished already: the array leaves it out.
	l := fakeLauncher(t)
	if err := RunOne(context.Background(), sd, 1, &l); err != nil {
		t.Fatal(err)
	}
	bin := fakeSlurm(t)
	var out bytes.Buffer
	job, err := SubmitSlurm(context.Background(), sd, m, SlurmOptions{Binary: "/usr/local/bin/graftrl", WorkDir: "/work", Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if job != "4242" {
		t.Errorf("job id %q", job)
	}
	abs, _ := filepath.Abs(sd)
	script := filepath.Join(abs, SlurmDir, SlurmScript)
	args, _ := os.ReadFile(filepath.Join(bin, "sbatch.args"))
	if strings.TrimSpace(string(args)) != "--parsable --array=0,2-3%2 "+script {
		t.Errorf("sbatch %s", args)
	}
	body, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --partition=debug\n", "#SBATCH --chdir=/work\n",
		"exec /usr/local/bin/graftrl sweep run-one --dir " + abs + ` --index "$SLURM_ARRAY_TASK_ID"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("script lacks %q:\n%s", want, body)
		}
	}
	jobs, err := Jobs(sd)
	if err != nil || len(jobs) != 1 || jobs[0].JobID != "4242" || jobs[0].Array != "0,2-3%2" || strings.Join(jobs[0].Runs, " ") != "maze-grpo-s1 maze-graft-s1 maze-graft-s2" {
		t.Errorf("jobs %+v, %v", jobs, err)
	}
	if !strings.Contains(out.String(), "submitted job array 4242 (3 of 4 runs; --array=0,2-3%2)") {
		t.Errorf("output: %s", out.String())
	}

	// While the array has active tasks, a second submission is refused.
	os.WriteFile(filepath.Join(bin, "squeue.out"), []byte("4242_0|RUNNING|node1\n4242_2|PENDING|(JobArrayTaskLimit)\n4242_3|PENDING|(JobArrayTaskLimit)\n"), 0o644)
	if _, err := SubmitSlurm(context.Background(), sd, m, SlurmOptions{Binary: "/x/graftrl", Out: &out}); err == nil ||
		!strings.Contains(err.Error(), "still has 3 task(s) queued or running (4242_0 RUNNING, 4242_2 PENDING, 4242_3 PENDING)") {
		t.Errorf("second submission: %v", err)
	}
	var status bytes.Buffer
	if err := PrintDirStatus(context.Background(), &status, sd, ""); err != nil {
		t.Fatal(err)
	}
	qargs, _ := os.ReadFile(filepath.Join(bin, "squeue.args"))
	if strings.TrimSpace(string(qargs)) != "--noheader --array --states=all --jobs=4242 --format=%i|%T|%R" {
		t.Errorf("squeue %s", qargs)
	}
	for _, want := range []string{"1 finished, 0 unfinished, 3 pending; Slurm: 1 running", "4242_0 RUNNING", "4242_3 PENDING"} {
		if !strings.Contains(status.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, status.String())
		}
	}
}

func TestSubmitSlurmErrors(t *testing.T) {
	dir := t.TempDir()
	c := writeSweep(t, dir, "name: sl\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\n")
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no sbatch
	_, err = SubmitSlurm(context.Background(), c.Dir(), m, SlurmOptions{Binary: "/x/graftrl"})
	if err == nil || !strings.Contains(err.Error(), "sbatch is not on PATH") || !strings.Contains(err.Error(), "--executor local") {
		t.Errorf("without sbatch: %v", err)
	}
	// A dry run needs no sbatch: it prints the script and the command.
	var out bytes.Buffer
	if _, err := SubmitSlurm(context.Background(), c.Dir(), m, SlurmOptions{Binary: "/x/graftrl", DryRun: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "#!/bin/bash\n") || !strings.Contains(out.String(), "# submit: sbatch --parsable --array=0-1 ") {
		t.Errorf("dry run:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(c.Dir(), SlurmDir, SlurmScript)); err == nil {
		t.Error("a dry run wrote the script")
	}
}

// Waiting counts finished runs in the run directories, not squeue's COMPLETED tasks (which
// squeue forgets after a while), and still shows squeue's other states.
func TestWaitJobProgress(t *testing.T) {
	bin := fakeSlurm(t)
	if err := os.WriteFile(filepath.Join(bin, "squeue.out"), []byte("7_0|COMPLETED|None\n7_1|FAILED|None\n7_2|COMPLETED|None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := waitJob(context.Background(), "7", time.Millisecond, &out, func() int { return 3 }, 4); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasSuffix(got, "] job 7: 3 of 4 runs finished, FAILED 1\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("progress %q", got)
	}
}
