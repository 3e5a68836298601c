package graft

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportJSON(t *testing.T) {
	var buf bytes.Buffer
	o := handOpts(nil) // td, raw, γ 0.9
	if err := ExportTask(trap(), 0, o, "json", &buf); err != nil {
		t.Fatal(err)
	}
	var ex GraphExport
	if err := json.Unmarshal(buf.Bytes(), &ex); err != nil {
		t.Fatal(err)
	}
	byKey := map[string]ExportNode{}
	for i, n := range ex.Nodes {
		if n.ID != i {
			t.Errorf("node %d has ID %d", i, n.ID)
		}
		byKey[n.Key] = n
	}
	for k, v := range map[string]float64{"S": 0.27, "P": 0.45, "Q": 0, "⊥(1)": 1, "⊥(0)": 0} {
		if n, ok := byKey[k]; !ok || !near(n.Value, v, 1e-10) {
			t.Errorf("node %s: %+v, want V = %g", k, n, v)
		}
	}
	if n := byKey["⊥(1)"]; n.Kind != "sink" || n.Distance != 0 || n.Visits != 0 {
		t.Errorf("sink node %+v", n)
	}
	if n := byKey["S"]; n.Kind != "state" || n.Distance != 2 || n.Visits != 3 {
		t.Errorf("S node %+v, want distance 2, visits 3", n)
	}
	// S → P is one distinct edge of two instances, TD 0.135.
	found := false
	for _, e := range ex.Edges {
		if ex.Nodes[e.From].Key == "S" && ex.Nodes[e.To].Key == "P" {
			found = true
			if e.Count != 2 || e.Action != "to P" || !near(e.TD, 0.135, 1e-10) || !near(e.Advantage, 0.135, 1e-10) || !near(e.Raw, 0.135, 1e-10) {
				t.Errorf("edge S → P: %+v", e)
			}
		}
	}
	if !found || len(ex.Edges) != 5 || ex.Sweeps == 0 || ex.Mode != ModeTD {
		t.Errorf("export %+v", ex)
	}
}

func TestExportDOT(t *testing.T) {
	b := penalty()
	b.Trajs[0].Steps[1].Action = `say "hi"` // quoting must survive
	var buf bytes.Buffer
	if err := ExportTask(b, 0, DefaultOptions(), "dot", &buf); err != nil {
		t.Fatal(err)
	}
	dot := buf.String()
	for _, want := range []string{
		`digraph "task 0" {`,
		`n0 [label="S\nV=`,
		`shape=doublecircle`,
		`label="fly ×1\nA=`,
		`say \"hi\" ×1`,
		"color=\"#c92a2a\"", // the invalid action's self-loop is negative
		"}\n",
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot)
		}
	}
	if strings.Count(dot, "{") != 1 || strings.Count(dot, "}") != 1 {
		t.Errorf("unbalanced braces:\n%s", dot)
	}
	// Render it when Graphviz is installed.
	if path, err := exec.LookPath("dot"); err == nil {
		out := filepath.Join(t.TempDir(), "g.svg")
		f := filepath.Join(t.TempDir(), "g.dot")
		if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command(path, "-Tsvg", "-o", out, f).CombinedOutput(); err != nil {
			t.Errorf("dot: %v\n%s", err, msg)
		}
	}
}

func TestExportErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := ExportTask(trap(), 1, DefaultOptions(), "dot", &buf); err == nil || !strings.Contains(err.Error(), "task 1") {
		t.Errorf("task out of range: %v", err)
	}
	if err := ExportTask(trap(), 0, DefaultOptions(), "png", &buf); err == nil || !strings.Contains(err.Error(), `"png"`) {
		t.Errorf("bad format: %v", err)
	}
	o := DefaultOptions()
	o.Gamma = 2
	if err := ExportTask(trap(), 0, o, "json", &buf); err == nil || !strings.Contains(err.Error(), "gamma") {
		t.Errorf("bad options: %v", err)
	}
}

// Exporting gives the estimator's own numbers.
func TestExportMatchesEstimate(t *testing.T) {
	b := diamond()
	o := DefaultOptions()
	o.EpisodeWeight = 0.3
	adv, _ := mustGRAFT(t, o).Estimate(b)
	var buf bytes.Buffer
	if err := ExportTask(b, 0, o, "json", &buf); err != nil {
		t.Fatal(err)
	}
	var ex GraphExport
	if err := json.Unmarshal(buf.Bytes(), &ex); err != nil {
		t.Fatal(err)
	}
	// M → ⊥(0) is taken once, by T2's last step.
	for _, e := range ex.Edges {
		if ex.Nodes[e.From].Key == "M" && ex.Nodes[e.To].Key == "⊥(0)" {
			if e.Count != 1 || e.Advantage != adv[1][2] {
				t.Errorf("edge M → ⊥(0): %+v, estimator says %g", e, adv[1][2])
			}
			return
		}
	}
	t.Error("edge M → ⊥(0) missing")
}
