package compare

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// TTestResult is the outcome of a paired (one-sample) t-test on differences.
type TTestResult struct {
	// T is mean(d) / (sd(d)/√n), with the sample standard deviation.
	T float64
	// DF is n − 1.
	DF float64
	// P is the two-sided p-value 2·P(T_DF > |T|).
	P float64
}

// PairedTTest is the paired t-test on the differences d (scipy.stats.ttest_rel on the two
// samples, which is ttest_1samp on their differences). It is undefined, every field NaN, for
// fewer than two differences or differences that do not vary (all equal).
func PairedTTest(d []float64) TTestResult {
	nan := TTestResult{math.NaN(), math.NaN(), math.NaN()}
	if len(d) < 2 {
		return nan
	}
	m, v := stat.MeanVariance(d, nil)
	if v == 0 {
		return nan
	}
	n := float64(len(d))
	t := m / math.Sqrt(v/n)
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}
	return TTestResult{T: t, DF: n - 1, P: min(1, 2*dist.Survival(math.Abs(t)))}
}

// Wilcoxon p-value methods (WilcoxonResult.Method).
const (
	// WilcoxonExact is the exact null distribution of W+: every one of the 2ⁿ sign patterns of
	// the ranked differences equally likely (with ties, their average ranks).
	WilcoxonExact = "exact"
	// WilcoxonNormal is the normal approximation with the tie correction and no continuity
	// correction.
	WilcoxonNormal = "normal approximation"
)

// WilcoxonResult is the outcome of a two-sided Wilcoxon signed-rank test.
type WilcoxonResult struct {
	// N is the number of non-zero differences (zero differences are dropped, Wilcoxon's rule).
	N int
	// WPlus and WMinus are the sums of the ranks of |d| (average ranks for ties) of the positive
	// and of the negative differences; Stat is the smaller, scipy's two-sided statistic.
	WPlus, WMinus, Stat float64
	// P is the two-sided p-value; NaN when no difference is non-zero.
	P float64
	// Method is WilcoxonExact or WilcoxonNormal.
	Method string
}

// WilcoxonSignedRank is the two-sided Wilcoxon signed-rank test of the differences d against a
// distribution symmetric about zero, with scipy.stats.wilcoxon's defaults (zero_method "wilcox",
// no continuity correction, method "auto"): zero differences are dropped, |d| ranked with
// average ranks for ties, and the p-value is
//   - exact (the distribution of W+ over all sign patterns) when there are at most 50
//     differences and neither ties nor zeros, or at most 13 differences with ties or zeros (the
//     exact sign-flip distribution of the average-rank statistic, which scipy enumerates as a
//     permutation test);
//   - otherwise the normal approximation z = (W+ − n(n+1)/4) / σ with
//     σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over tie groups of size t, p = 2·Φ(−|z|).
//
// Two-sided exact p-values are 2·min(P(W+ ≤ w), P(W+ ≥ w)), capped at 1.
func WilcoxonSignedRank(d []float64) WilcoxonResult {
	var nz []float64
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	res := WilcoxonResult{N: len(nz), P: math.NaN(), WPlus: math.NaN(), WMinus: math.NaN(), Stat: math.NaN()}
	if len(nz) == 0 {
		return res
	}
	ranks, ties := absRanks(nz)
	res.WPlus, res.WMinus = 0, 0
	for i, v := range nz {
		if v > 0 {
			res.WPlus += ranks[i]
		} else {
			res.WMinus += ranks[i]
		}
	}
	res.Stat = min(res.WPlus, res.WMinus)
	hasTies := len(ties) > 0
	zeros := len(nz) < len(d)
	exact := len(d) <= 50 && !hasTies && !zeros || len(d) <= 13
	if exact {
		res.Method = WilcoxonExact
		res.P = signRankExactP(ranks, res.WPlus)
		return res
	}
	res.Method = WilcoxonNormal
	n := float64(len(nz))
	mean := n * (n + 1) / 4
	v := n * (n + 1) * (2*n + 1) / 24
	for _, t := range ties {
		v -= (t*t*t - t) / 48
	}
	z := (res.WPlus - mean) / math.Sqrt(v)
	res.P = min(1, 2*distuv.UnitNormal.CDF(-math.Abs(z)))
	return res
}

