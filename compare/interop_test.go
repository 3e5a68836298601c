package compare

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/graftrl/graftrl/internal/interoptest"
)

// The study's committed report (docs/study) is the input of the rliable side-by-side check
// (scripts/interop/rliable_check.py). This test recomputes the report's point estimates from
// runs.csv with the package's statistics, asserts them against the report's own per_env.csv,
// aggregate.csv and profiles.csv, and writes them at full precision as JSON for the check: into
// $GRAFTRL_INTEROP_OUT when it is set, else into a temporary directory.

const studyDir = "../docs/study"

// interopStats are the statistics the rliable check compares, at full precision.
type interopStats struct {
	Envs     []string `json:"envs"`
	Methods  []string `json:"methods"`
	Baseline string   `json:"baseline"`
	// Scores[method][env] are the runs' final scores in seed order.
	Scores    map[string][][]float64 `json:"scores"`
	PerEnv    []interopRow           `json:"per_env"`
	Aggregate []interopRow           `json:"aggregate"`
	Taus      []float64              `json:"taus"`
	Profiles  map[string][]float64   `json:"profiles"`
}

// interopRow is one cell (Env set) or one aggregate row (Env empty); PImprove is nil for the
// baseline.
type interopRow struct {
	Env      string   `json:"env,omitempty"`
	Method   string   `json:"method"`
	IQM      float64  `json:"iqm"`
	Mean     float64  `json:"mean"`
	PImprove *float64 `json:"p_improve"`
	// Median is a cell's median over runs, or the aggregate median of rliable (the median over
	// environments of the per-environment means).
	Median        float64 `json:"median"`
	OptimalityGap float64 `json:"optimality_gap"`
}

func readStudyCSV(t *testing.T, name string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(studyDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, k := range recs[0] {
			row[k] = r[i]
		}
		rows = append(rows, row)
	}
	return rows
}

