package compare

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/graftrl/graftrl/internal/interoptest"
)

// The paired statistics of the study's report are checked against scipy and statsmodels
// (scripts/interop/paired_check.py). This test recomputes them from runs.csv (its scores are
// written at full precision) with the package's functions, asserts them against the report's
// paired.csv and variance.csv, and writes them with their inputs as JSON for the check.

// interopPairedRow is one paired row with the pairs it was computed from.
type interopPairedRow struct {
	Measure string    `json:"measure"`
	Env     string    `json:"env"`
	Method  string    `json:"method"`
	Seeds   []uint64  `json:"seeds"`
	X       []float64 `json:"x"` // the method's scores, pair by pair
	Y       []float64 `json:"y"` // the baseline's
	Mean    float64   `json:"mean"`
	Median  float64   `json:"median"`
	SD      float64   `json:"sd"`
	Won     int       `json:"won"`
	Tied    int       `json:"tied"`
	Lost    int       `json:"lost"`
	T       float64   `json:"t"`
	DF      float64   `json:"df"`
	PT      float64   `json:"p_t"`
	PTHolm  float64   `json:"p_t_holm"`
	TLo     float64   `json:"t_lo"`
	THi     float64   `json:"t_hi"`
	W       float64   `json:"w"`
	PW      float64   `json:"p_w"`
	PWHolm  float64   `json:"p_w_holm"`
	WMethod string    `json:"w_method"`
}

// interopVariance is one environment's decomposition with its table.
type interopVariance struct {
	Env          string      `json:"env"`
	Methods      []string    `json:"methods"`
	Seeds        []uint64    `json:"seeds"`
	Y            [][]float64 `json:"y"`
	SSTotal      float64     `json:"ss_total"`
	SSSeed       float64     `json:"ss_seed"`
	SSMethod     float64     `json:"ss_method"`
	SSResid      float64     `json:"ss_resid"`
	ResidSD      float64     `json:"resid_sd"`
	SeedSD       float64     `json:"seed_sd"`
	PairedSeeds  []float64   `json:"paired_seeds"`
	UnpairedRuns []float64   `json:"unpaired_runs"`
}

type interopPaired struct {
	Baseline string             `json:"baseline"`
	Alpha    float64            `json:"alpha"`
	Power    float64            `json:"power"`
	Deltas   []float64          `json:"deltas"`
	Rows     []interopPairedRow `json:"rows"`
	Variance []interopVariance  `json:"variance"`
}

// studyPaired recomputes the paired rows (final and gain; per env, then over all) and the
// variance decompositions from runs.csv, pairing runs by env, seed and warm_start.
func studyPaired(t *testing.T) interopPaired {
	type run struct {
		seed         uint64
		final, gain  float64
		warm, method string
	}
	byEnv := map[string][]run{}
	var envs, methods []string
	for _, r := range readStudyCSV(t, RunsCSV) {
		seed, err := strconv.ParseUint(r["seed"], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		byEnv[r["env"]] = append(byEnv[r["env"]], run{seed, parseNum(t, r["final"]), parseNum(t, r["gain"]), r["warm_start"], r["method"]})
		envs, methods = appendUnique(envs, r["env"]), appendUnique(methods, r["method"])
	}
	slices.Sort(envs)
	slices.Sort(methods)
	base := "grpo"
	methods = slices.DeleteFunc(methods, func(m string) bool { return m == base })
	out := interopPaired{Baseline: base, Alpha: 0.05, Power: PowerLevel, Deltas: []float64{PowerDeltaSmall, PowerDeltaLarge}}
	find := func(env, method string, seed uint64) (run, bool) {
		for _, r := range byEnv[env] {
			if r.method == method && r.seed == seed {
				return r, true
			}
		}
		return run{}, false
	}
	for _, measure := range []string{MeasureFinal, MeasureGain} {
		scopes := slices.Clone(envs)
		if len(envs) > 1 {
			scopes = append(scopes, AllEnvs)
		}
		for _, env := range scopes {
			var rows []interopPairedRow
			for _, m := range methods {
				row := interopPairedRow{Measure: measure, Env: env, Method: m}
				for _, e := range envs {
					if env != AllEnvs && e != env {
						continue
					}
					rs := slices.Clone(byEnv[e])
					slices.SortFunc(rs, func(a, b run) int { return cmp.Compare(a.seed, b.seed) })
					for _, r := range rs {
						b, ok := find(e, base, r.seed)
						if r.method != m || !ok || r.warm == "" || r.warm != b.warm {
							continue
						}
						x, y := r.final, b.final
						if measure == MeasureGain {
							x, y = r.gain, b.gain
						}
						row.Seeds, row.X, row.Y = append(row.Seeds, r.seed), append(row.X, x), append(row.Y, y)
					}
				}
				d := make([]float64, len(row.X))
				for i := range d {
					d[i] = row.X[i] - row.Y[i]
				}
				row.Mean, row.Median, row.SD = Mean(d), Median(d), stat.StdDev(d, nil)
				row.Won, row.Tied, row.Lost = signCounts(d)
				tt := PairedTTest(d)
				row.T, row.DF, row.PT = tt.T, tt.DF, tt.P
				half := math.NaN()
				if !math.IsNaN(tt.T) {
					half = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: tt.DF}.Quantile(0.975) * row.SD / math.Sqrt(float64(len(d)))
				}
				row.TLo, row.THi = row.Mean-half, row.Mean+half
				w := WilcoxonSignedRank(d)
				row.W, row.PW, row.WMethod = w.Stat, w.P, w.Method
				rows = append(rows, row)
			}
			pt, pw := make([]float64, len(rows)), make([]float64, len(rows))
			for i, r := range rows {
				pt[i], pw[i] = r.PT, r.PW
			}
			ht, hw := Holm(pt), Holm(pw)
			for i := range rows {
				rows[i].PTHolm, rows[i].PWHolm = ht[i], hw[i]
			}
			out.Rows = append(out.Rows, rows...)
		}
	}
	all := append([]string{base}, methods...)
	for _, env := range envs {
		v := interopVariance{Env: env, Methods: all}
		for s := uint64(1); ; s++ {
			b, ok := find(env, base, s)
			if !ok {
				break
			}
			col := []float64{b.final}
			for _, m := range methods {
				if r, ok := find(env, m, s); ok && r.warm == b.warm && r.warm != "" {
					col = append(col, r.final)
				}
			}
			if len(col) == len(all) {
				v.Seeds = append(v.Seeds, s)
				if v.Y == nil {
					v.Y = make([][]float64, len(all))
				}
				for i := range all {
					v.Y[i] = append(v.Y[i], col[i])
				}
			}
		}
		d, ok := TwoWay(v.Y)
		if !ok {
			t.Fatalf("env %s: no decomposition", env)
		}
		v.SSTotal, v.SSSeed, v.SSMethod, v.SSResid, v.ResidSD, v.SeedSD = d.SSTotal, d.SSSeed, d.SSMethod, d.SSResid, d.ResidSD, d.SeedSD
		for _, delta := range out.Deltas {
			v.PairedSeeds = append(v.PairedSeeds, SeedsNeeded(delta, math.Sqrt2*d.ResidSD, out.Alpha, out.Power))
			v.UnpairedRuns = append(v.UnpairedRuns, RunsPerArmNeeded(delta, math.Hypot(d.SeedSD, d.ResidSD), out.Alpha, out.Power))
		}
		out.Variance = append(out.Variance, v)
	}
	return out
}

