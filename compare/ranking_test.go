package compare

import (
	"math"
	"sort"
	"strings"
	"testing"
)

// wins is P(X > Y) with ties ½, counted independently of pairWins: against y sorted, each x
// beats the values below it and ties those equal to it.
func wins(x, y []float64) float64 {
	ys := append([]float64(nil), y...)
	sort.Float64s(ys)
	u := 0.0
	for _, a := range x {
		below := sort.SearchFloat64s(ys, a)
		equal := sort.SearchFloat64s(ys, math.Nextafter(a, math.Inf(1))) - below
		u += float64(below) + float64(equal)/2
	}
	return u / float64(len(x)*len(y))
}

// The ranking's pairs: each P equals the share of wins computed from the runs' scores, and a
// pair with the baseline quotes exactly the estimate and interval of the results tables (per env
// and aggregated), complemented when the baseline ranks higher.
func TestRankingsQuoteBaselineEstimates(t *testing.T) {
	runs := loadSuite(t, []string{"maze", "keydoor"}, map[string]float64{"grpo": 0.5, "graft": 0.56, "gigpo": 0.47}, 6)
	c, err := Compare(runs, Options{Bootstrap: Bootstrap{Resamples: 400}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rankings) != 3 || c.Rankings[2].Env != AllEnvs {
		t.Fatalf("%d rankings, last %q: want keydoor, maze, all", len(c.Rankings), c.Rankings[len(c.Rankings)-1].Env)
	}
	agg := map[string]Estimate{}
	for _, row := range c.Aggregate {
		agg[row.Method] = row.Improvement
	}
	checked := 0
	for _, r := range c.Rankings {
		if len(r.Pairs) != 3 {
			t.Fatalf("%s: %d pairs, want 3", r.Env, len(r.Pairs))
		}
		for _, p := range r.Pairs {
			var want float64
			if r.Env == AllEnvs {
				want = (wins(c.cell("keydoor", p.A).Scores, c.cell("keydoor", p.B).Scores) +
					wins(c.cell("maze", p.A).Scores, c.cell("maze", p.B).Scores)) / 2
			} else {
				want = wins(c.cell(r.Env, p.A).Scores, c.cell(r.Env, p.B).Scores)
			}
			if math.Abs(p.P.Value-want) > 1e-12 {
				t.Errorf("%s: P(%s > %s) = %v, want %v", r.Env, p.A, p.B, p.P.Value, want)
			}
			if p.A != "grpo" && p.B != "grpo" {
				continue
			}
			m := p.A
			if m == "grpo" {
				m = p.B
			}
			quoted := agg[m]
			if r.Env != AllEnvs {
				quoted = c.cell(r.Env, m).Improvement
			}
			if p.A == "grpo" {
				quoted = Estimate{Value: 1 - quoted.Value, Lo: 1 - quoted.Hi, Hi: 1 - quoted.Lo}
			}
			if p.P != quoted {
				t.Errorf("%s: pair %s/%s quotes %+v, the results table %+v", r.Env, p.A, p.B, p.P, quoted)
			}
			checked++
		}
	}
	if checked != 6 {
		t.Errorf("%d pairs with the baseline checked, want 6", checked)
	}
}

func TestRankingWords(t *testing.T) {
	r := Ranking{Env: "maze", Methods: []string{"graft", "gigpo", "grpo"}, IQM: []float64{0.8, 0.6, 0.5},
		Pairs: []Pair{
			{Env: "maze", A: "graft", B: "gigpo", P: Estimate{0.7, 0.45, 0.9}},
			{Env: "maze", A: "graft", B: "grpo", P: Estimate{0.9, 0.6, 1}},
			{Env: "maze", A: "gigpo", B: "grpo", P: Estimate{0.6, 0.5, 0.8}},
		}}
	got := r.Words()
	for _, want := range []string{
		"In maze the order by IQM is graft (0.8",
		"separate graft over grpo (P = 0.9",
		"they do not separate graft over gigpo (P = 0.7",
		"gigpo over grpo (P = 0.6", // an interval that touches ½ does not separate
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Words() = %q\nlacks %q", got, want)
		}
	}
	if strings.Index(got, "gigpo over grpo") < strings.Index(got, "do not separate") {
		t.Errorf("gigpo over grpo (interval down to ½) is said to be separated: %q", got)
	}
	r.Pairs = r.Pairs[:1]
	r.Methods, r.IQM = r.Methods[:2], r.IQM[:2]
	if got := r.Words(); !strings.Contains(got, "separate no pair") {
		t.Errorf("Words() = %q, want no pair separated", got)
	}
}