func parseNum(t *testing.T, s string) float64 {
	t.Helper()
	if s == "" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// studyStats computes the report's point estimates from runs.csv as Comparison does: per cell
// IQM, mean, median, optimality gap and P(method > grpo); per method the same on scores pooled
// over environments (the scores are success rates, normalised by the identity; the median is
// rliable's median of the per-environment means), and the performance profile on the report's
// 101 thresholds k/100.
func studyStats(t *testing.T) interopStats {
	runs := readStudyCSV(t, RunsCSV)
	type key struct{ env, method string }
	type seeded struct {
		seed  uint64
		score float64
	}
	cells := map[key][]seeded{}
	var envs, methods []string
	for _, r := range runs {
		seed, err := strconv.ParseUint(r["seed"], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		k := key{r["env"], r["method"]}
		cells[k] = append(cells[k], seeded{seed, parseNum(t, r["final"])})
		envs, methods = appendUnique(envs, k.env), appendUnique(methods, k.method)
	}
	slices.Sort(envs)
	slices.Sort(methods)
	base := "grpo"
	methods = append([]string{base}, slices.DeleteFunc(methods, func(m string) bool { return m == base })...)
	st := interopStats{Envs: envs, Methods: methods, Baseline: base, Scores: map[string][][]float64{}, Profiles: map[string][]float64{}}
	for _, m := range methods {
		s := make([][]float64, len(envs))
		for i, env := range envs {
			c := cells[key{env, m}]
			slices.SortFunc(c, func(a, b seeded) int { return cmp.Compare(a.seed, b.seed) })
			for _, v := range c {
				s[i] = append(s[i], v.score)
			}
		}
		st.Scores[m] = s
	}
	for i, env := range envs {
		for _, m := range methods {
			x := st.Scores[m][i]
			row := interopRow{Env: env, Method: m, IQM: IQM(x), Mean: Mean(x), Median: Median(x),
				OptimalityGap: OptimalityGap(Strata[float64]{x}, 1)}
			if m != base {
				p := ProbImprovement(Strata[float64]{x}, Strata[float64]{st.Scores[base][i]})
				row.PImprove = &p
			}
			st.PerEnv = append(st.PerEnv, row)
		}
	}
	for k := 0; k <= 100; k++ {
		st.Taus = append(st.Taus, float64(k)/100)
	}
	for _, m := range methods {
		s := Strata[float64](st.Scores[m])
		all := pool(s, nil)
		row := interopRow{Method: m, IQM: IQM(all), Mean: Mean(all), Median: AggregateMedian(s),
			OptimalityGap: OptimalityGap(s, 1)}
		if m != base {
			p := ProbImprovement(s, Strata[float64](st.Scores[base]))
			row.PImprove = &p
		}
		st.Aggregate = append(st.Aggregate, row)
		for _, tau := range st.Taus {
			st.Profiles[m] = append(st.Profiles[m], ScoreFraction(s, tau))
		}
	}
	return st
}

// near compares a recomputed value with the report's six-significant-digit one: the inputs in
// runs.csv are rounded to six digits (an error of at most 5e-7 on scores in [0, 1], which a
// mean, a trimmed mean or a share of pairs carries through at most unchanged) and so is the
// output (at most 5e-7 more).
func near(t *testing.T, what string, got float64, want string) {
	t.Helper()
	w := parseNum(t, want)
	if math.IsNaN(w) != math.IsNaN(got) || math.Abs(got-w) > 1e-6 {
		t.Errorf("%s: recomputed %v, report %s", what, got, want)
	}
}

func TestInteropStudyStats(t *testing.T) {
	st := studyStats(t)
	if len(st.Envs) != 6 || len(st.Methods) != 5 {
		t.Fatalf("study has %d envs and %d methods, want 6 and 5", len(st.Envs), len(st.Methods))
	}
	rows := map[string]interopRow{}
	for _, r := range st.PerEnv {
		rows[r.Env+"/"+r.Method] = r
	}
	perEnv := readStudyCSV(t, PerEnvCSV)
	if len(perEnv) != len(st.PerEnv) {
		t.Fatalf("per_env.csv has %d rows, recomputed %d", len(perEnv), len(st.PerEnv))
	}
	for _, want := range perEnv {
		k := want["env"] + "/" + want["method"]
		got, ok := rows[k]
		if !ok {
			t.Fatalf("per_env.csv row %s not recomputed", k)
		}
		near(t, k+" iqm", got.IQM, want["iqm"])
		near(t, k+" mean", got.Mean, want["mean"])
		near(t, k+" median", got.Median, want["median"])
		near(t, k+" optimality_gap", got.OptimalityGap, want["optimality_gap"])
		p := math.NaN()
		if got.PImprove != nil {
			p = *got.PImprove
		}
		near(t, k+" p_improve", p, want["p_improve"])
	}
	agg := readStudyCSV(t, AggregateCSV)
	for i, want := range agg {
		got := st.Aggregate[i]
		if got.Method != want["method"] {
			t.Fatalf("aggregate row %d: method %s, report %s", i, got.Method, want["method"])
		}
		near(t, got.Method+" aggregate iqm", got.IQM, want["iqm"])
		near(t, got.Method+" aggregate mean", got.Mean, want["mean"])
		near(t, got.Method+" aggregate median", got.Median, want["median"])
		near(t, got.Method+" aggregate optimality_gap", got.OptimalityGap, want["optimality_gap"])
		p := math.NaN()
		if got.PImprove != nil {
			p = *got.PImprove
		}
		near(t, got.Method+" aggregate p_improve", p, want["p_improve"])
	}
	prof := readStudyCSV(t, ProfilesCSV)
	if len(prof) != len(st.Methods)*len(st.Taus) {
		t.Fatalf("profiles.csv has %d rows, want %d", len(prof), len(st.Methods)*len(st.Taus))
	}
	for i, want := range prof {
		m, k := st.Methods[i/len(st.Taus)], i%len(st.Taus)
		if want["method"] != m || parseNum(t, want["tau"]) != st.Taus[k] {
			t.Fatalf("profiles.csv row %d is %s τ=%s, want %s τ=%v", i, want["method"], want["tau"], m, st.Taus[k])
		}
		near(t, fmt.Sprintf("%s profile τ=%v", m, st.Taus[k]), st.Profiles[m][k], want["frac"])
	}

	interoptest.WriteJSON(t, "study_stats.json", st)
}
