package compare

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// holmRuns are 2 environments × (grpo and 3 methods) × 3 seeds of random initial weights: grpo
// scores 1/4 on every seed, and method m in env e scores 1/4 + (k−1, k, k+1)/64 on seeds 1–3
// (every number exact in binary), with k from ks. The paired differences (k−1, k, k+1)/64 have
// mean k/64 and SD 1/64, so t = √3·k on 2 degrees of freedom and the two-sided p-value is
// 1 − |t|/√(2 + t²) = 1 − √(3k²/(3k² + 2)).
func holmRuns(ks map[string]map[string]float64) []*Run {
	var runs []*Run
	for env, byMethod := range ks {
		add := func(method string, seed uint64, final float64) {
			name := fmt.Sprintf("%s-%s-s%d", env, method, seed)
			runs = append(runs, &Run{Dir: name, Name: name, Method: method, Estimator: method, Env: env, Seed: seed,
				Iterations: 10, EnvSteps: 1000, Complete: true,
				Config: RunConfig{Iterations: 10, TrainTasks: 16, PerIter: 2, GroupSize: 2, EvalEvery: 10, EvalAtStart: true},
				Evals: []Eval{
					{Iter: 0, EnvSteps: 0, Values: map[string]float64{DefaultMetric: 0.125}},
					{Iter: 10, EnvSteps: 1000, Values: map[string]float64{DefaultMetric: final}},
				}})
		}
		for seed := uint64(1); seed <= 3; seed++ {
			add("grpo", seed, 0.25)
			for m, k := range byMethod {
				add(m, seed, 0.25+(k+float64(seed)-2)/64)
			}
		}
	}
	return runs
}

// holmP is the paired t-test's two-sided p-value of the differences (k−1, k, k+1)/64.
func holmP(k float64) float64 { return 1 - math.Sqrt(3*k*k/(3*k*k+2)) }

