package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// AllEnvs is the Env of the pairs and rankings computed over every environment at once.
const AllEnvs = "all"

// Pair is the probability of improvement of one method over another, with its interval.
type Pair struct {
	// Env is the environment (AllEnvs: averaged over the environments both ran on, on
	// normalised scores).
	Env string
	// A and B are the methods; A ranks above B by IQM.
	A, B string
	// P is P(A > B) with its bootstrap interval.
	P Estimate
}

// Separated reports whether the interval of P(A > B) lies wholly above ½: the comparison
// separates A from B. A pair whose interval holds ½ is not separated.
func (p Pair) Separated() bool { return p.P.Lo > 0.5 }

// Ranking is the methods of one environment (or of all) ordered by IQM, best first, with every
// pair's probability of improvement.
type Ranking struct {
	Env string
	// Methods are ordered by IQM, best first (ties by name); IQM holds their IQMs in that order.
	Methods []string
	IQM     []float64
	// Pairs are every pair (i < j in Methods order), ordered as Methods: P(Methods[i] > Methods[j]).
	Pairs []Pair
}

// rankings computes the ranking of every environment and over all of them (last).
func (c *Comparison) rankings() error {
	for _, env := range append(append([]string(nil), c.Envs...), AllEnvs) {
		r := Ranking{Env: env}
		iqm := map[string]float64{}
		scores := map[string]Strata[float64]{}
		for _, m := range c.Methods {
			if env == AllEnvs {
				for _, a := range c.Aggregate {
					if a.Method == m {
						iqm[m] = a.IQM.Value
					}
				}
				scores[m] = c.normalized(m)
				continue
			}
			if cell := c.cell(env, m); cell != nil {
				iqm[m] = cell.IQM.Value
				scores[m] = Strata[float64]{cell.Scores}
			}
		}
		for m := range iqm {
			r.Methods = append(r.Methods, m)
		}
		sort.Slice(r.Methods, func(i, j int) bool {
			a, b := iqm[r.Methods[i]], iqm[r.Methods[j]]
			if a != b {
				return a > b
			}
			return r.Methods[i] < r.Methods[j]
		})
		for i, a := range r.Methods {
			r.IQM = append(r.IQM, iqm[a])
			for _, b := range r.Methods[i+1:] {
				p, ok := c.againstBaseline(env, a, b)
				if !ok {
					var err error
					if p, err = ProbImprovementCI(scores[a], scores[b], c.seeded("pair", env, a, b)); err != nil {
						return err
					}
				}
				r.Pairs = append(r.Pairs, Pair{Env: env, A: a, B: b, P: p})
			}
		}
		c.Rankings = append(c.Rankings, r)
	}
	return nil
}

// Words says the ranking in sentences: the order by IQM, the pairs the intervals separate and
// those they do not.
func (r Ranking) Words() string {
	if len(r.Methods) == 0 {
		return "No method ran here."
	}
	where := "In " + r.Env
	if r.Env == AllEnvs {
		where = "Over all environments (normalised scores)"
	}
	order := make([]string, len(r.Methods))
	for i, m := range r.Methods {
		order[i] = fmt.Sprintf("%s (%s)", m, fmtNum(r.IQM[i]))
	}
	s := fmt.Sprintf("%s the order by IQM is %s.", where, strings.Join(order, ", "))
	if len(r.Methods) == 1 {
		return s
	}
	var sep, not []string
	for _, p := range r.Pairs {
		t := fmt.Sprintf("%s over %s (P = %s)", p.A, p.B, fmtEst(p.P))
		if math.IsNaN(p.P.Value) {
			continue
		}
		if p.Separated() {
			sep = append(sep, t)
		} else {
			not = append(not, t)
		}
	}
	switch {
	case len(sep) == 0:
		s += " The 95 % intervals separate no pair: every difference here is within the spread between seeds."
	case len(not) == 0:
		s += " The 95 % intervals separate every pair: " + strings.Join(sep, "; ") + "."
	default:
		s += " The 95 % intervals separate " + strings.Join(sep, "; ") + "; they do not separate " + strings.Join(not, "; ") + "."
	}
	return s
}

// againstBaseline returns P(a > b) from the comparison's own estimate against the baseline when
// a or b is the baseline, so that the ranking and the results tables quote the same number and
// interval for the same pair: P(m > baseline) as computed, P(baseline > m) as its complement
// (1 − P, interval [1 − hi, 1 − lo]: ties count ½, so the two add up to 1 in every resample).
func (c *Comparison) againstBaseline(env, a, b string) (Estimate, bool) {
	base := c.Options.Baseline
	m := a
	switch base {
	case b:
	case a:
		m = b
	default:
		return Estimate{}, false
	}
	var est Estimate
	found := false
	if env == AllEnvs {
		for _, row := range c.Aggregate {
			if row.Method == m {
				est, found = row.Improvement, true
			}
		}
	} else if cell := c.cell(env, m); cell != nil {
		est, found = cell.Improvement, true
	}
	if !found || math.IsNaN(est.Value) {
		return Estimate{}, false
	}
	if m == b {
		est = Estimate{Value: 1 - est.Value, Lo: 1 - est.Hi, Hi: 1 - est.Lo}
	}
	return est, true
}