// absRanks returns the ranks of |x| (1-based, average ranks for ties) and the sizes of the tie
// groups of more than one value.
func absRanks(x []float64) (ranks, ties []float64) {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(x[idx[a]]) < math.Abs(x[idx[b]]) })
	ranks = make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && math.Abs(x[idx[j+1]]) == math.Abs(x[idx[i]]) {
			j++
		}
		r := float64(i+j)/2 + 1 // the average of ranks i+1 … j+1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = r
		}
		if j > i {
			ties = append(ties, float64(j-i+1))
		}
		i = j + 1
	}
	return ranks, ties
}

// signRankExactP is the two-sided p-value of W+ = wPlus under the sign-flip null: each rank
// enters W+ or not with probability ½, independently. Ranks are multiples of ½, so the
// distribution of 2·W+ is counted exactly over the integers (counts up to 2⁵⁰ stay exact in a
// float64).
func signRankExactP(ranks []float64, wPlus float64) float64 {
	twice := make([]int, len(ranks))
	total := 0
	for i, r := range ranks {
		twice[i] = int(math.Round(2 * r))
		total += twice[i]
	}
	count := make([]float64, total+1)
	count[0] = 1
	hi := 0
	for _, r := range twice {
		for s := hi; s >= 0; s-- {
			if count[s] != 0 {
				count[s+r] += count[s]
			}
		}
		hi += r
	}
	w := int(math.Round(2 * wPlus))
	var le, ge float64
	for s, c := range count {
		if s <= w {
			le += c
		}
		if s >= w {
			ge += c
		}
	}
	all := math.Ldexp(1, len(ranks))
	return min(1, 2*min(le, ge)/all)
}

// Holm adjusts p-values for multiple comparisons with Holm's step-down method: sorted
// ascending, the i-th smallest of m (1-based) becomes max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎).
// NaN p-values (tests that could not be run) are left NaN and not counted in m.
func Holm(p []float64) []float64 {
	out := make([]float64, len(p))
	var idx []int
	for i, v := range p {
		out[i] = math.NaN()
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	m := len(idx)
	running := 0.0
	for j, i := range idx {
		running = max(running, min(1, float64(m-j)*p[i]))
		out[i] = running
	}
	return out
}

// Decomposition is a two-way analysis of variance without interaction of a complete table of
// scores y[i][j], method i × seed j: y = μ + αᵢ + βⱼ + ε.
type Decomposition struct {
	// SSTotal is Σ(y − ȳ)²; SSMethod = b·Σᵢ(ȳᵢ. − ȳ)², SSSeed = a·Σⱼ(ȳ.ⱼ − ȳ)², and SSResid the rest.
	SSTotal, SSMethod, SSSeed, SSResid float64
	// ResidSD is √(SSResid / ((a−1)(b−1))), the residual standard deviation of one run.
	ResidSD float64
	// SeedSD is the standard deviation of the seed effect, √max(0, (MSSeed − MSResid)/a), the
	// method-of-moments estimate of its variance component.
	SeedSD float64
}

// Shares returns the shares of the total sum of squares due to the seed, the method and the
// residual (NaN when the scores do not vary at all).
func (d Decomposition) Shares() (seed, method, resid float64) {
	if d.SSTotal == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return d.SSSeed / d.SSTotal, d.SSMethod / d.SSTotal, d.SSResid / d.SSTotal
}

// TwoWay decomposes the variance of y (rows methods, columns seeds; every row as long as the
// first). It needs at least two methods and two seeds; ok is false otherwise.
func TwoWay(y [][]float64) (d Decomposition, ok bool) {
	a := len(y)
	if a < 2 || len(y[0]) < 2 {
		return d, false
	}
	b := len(y[0])
	var grand float64
	rowMean := make([]float64, a)
	colMean := make([]float64, b)
	for i, row := range y {
		if len(row) != b {
			return d, false
		}
		for j, v := range row {
			grand += v
			rowMean[i] += v / float64(b)
			colMean[j] += v / float64(a)
		}
	}
	grand /= float64(a * b)
	for i, row := range y {
		d.SSMethod += float64(b) * (rowMean[i] - grand) * (rowMean[i] - grand)
		for j, v := range row {
			d.SSTotal += (v - grand) * (v - grand)
			e := v - rowMean[i] - colMean[j] + grand
			d.SSResid += e * e
		}
	}
	for j := range colMean {
		d.SSSeed += float64(a) * (colMean[j] - grand) * (colMean[j] - grand)
	}
	msResid := d.SSResid / float64((a-1)*(b-1))
	d.ResidSD = math.Sqrt(msResid)
	msSeed := d.SSSeed / float64(b-1)
	d.SeedSD = math.Sqrt(max(0, (msSeed-msResid)/float64(a)))
	return d, true
}

// noncentralTCDF is P(T ≤ t) for a noncentral t with nu degrees of freedom and noncentrality
// delta: T = (Z + delta)/√(V/nu), Z standard normal, V chi-squared with nu degrees of freedom,
// so P(T ≤ t) = E_V[Φ(t·√(V/nu) − delta)], integrated over the quantiles of V by the midpoint
// rule on 4,000 points (absolute error below 1e-5 for the sample sizes asked of it).
func noncentralTCDF(t, nu, delta float64) float64 {
	const k = 4000
	chi := distuv.ChiSquared{K: nu}
	var sum float64
	for i := range k {
		v := chi.Quantile((float64(i) + 0.5) / k)
		sum += distuv.UnitNormal.CDF(t*math.Sqrt(v/nu) - delta)
	}
	return sum / k
}

// tPower is the power of a two-sided t-test at level alpha with df degrees of freedom and
// noncentrality ncp.
func tPower(df, ncp, alpha float64) float64 {
	crit := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - alpha/2)
	return 1 - noncentralTCDF(crit, df, ncp) + noncentralTCDF(-crit, df, ncp)
}