// Holm's family, by hand. The raw paired t p-values (holmP):
//
//	maze    a: k = 10, p = 0.0033168   b: k = 4, p = 0.0202041   c: k = 1, p = 0.2254033
//	keydoor a: k = 5,  p = 0.0130725   b: k = 3, p = 0.0350987   c: k = 2, p = 0.0741799
//
// holm: env corrects each environment's three: maze a 3·0.0033168 = 0.0099503, b 2·0.0202041 =
// 0.0404082, c 0.2254033; keydoor a 3·0.0130725 = 0.0392174, b 2·0.0350987 = 0.0701974,
// c 0.0741799 (each already above the one before, so the running maximum changes nothing).
//
// holm: family corrects the six together, in increasing order: maze a 6·0.0033168 = 0.0199006,
// keydoor a 5·0.0130725 = 0.0653623, maze b 4·0.0202041 = 0.0808164, keydoor b 3·0.0350987 =
// 0.1052962, keydoor c 2·0.0741799 = 0.1483598, maze c 1·0.2254033 (increasing again). At 0.05,
// three methods differ under env (maze a, b; keydoor a) and only maze a under family.
//
// Wilcoxon: with three positive distinct differences the exact p is 2·(1/8) = 0.25; for k = 1 the
// zero is dropped and two remain, p = 2·(1/4) = 0.5. Under env: 3·0.25 = 0.75 for every row (the
// running maximum holds maze c's 0.5 at 0.75); under family: 6·0.25 = 1.5, capped at 1, for all.
//
// The rows over all environments stay outside the family: their Holm values are the same
// under both choices, Holm's correction of their own three p-values.
func TestHolmFamily(t *testing.T) {
	ks := map[string]map[string]float64{"maze": {"a": 10, "b": 4, "c": 1}, "keydoor": {"a": 5, "b": 3, "c": 2}}
	boot := Bootstrap{Resamples: 50}
	env, err := Compare(holmRuns(ks), Options{Bootstrap: boot})
	if err != nil {
		t.Fatal(err)
	}
	lv := &Levels{Axes: []string{"size"}, Of: map[string][]string{"maze": {"5"}, "keydoor": {"7"}}}
	fam, err := Compare(holmRuns(ks), Options{Bootstrap: boot, Holm: HolmFamily, Levels: lv})
	if err != nil {
		t.Fatal(err)
	}
	if env.Options.Holm != HolmEnv {
		t.Errorf("default holm %q, want %q", env.Options.Holm, HolmEnv)
	}
	wantEnv := map[string]float64{
		"maze/a": 3 * holmP(10), "maze/b": 2 * holmP(4), "maze/c": holmP(1),
		"keydoor/a": 3 * holmP(5), "keydoor/b": 2 * holmP(3), "keydoor/c": holmP(2),
	}
	wantFam := map[string]float64{
		"maze/a": 6 * holmP(10), "keydoor/a": 5 * holmP(5), "maze/b": 4 * holmP(4),
		"keydoor/b": 3 * holmP(3), "keydoor/c": 2 * holmP(2), "maze/c": holmP(1),
	}
	close(t, "raw maze a", holmP(10), 0.0033168, 1e-7)
	close(t, "family maze a", wantFam["maze/a"], 0.0199006, 1e-7)
	close(t, "family keydoor a", wantFam["keydoor/a"], 0.0653623, 1e-7)
	for _, measure := range []string{MeasureFinal, MeasureGain} { // equal starts: the gains are the finals
		for _, c := range []struct {
			cmp        *Comparison
			want       map[string]float64
			wilcoxon   float64
			differ     string
			familySize int
		}{{env, wantEnv, 0.75, "keydoor/a maze/a maze/b", 3}, {fam, wantFam, 1, "maze/a", 6}} {
			var differ []string
			for _, e := range []string{"keydoor", "maze"} {
				for _, r := range c.cmp.PairedRows(e, measure) {
					k := e + "/" + r.Method
					close(t, c.cmp.Options.Holm+" "+measure+" raw p "+k, r.T.P, holmP(ks[e][r.Method]), 1e-9)
					close(t, c.cmp.Options.Holm+" "+measure+" t Holm "+k, r.THolm, c.want[k], 1e-9)
					close(t, c.cmp.Options.Holm+" "+measure+" Wilcoxon Holm "+k, r.WilcoxonHolm, c.wilcoxon, 1e-12)
					if r.Differs(0.05) {
						differ = append(differ, k)
					}
				}
			}
			if got := strings.Join(differ, " "); got != c.differ {
				t.Errorf("holm %s, %s: differ %q, want %q", c.cmp.Options.Holm, measure, got, c.differ)
			}
		}
		all, allFam := env.PairedRows(AllEnvs, measure), fam.PairedRows(AllEnvs, measure)
		if len(all) != 3 || len(allFam) != 3 {
			t.Fatalf("%s: %d and %d rows over all environments, want 3", measure, len(all), len(allFam))
		}
		own := Holm([]float64{all[0].T.P, all[1].T.P, all[2].T.P})
		for i := range all {
			close(t, measure+" all "+all[i].Method+" (env)", all[i].THolm, own[i], 1e-15)
			close(t, measure+" all "+all[i].Method+" (family)", allFam[i].THolm, own[i], 1e-15)
		}
	}
	if n, nt, nw := fam.HolmFamilySize(MeasureFinal); n != 6 || nt != 6 || nw != 6 {
		t.Errorf("family size %d (%d t, %d Wilcoxon), want 6", n, nt, nw)
	}

	// paired.csv and levels.csv carry the family's values; the report says which family it is.
	dir := t.TempDir()
	if err := WriteReport(dir, fam); err != nil {
		t.Fatal(err)
	}
	for _, row := range readCSV(t, filepath.Join(dir, PairedCSV))[1:] {
		if row[0] == MeasureFinal && row[1] == "keydoor" && row[2] == "a" {
			nearRel(t, "paired.csv keydoor a p_t_holm", wantFam["keydoor/a"], row[18])
		}
	}
	levels := readCSV(t, filepath.Join(dir, LevelsCSV))
	if h := levels[0][12]; h != "p_t_holm" {
		t.Fatalf("levels.csv column 12 is %q", h)
	}
	for _, row := range levels[1:] {
		nearRel(t, "levels.csv "+row[1]+" "+row[2]+" p_t_holm", wantFam[row[1]+"/"+row[2]], row[12])
	}
	md := string(must(t, filepath.Join(dir, ReportMarkdown)))
	for _, want := range []string{
		"each Holm-corrected once over the whole family (holm: family): every (environment, method) comparison with grpo on the final score, 6 test(s) (2 environment(s), 3 method(s)).",
		"The rows over all environments stay outside the family: each is Holm-corrected over the 3 method(s) compared with grpo over all environments.",
		"maze, paired differences from grpo (mean [outer ends of the t and bootstrap intervals]): differ: a +0.156 ",
		"(Holm p 0.0199). not told apart: b +0.062",
		"Holm: Holm's step-down correction, separately for each test, once per measure over every (environment, method) comparison",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	mdEnv := filepath.Join(t.TempDir(), "env")
	if err := WriteReport(mdEnv, env); err != nil {
		t.Fatal(err)
	}
	if s := string(must(t, filepath.Join(mdEnv, ReportMarkdown))); !strings.Contains(s, "each Holm-corrected over the 3 method(s) compared with grpo in the same environment.") ||
		strings.Contains(s, "holm: family") {
		t.Error("the default report does not describe the correction within each environment")
	}
}

// A test without a p-value (differences that do not vary) is left out of the family's count,
// Holm's m, and the report says how many of the comparisons have one.
func TestHolmFamilySizeUndefined(t *testing.T) {
	c := &Comparison{Options: Options{Baseline: "grpo", Holm: HolmFamily}, Envs: []string{"maze"}, Methods: []string{"grpo", "a", "b"},
		Paired: []PairedRow{
			{Env: "maze", Method: "a", Measure: MeasureFinal, T: TTestResult{P: 0.01}, Wilcoxon: WilcoxonResult{P: 0.25}},
			{Env: "maze", Method: "b", Measure: MeasureFinal, T: TTestResult{P: math.NaN()}, Wilcoxon: WilcoxonResult{P: 0.5}},
			{Env: "maze", Method: "a", Measure: MeasureGain, T: TTestResult{P: 0.01}, Wilcoxon: WilcoxonResult{P: 0.25}},
		}}
	if n, nt, nw := c.HolmFamilySize(MeasureFinal); n != 2 || nt != 1 || nw != 2 {
		t.Errorf("family size %d (%d t, %d Wilcoxon), want 2 (1 t, 2 Wilcoxon)", n, nt, nw)
	}
	if w := c.holmWords(); !strings.Contains(w, "2 test(s) (1 environment(s), 2 method(s)). 1 paired t-test(s) and 2 Wilcoxon test(s) of them have a p-value") {
		t.Errorf("holm words %q", w)
	}
}

// The default family is today's: HolmEnv given or left out gives the same report, byte for byte.
func TestHolmDefaultIsEnv(t *testing.T) {
	ks := map[string]map[string]float64{"maze": {"a": 10, "b": 4}, "keydoor": {"a": 5, "b": 3}}
	var md []string
	for _, holm := range []string{"", HolmEnv} {
		c, err := Compare(holmRuns(ks), Options{Bootstrap: Bootstrap{Resamples: 50}, Holm: holm})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := WriteReport(dir, c); err != nil {
			t.Fatal(err)
		}
		md = append(md, string(must(t, filepath.Join(dir, ReportMarkdown)))+string(must(t, filepath.Join(dir, PairedCSV))))
	}
	if md[0] != md[1] {
		t.Error("holm: env differs from the default")
	}
}

// Any other family is refused, naming the key, the value and the allowed values.
func TestHolmRefused(t *testing.T) {
	_, err := Compare(holmRuns(map[string]map[string]float64{"maze": {"a": 2}}), Options{Holm: "cells"})
	if err == nil || err.Error() != `compare: holm "cells" is not one of env, family` {
		t.Errorf("holm cells: %v", err)
	}
}
