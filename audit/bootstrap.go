package audit

import (
	"math"
	"math/rand/v2"
	"sort"
)

// DefaultBootstrap is the number of bootstrap resamples behind each correlation's standard
// error (Options.Bootstrap).
const DefaultBootstrap = 1000

// bootstrapStream is the PCG stream of the bootstrap's generator; its seed is the audit's seed,
// so that the same audit gives the same standard errors.
const bootstrapStream = 0xb0075

// corrSEs are the bootstrap standard errors of the correlations of compareAll: per estimator
// the weighted Pearson r and Spearman ρ, and per estimator and stratum the unweighted Pearson r.
type corrSEs struct {
	pearson, spearman []float64
	byStratum         [][]float64
}

// bootstrapCorrSE estimates the sampling error of the correlations of est[e] with truth a by a
// nonparametric bootstrap over the audited steps: each of b resamples draws, within each group
// of steps (the strata the steps were selected from, the groups' sizes fixed as the selection
// fixed them), as many steps as the group holds, with replacement; a drawn step keeps its weight
// w. Every correlation is recomputed on every resample exactly as on the audited steps —
// weighted Pearson, weighted Spearman on the resample's own mid-ranks, and unweighted Pearson
// within each stratum of strata (index lists into a) — and its standard error is the standard
// deviation (with b' − 1) of its b' defined resample values. It is NaN when the correlation of
// the audited steps is undefined, or when fewer than half of the resamples define it (a stratum
// of a handful of steps). The generator is a PCG seeded with seed: the same input gives the
// same standard errors.
//
// A resample is represented by each step's draw count k_i: the correlations of the resample
// are the correlations of the audited steps with weights k_i·w_i (weights act as repetition
// counts), so that each replicate costs O(n) per correlation, the sort orders being computed
// once.
func bootstrapCorrSE(est [][]float64, a, w []float64, groups, strata [][]int, b int, seed uint64) corrSEs {
	n, ne := len(a), len(est)
	out := corrSEs{pearson: nanSlice(ne), spearman: nanSlice(ne), byStratum: make([][]float64, ne)}
	for e := range out.byStratum {
		out.byStratum[e] = nanSlice(len(strata))
	}
	if n < 2 || b < 2 {
		return out
	}
	// Which correlations are defined on the audited steps: only those get an SE.
	wAll := make([]float64, n)
	for i := range wAll {
		wAll[i] = weightAt(w, i)
	}
	orderA := sortOrder(a)
	ranksA := ranksOrdered(a, orderA, wAll)
	orders := make([][]int, ne)
	pDef, sDef := make([]bool, ne), make([]bool, ne)
	hDef := make([][]bool, ne)
	for e, x := range est {
		orders[e] = sortOrder(x)
		pDef[e] = !math.IsNaN(weightedCorr(x, a, wAll, nil))
		sDef[e] = !math.IsNaN(weightedCorr(ranksOrdered(x, orders[e], wAll), ranksA, wAll, nil))
		hDef[e] = make([]bool, len(strata))
		for h, idx := range strata {
			hDef[e][h] = !math.IsNaN(weightedCorr(x, a, nil, idx))
		}
	}

	rng := rand.New(rand.NewPCG(seed, bootstrapStream))
	pRep, sRep := make([][]float64, ne), make([][]float64, ne)
	hRep := make([][][]float64, ne)
	for e := range est {
		hRep[e] = make([][]float64, len(strata))
	}
	count := make([]float64, n)
	cw := make([]float64, n)
	rx := make([]float64, n)
	ra := make([]float64, n)
	for range b {
		clear(count)
		for _, g := range groups {
			for range g {
				count[g[rng.IntN(len(g))]]++
			}
		}
		for i := range cw {
			cw[i] = count[i] * weightAt(w, i)
		}
		ranksOrderedInto(ra, a, orderA, cw)
		for e, x := range est {
			if pDef[e] {
				pRep[e] = append(pRep[e], weightedCorr(x, a, cw, nil))
			}
			if sDef[e] {
				ranksOrderedInto(rx, x, orders[e], cw)
				sRep[e] = append(sRep[e], weightedCorr(rx, ra, cw, nil))
			}
			for h, idx := range strata {
				if hDef[e][h] {
					hRep[e][h] = append(hRep[e][h], weightedCorr(x, a, count, idx))
				}
			}
		}
	}
	for e := range est {
		out.pearson[e] = replicateSD(pRep[e], b)
		out.spearman[e] = replicateSD(sRep[e], b)
		for h := range strata {
			out.byStratum[e][h] = replicateSD(hRep[e][h], b)
		}
	}
	return out
}

// replicateSD is the standard deviation (with m − 1) of the defined values among the replicates
// of b resamples; NaN when there were none or fewer than half of b are defined.
func replicateSD(rep []float64, b int) float64 {
	var s, s2 float64
	m := 0
	for _, v := range rep {
		if !math.IsNaN(v) {
			s += v
			m++
		}
	}
	if m < 2 || 2*m < b {
		return math.NaN()
	}
	mean := s / float64(m)
	for _, v := range rep {
		if !math.IsNaN(v) {
			s2 += (v - mean) * (v - mean)
		}
	}
	return math.Sqrt(s2 / float64(m-1))
}

// weightedCorr is the weighted Pearson correlation of x and y over the indices idx (nil: all)
// with weights w (nil: all 1); points of weight 0 do not count. NaN when fewer than two points
// count or when x or y is constant over them.
func weightedCorr(x, y, w []float64, idx []int) float64 {
	m := len(x)
	if idx != nil {
		m = len(idx)
	}
	at := func(k int) int {
		if idx == nil {
			return k
		}
		return idx[k]
	}
	var sw, sx, sy float64
	points, varX, varY := 0, false, false
	var x0, y0 float64
	for k := range m {
		i := at(k)
		wi := weightAt(w, i)
		if wi == 0 {
			continue
		}
		if points == 0 {
			x0, y0 = x[i], y[i]
		} else {
			varX = varX || x[i] != x0
			varY = varY || y[i] != y0
		}
		points++
		sw += wi
		sx += wi * x[i]
		sy += wi * y[i]
	}
	if points < 2 || !varX || !varY {
		return math.NaN()
	}
	mx, my := sx/sw, sy/sw
	var sxy, sxx, syy float64
	for k := range m {
		i := at(k)
		wi := weightAt(w, i)
		if wi == 0 {
			continue
		}
		dx, dy := x[i]-mx, y[i]-my
		sxy += wi * dx * dy
		sxx += wi * dx * dx
		syy += wi * dy * dy
	}
	return sxy / math.Sqrt(sxx*syy)
}

// sortOrder returns the indices of x in ascending order of x (stable).
func sortOrder(x []float64) []int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	return idx
}

// ranksOrdered is Ranks(x, w) given x's ascending order (sortOrder).
func ranksOrdered(x []float64, order []int, w []float64) []float64 {
	r := make([]float64, len(x))
	ranksOrderedInto(r, x, order, w)
	return r
}

// ranksOrderedInto writes Ranks(x, w) into r, given x's ascending order.
func ranksOrderedInto(r, x []float64, order []int, w []float64) {
	below := 0.0
	for lo := 0; lo < len(order); {
		hi := lo
		group := 0.0
		for hi < len(order) && x[order[hi]] == x[order[lo]] {
			group += weightAt(w, order[hi])
			hi++
		}
		for _, i := range order[lo:hi] {
			r[i] = below + group/2 + 0.5
		}
		below += group
		lo = hi
	}
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}
