package compare

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/graftrl/graftrl/rundir"
)

// Estimator diagnostics of metrics.jsonl that say how much state sharing the graph-based
// estimators had to work with.
const (
	// MergeRatioKey is steps per node of the batch's graph (GRAFT, GraphGPO) or per anchor
	// group (GiGPO): 1 means no two steps shared a state.
	MergeRatioKey = "est/merge_ratio"
	// SingletonShareKey is the share of steps alone at their node or anchor group.
	SingletonShareKey = "est/singleton_share"
)

// SharingRow is one method in one environment: its runs' mean merge ratio and singleton share
// (each run's mean over its iterations, averaged over runs).
type SharingRow struct {
	Env, Method string
	N           int
	// MergeRatio and SingletonShare are NaN when the method does not log them.
	MergeRatio, SingletonShare float64
}

// Sharing returns the state-sharing rows of the methods that log them, env-major.
func (c *Comparison) Sharing() []SharingRow {
	var out []SharingRow
	for _, cell := range c.Cells {
		var merge, single []float64
		for _, r := range cell.Runs {
			if v, ok := r.EstimatorMeans[MergeRatioKey]; ok {
				merge = append(merge, v)
			}
			if v, ok := r.EstimatorMeans[SingletonShareKey]; ok {
				single = append(single, v)
			}
		}
		if len(merge) == 0 && len(single) == 0 {
			continue
		}
		out = append(out, SharingRow{Env: cell.Env, Method: cell.Method, N: max(len(merge), len(single)),
			MergeRatio: Mean(merge), SingletonShare: Mean(single)})
	}
	return out
}

// whySection returns the report's "why" blocks: the state sharing of the graph-based estimators
// per environment, and one line per audited run with each estimator's correlation and sign
// agreement with the true advantage. It returns nil when there is neither.
func (c *Comparison) whySection() doc {
	var d doc
	if rows := c.Sharing(); len(rows) > 0 {
		t := table{head: []string{"env", "method", "runs", "merge ratio (steps per node)", "singleton share"}}
		for _, r := range rows {
			t.rows = append(t.rows, []string{r.Env, r.Method, strconv.Itoa(r.N), fmtNum(r.MergeRatio), fmtNum(r.SingletonShare)})
		}
		d = append(d, heading{3, "State sharing"},
			para("How much the graph-based estimators had to work with: the merge ratio is the batch's steps per graph node (GRAFT, GraphGPO) or per anchor group (GiGPO), so 1 means no two steps met the same state; the singleton share is the share of steps alone at their node, whose advantage falls back to the estimator's rule for singletons. Each run's mean over its iterations, averaged over runs."),
			t)
	}
	var head []string
	var rows [][]string
	for _, r := range c.Runs {
		tab, err := readAuditTable(filepath.Join(rundir.AuditPath(r.Dir), rundir.AuditTable))
		if errors.Is(err, fs.ErrNotExist) || err != nil {
			continue
		}
		col := map[string]int{}
		for i, h := range tab.head {
			col[h] = i
		}
		ie, ip, is := col["estimator"], col["pearson_r"], col["sign_agreement"]
		if _, ok := col["pearson_r"]; !ok {
			continue
		}
		ise, hasSE := col["pearson_r"+seSuffix]
		if head == nil {
			head = []string{"audited run", "env"}
			for _, row := range tab.rows {
				head = append(head, row[ie])
			}
		}
		row := []string{r.Name, r.Env}
		for _, h := range head[2:] {
			v := "—"
			for _, tr := range tab.rows {
				if tr[ie] == h {
					cell := tr[ip]
					if hasSE {
						cell = withSE(cell, tr[ise])
					}
					v = fmt.Sprintf("r %s, sign %s", cell, tr[is])
				}
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	if len(rows) > 0 {
		d = append(d, heading{3, "Advantage audit, in brief"},
			para("Per audited checkpoint, each estimator's Pearson correlation r (± its bootstrap standard error over the audited steps, where the audit has one) and sign agreement with the true step advantage A = Q − V, measured by Monte Carlo continuations (graftrl audit; the full tables are in the Advantage audit section below)."),
			table{head: head, rows: rows})
	}
	if len(d) == 0 {
		return nil
	}
	return append(doc{heading{2, "Why: state sharing and advantage accuracy"}}, d...)
}
