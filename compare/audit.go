package compare

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/graftrl/graftrl/rundir"
)

// auditSection returns the report blocks of the advantage audits (graftrl audit, package audit)
// found in the runs' directories (rundir.AuditPath): the table, summary and scatter plot of every
// compared run that has them; runs without an audit are left out. A correlation and its bootstrap
// standard error (the table's pearson_r and pearson_r_se columns, likewise spearman_rho) share one
// cell, "0.410 ± 0.040" (mergeSE). It copies each audit's scatter
// plot into dir/plots as audit-<run>.png/.svg. It returns nil when no run has an audit.
func auditSection(runs []*Run, dir string) (doc, error) {
	var d doc
	for _, r := range runs {
		adir := rundir.AuditPath(r.Dir)
		table, err := readAuditTable(filepath.Join(adir, rundir.AuditTable))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if len(d) == 0 {
			d = append(d, heading{2, "Advantage audit"},
				para("Each estimator's step advantages on a fresh batch sampled by the audited checkpoint's policy, against the true advantage A = Q − V measured by Monte Carlo continuations from each audited step's exact context (graftrl audit; the definitions are in the audit's audit.md). A correlation ± SE gives its bootstrap standard error over the sampling of the audited steps (not the Monte Carlo noise of the truth, which attenuates the correlations)."))
		}
		d = append(d, heading{3, fmt.Sprintf("%s (%s, %s, seed %d)", r.Name, r.Method, r.Env, r.Seed)})
		if err != nil {
			d = append(d, para(fmt.Sprintf("The audit table %s could not be read: %v.", filepath.Join(adir, rundir.AuditTable), err)))
			continue
		}
		if s, err := os.ReadFile(filepath.Join(adir, rundir.AuditSummary)); err == nil {
			d = append(d, para(strings.TrimSpace(string(s))))
		}
		d = append(d, mergeSE(table))
		name := "audit-" + fileName(r.Name)
		copied := true
		for _, ext := range []string{".png", ".svg"} {
			data, err := os.ReadFile(filepath.Join(adir, rundir.AuditScatter+ext))
			if err != nil {
				copied = false
				break
			}
			if err := os.MkdirAll(filepath.Join(dir, PlotDir), 0o755); err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, PlotDir, name+ext), data, 0o644); err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
		}
		if copied {
			d = append(d, figure{"advantage audit of " + r.Name, filepath.ToSlash(filepath.Join(PlotDir, name))})
		}
	}
	return d, nil
}

// readAuditTable reads an audit's CSV table: a header and at least one row, all of its width.
func readAuditTable(path string) (table, error) {
	f, err := os.Open(path)
	if err != nil {
		return table{}, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return table{}, err
	}
	if len(recs) < 2 {
		return table{}, errors.New("no rows")
	}
	return table{head: recs[0], rows: recs[1:]}, nil
}

// seSuffix marks an audit table column that holds the standard error of the column named
// without it (pearson_r_se of pearson_r).
const seSuffix = "_se"

// mergeSE folds every standard-error column of an audit table into the column it belongs to:
// the cell becomes "value ± SE" (the value alone when the SE is "n/a" or empty) and the header
// gains " ± SE". A table without such columns (an audit written before they existed) is returned
// as it is.
func mergeSE(t table) table {
	col := map[string]int{}
	for i, h := range t.head {
		col[h] = i
	}
	seOf := map[int]int{}
	drop := map[int]bool{}
	for i, h := range t.head {
		if j, ok := col[h+seSuffix]; ok {
			seOf[i], drop[j] = j, true
		}
	}
	if len(seOf) == 0 {
		return t
	}
	var out table
	for i, h := range t.head {
		if drop[i] {
			continue
		}
		if _, ok := seOf[i]; ok {
			h += " ± SE"
		}
		out.head = append(out.head, h)
	}
	for _, r := range t.rows {
		var row []string
		for i, v := range r {
			if drop[i] {
				continue
			}
			if j, ok := seOf[i]; ok {
				v = withSE(v, r[j])
			}
			row = append(row, v)
		}
		out.rows = append(out.rows, row)
	}
	return out
}

// withSE is "v ± se", or v when the SE is missing or "n/a".
func withSE(v, se string) string {
	if se == "" || se == "n/a" || v == "n/a" {
		return v
	}
	return v + " ± " + se
}