func TestInteropStudyPaired(t *testing.T) {
	st := studyPaired(t)
	got := map[string]interopPairedRow{}
	for _, r := range st.Rows {
		got[r.Measure+"/"+r.Env+"/"+r.Method] = r
	}
	csvRows := readStudyCSV(t, PairedCSV)
	if len(csvRows) != len(st.Rows) {
		t.Fatalf("paired.csv has %d rows, recomputed %d", len(csvRows), len(st.Rows))
	}
	for _, want := range csvRows {
		k := want["measure"] + "/" + want["env"] + "/" + want["method"]
		r, ok := got[k]
		if !ok {
			t.Fatalf("paired.csv row %s not recomputed", k)
		}
		if strconv.Itoa(len(r.X)) != want["pairs"] || strconv.Itoa(r.Won) != want["won"] || strconv.Itoa(r.Tied) != want["tied"] ||
			strconv.Itoa(r.Lost) != want["lost"] || r.WMethod != want["w_method"] {
			t.Errorf("%s: %d pairs %d/%d/%d %s, report %s pairs %s/%s/%s %s", k, len(r.X), r.Won, r.Tied, r.Lost, r.WMethod,
				want["pairs"], want["won"], want["tied"], want["lost"], want["w_method"])
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"mean", r.Mean}, {"median", r.Median}, {"sd", r.SD}, {"t", r.T}, {"df", r.DF}, {"p_t", r.PT}, {"p_t_holm", r.PTHolm},
			{"t_lo", r.TLo}, {"t_hi", r.THi}, {"w", r.W}, {"p_w", r.PW}, {"p_w_holm", r.PWHolm}} {
			nearRel(t, k+" "+f.name, f.v, want[f.name])
		}
	}
	vs := readStudyCSV(t, VarianceCSV)
	if len(vs) != len(st.Variance) {
		t.Fatalf("variance.csv has %d rows, recomputed %d", len(vs), len(st.Variance))
	}
	for i, want := range vs {
		v := st.Variance[i]
		if v.Env != want["env"] {
			t.Fatalf("variance row %d: env %s, report %s", i, v.Env, want["env"])
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"ss_total", v.SSTotal}, {"ss_seed", v.SSSeed}, {"ss_method", v.SSMethod}, {"ss_resid", v.SSResid}, {"resid_sd", v.ResidSD},
			{"seed_sd", v.SeedSD}, {"paired_seeds_0.05", v.PairedSeeds[0]}, {"paired_seeds_0.10", v.PairedSeeds[1]},
			{"unpaired_runs_0.05", v.UnpairedRuns[0]}, {"unpaired_runs_0.10", v.UnpairedRuns[1]}} {
			nearRel(t, v.Env+" "+f.name, f.v, want[f.name])
		}
	}
	interoptest.WriteJSON(t, "study_paired.json", st)
}

// nearRel compares a recomputed value with the report's six-significant-digit one (a relative
// rounding error of at most 5e-6).
func nearRel(t *testing.T, what string, got float64, want string) {
	t.Helper()
	w := parseNum(t, want)
	if math.IsNaN(w) != math.IsNaN(got) || math.Abs(got-w) > 5e-6*math.Abs(w)+1e-12 {
		t.Errorf("%s: recomputed %v, report %s", what, got, want)
	}
}