// maxSampleSize bounds the sample sizes SeedsNeeded and RunsPerArmNeeded search.
const maxSampleSize = 100000

// sampleSize is the smallest n ≥ 2 with power(n) ≥ target (power increasing in n), or
// maxSampleSize+1 when even that falls short. guess (the normal approximation) bounds the
// search from above where it can.
func sampleSize(power func(n int) float64, target float64, guess float64) int {
	lo, hi := 2, maxSampleSize
	if g := 2*int(math.Ceil(guess)) + 10; g < hi && power(g) >= target {
		hi = g
	} else if power(hi) < target {
		return maxSampleSize + 1
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if power(mid) >= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// normalSampleSize is the normal approximation ((z₁₋α/₂ + z_power)/effect)² of a one-sample
// test's sample size.
func normalSampleSize(effect, alpha, power float64) float64 {
	z := distuv.UnitNormal.Quantile(1-alpha/2) + distuv.UnitNormal.Quantile(power)
	return z * z / (effect * effect)
}

// SeedsNeeded is the number of seed pairs a two-sided paired t-test at level alpha needs to
// detect a mean difference delta with the given power, when the differences have standard
// deviation sdDiff (the noncentral t: df n − 1, noncentrality delta·√n/sdDiff). NaN when sdDiff is
// not positive and finite or delta is not positive.
func SeedsNeeded(delta, sdDiff, alpha, power float64) float64 {
	if !(sdDiff > 0) || math.IsInf(sdDiff, 0) || !(delta > 0) {
		return math.NaN()
	}
	return float64(sampleSize(func(n int) float64 {
		return tPower(float64(n-1), delta*math.Sqrt(float64(n))/sdDiff, alpha)
	}, power, normalSampleSize(delta/sdDiff, alpha, power)))
}

// RunsPerArmNeeded is the number of runs per method a two-sided two-sample t-test (equal group
// sizes, pooled variance) at level alpha needs to detect a difference of means delta with the
// given power, when one run's score has standard deviation sdRun (df 2n − 2, noncentrality
// delta/(sdRun·√(2/n))). NaN as for SeedsNeeded.
func RunsPerArmNeeded(delta, sdRun, alpha, power float64) float64 {
	if !(sdRun > 0) || math.IsInf(sdRun, 0) || !(delta > 0) {
		return math.NaN()
	}
	return float64(sampleSize(func(n int) float64 {
		return tPower(float64(2*n-2), delta/(sdRun*math.Sqrt(2/float64(n))), alpha)
	}, power, 2*normalSampleSize(delta/sdRun, alpha, power)))
}

// signCounts returns how many differences are positive, zero and negative.
func signCounts(d []float64) (won, tied, lost int) {
	for _, v := range d {
		switch {
		case v > 0:
			won++
		case v < 0:
			lost++
		default:
			tied++
		}
	}
	return
}
