package compare

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteReport writes a full report. Set GRAFTRL_COMPARE_OUT to a folder to keep it there
// (to look at the plots).
func TestWriteReport(t *testing.T) {
	runs := loadSuite(t, []string{"maze", "keydoor", "sokoban"},
		map[string]float64{"grpo": 0.5, "graft": 0.8, "gigpo": 0.55, "graphgpo": 0.6}, 5)
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 500}})
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("GRAFTRL_COMPARE_OUT")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	var figures []string
	for _, env := range c.Envs {
		figures = append(figures, "curves-"+env)
	}
	figures = append(figures, "final", "improvement", "paired", "profile")
	for _, f := range figures {
		data, err := os.ReadFile(filepath.Join(dir, PlotDir, f+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s.png: %v", f, err)
		}
		if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
			t.Errorf("%s.png is only %v", f, b)
		}
		svg, err := os.ReadFile(filepath.Join(dir, PlotDir, f+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(svg, []byte("<svg")) || len(svg) < 1000 {
			t.Errorf("%s.svg is not a figure (%d bytes)", f, len(svg))
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Protocol", "| method | n | seeds |", "IQM [95 % CI]", "P(> grpo)",
		"### maze", "![learning curves in maze](plots/curves-maze.png)", "## Aggregate over environments",
		"```yaml", "estimator:", "| graft | 5 | 1, 2, 3, 4, 5 | 24000 |", "greedy, one episode per task", PerEnvCSV} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `src="data:image/png;base64,`); n != len(figures) {
		t.Errorf("report.html inlines %d images, want %d", n, len(figures))
	}
	if strings.Contains(string(page), `src="plots/`) {
		t.Error("report.html links an external image")
	}
	for _, name := range []string{PerEnvCSV, AggregateCSV, RunsCSV, CurvesCSV, ProfilesCSV} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A single method still gets a report (no improvement plot).
func TestWriteReportOneMethod(t *testing.T) {
	runs := loadSuite(t, []string{"maze"}, map[string]float64{"graft": 0.8}, 2)
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 100}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, PlotDir, "improvement.png")); err == nil {
		t.Error("an improvement plot with one method")
	}
	if _, err := c.ImprovementFigure(); err == nil {
		t.Error("ImprovementFigure with one method: no error")
	}
}

// Options.Notes appear under a Notes heading in both renderings, escaped in HTML.
func TestWriteReportNotes(t *testing.T) {
	runs := loadSuite(t, []string{"maze"}, map[string]float64{"grpo": 0.5, "graft": 0.8}, 2)
	notes := []string{"Budgets were fixed at 40000 env steps.", "Tokens: a < b."}
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 100}, Notes: notes})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	if !strings.Contains(string(md), "## Notes\n\nBudgets were fixed at 40000 env steps.\n\nTokens: a < b.\n") {
		t.Errorf("report.md lacks the notes:\n%s", md)
	}
	page, _ := os.ReadFile(filepath.Join(dir, ReportHTML))
	if !strings.Contains(string(page), "<h2>Notes</h2>\n<p>Budgets were fixed at 40000 env steps.</p>\n<p>Tokens: a &lt; b.</p>") {
		t.Error("report.html lacks the escaped notes")
	}
	c2, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 100}})
	if err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if err := WriteReport(dir2, c2); err != nil {
		t.Fatal(err)
	}
	if md2, _ := os.ReadFile(filepath.Join(dir2, ReportMarkdown)); strings.Contains(string(md2), "## Notes") {
		t.Error("a Notes heading without notes")
	}
}
