package compare

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/rundir"
)

// writeFakeAudit lays out the files graftrl audit leaves in <run>/audit.
func writeFakeAudit(t *testing.T, runDir string) []byte {
	t.Helper()
	dir := rundir.AuditPath(runDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	table := "estimator,pearson_r,sign_agreement\ngrpo,0.120,0.610\ngraft-td,0.480,0.790\n"
	img := image.NewNRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.NRGBA{R: 200, A: 255})
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		rundir.AuditTable:            []byte(table),
		rundir.AuditSummary:          []byte("Audit of checkpoint iter-000080 on maze.\n"),
		rundir.AuditScatter + ".png": pngData.Bytes(),
		rundir.AuditScatter + ".svg": []byte("<svg></svg>"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return pngData.Bytes()
}

// A report includes the audit of every compared run that has one — its summary, table and
// scatter plot, copied next to the report — and no audit section when no run has one.
func TestWriteReportAuditSection(t *testing.T) {
	runs := loadSuite(t, []string{"maze"}, map[string]float64{"grpo": 0.5, "graft": 0.8}, 2)
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 200}})
	if err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	if err := WriteReport(plain, c); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(plain, ReportMarkdown))
	if strings.Contains(string(md), "Advantage audit") {
		t.Fatal("a report without audits has an audit section")
	}

	audited := c.Runs[1]
	pngData := writeFakeAudit(t, audited.Dir)
	dir := t.TempDir()
	if err := WriteReport(dir, c); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(filepath.Join(dir, ReportMarkdown))
	name := "audit-" + fileName(audited.Name)
	for _, want := range []string{
		"## Advantage audit",
		"### " + audited.Name + " (" + audited.Method + ", maze, seed ",
		"Audit of checkpoint iter-000080 on maze.",
		"| estimator | pearson_r | sign_agreement |",
		"| graft-td | 0.480 | 0.790 |",
		"![advantage audit of " + audited.Name + "](plots/" + name + ".png)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Count(string(md), "(plots/audit-") != 1 {
		t.Errorf("expected exactly one audited run in the report")
	}
	got, err := os.ReadFile(filepath.Join(dir, PlotDir, name+".png"))
	if err != nil || !bytes.Equal(got, pngData) {
		t.Fatalf("scatter plot not copied: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, PlotDir, name+".svg")); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, ReportHTML))
	if !strings.Contains(string(page), "<h2>Advantage audit</h2>") || !strings.Contains(string(page), "<td>graft-td</td><td>0.480</td>") {
		t.Error("report.html lacks the audit section")
	}

	// An audit with standard errors: each correlation and its SE in one cell, in the audit
	// section and in the brief of the why section.
	withSE := "estimator,pearson_r,pearson_r_se,spearman_rho,spearman_rho_se,sign_agreement\ngrpo,0.120,0.045,0.100,0.050,0.610\ngraft-td,0.480,0.031,0.400,n/a,0.790\n"
	if err := os.WriteFile(filepath.Join(rundir.AuditPath(audited.Dir), rundir.AuditTable), []byte(withSE), 0o644); err != nil {
		t.Fatal(err)
	}
	se := t.TempDir()
	if err := WriteReport(se, c); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(filepath.Join(se, ReportMarkdown))
	for _, want := range []string{
		"| estimator | pearson_r ± SE | spearman_rho ± SE | sign_agreement |",
		"| grpo | 0.120 ± 0.045 | 0.100 ± 0.050 | 0.610 |",
		"| graft-td | 0.480 ± 0.031 | 0.400 | 0.790 |",
		"r 0.480 ± 0.031, sign 0.790",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md with audit SEs lacks %q", want)
		}
	}

	// A malformed table is reported, not fatal.
	if err := os.WriteFile(filepath.Join(rundir.AuditPath(audited.Dir), rundir.AuditTable), []byte("estimator\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir()
	if err := WriteReport(bad, c); err != nil {
		t.Fatalf("a malformed audit table failed the report: %v", err)
	}
	md, _ = os.ReadFile(filepath.Join(bad, ReportMarkdown))
	if !strings.Contains(string(md), "could not be read: no rows") {
		t.Error("report.md does not say that the audit table is unreadable")
	}
}

// mergeSE folds the _se columns into their values and leaves a table without them alone.
func TestMergeSE(t *testing.T) {
	old := table{head: []string{"estimator", "pearson_r"}, rows: [][]string{{"grpo", "0.120"}}}
	if got := mergeSE(old); !reflect.DeepEqual(got, old) {
		t.Errorf("a table without SEs became %+v", got)
	}
	in := table{head: []string{"estimator", "pearson_r", "pearson_r_se", "nmse", "nmse_other"},
		rows: [][]string{{"grpo", "0.120", "0.045", "0.9", "x"}, {"graft", "n/a", "n/a", "1.0", "y"}, {"td", "0.300", "n/a", "0.5", "z"}}}
	want := table{head: []string{"estimator", "pearson_r ± SE", "nmse", "nmse_other"},
		rows: [][]string{{"grpo", "0.120 ± 0.045", "0.9", "x"}, {"graft", "n/a", "1.0", "y"}, {"td", "0.300", "0.5", "z"}}}
	if got := mergeSE(in); !reflect.DeepEqual(got, want) {
		t.Errorf("mergeSE = %+v, want %+v", got, want)
	}
}
