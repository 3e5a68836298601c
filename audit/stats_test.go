package audit

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestRanks(t *testing.T) {
	for _, c := range []struct {
		x, w, want []float64
	}{
		{[]float64{3, 1, 3, 2}, nil, []float64{3.5, 1, 3.5, 2}},
		{[]float64{10, 20, 20, 20, 5}, nil, []float64{2, 4, 4, 4, 1}},
		{[]float64{7}, nil, []float64{1}},
		{[]float64{-1, -1}, nil, []float64{1.5, 1.5}},
		// Weights act as repetition counts: [1 1 2 2 2 2] has mid-ranks 1.5 and 4.5.
		{[]float64{1, 2, 2}, []float64{2, 1, 3}, []float64{1.5, 4.5, 4.5}},
		{[]float64{2, 1}, []float64{0.5, 0.5}, []float64{1.25, 0.75}},
	} {
		if got := Ranks(c.x, c.w); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Ranks(%v, %v) = %v, want %v", c.x, c.w, got, c.want)
		}
	}
}

func TestCorrelations(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	y := []float64{5, 6, 7, 8, 7}
	// Ranks of y: 1 2 3.5 5 3.5; centred: −2 −1 .5 2 .5 against −2 −1 0 1 2: 8/√(10·9.5).
	if got, want := Spearman(x, y, nil), 8/math.Sqrt(95); !near(got, want, 1e-12) {
		t.Errorf("Spearman = %g, want %g", got, want)
	}
	// Pearson on y itself: centred y −1.6 −.6 .4 1.4 .4: Σ dx·dy = 6, Σ dy² = 5.2.
	if got, want := Pearson(x, y, nil), 6/math.Sqrt(10*5.2); !near(got, want, 1e-12) {
		t.Errorf("Pearson = %g, want %g", got, want)
	}
	// A monotone but non-linear relation: Spearman 1, Pearson below 1.
	cube := []float64{1, 8, 27, 64, 125}
	if s, p := Spearman(x, cube, nil), Pearson(x, cube, nil); !near(s, 1, 1e-12) || p >= 0.99 {
		t.Errorf("Spearman %g, Pearson %g", s, p)
	}
	// Integer weights equal repetition.
	w := []float64{1, 3, 1, 2, 1}
	var xr, yr []float64
	for i := range x {
		for range int(w[i]) {
			xr, yr = append(xr, x[i]), append(yr, y[i])
		}
	}
	if a, b := Spearman(x, y, w), Spearman(xr, yr, nil); !near(a, b, 1e-12) {
		t.Errorf("weighted Spearman %g, repeated %g", a, b)
	}
	if a, b := Pearson(x, y, w), Pearson(xr, yr, nil); !near(a, b, 1e-12) {
		t.Errorf("weighted Pearson %g, repeated %g", a, b)
	}
	// Undefined for a constant input.
	if !math.IsNaN(Pearson(x, []float64{0, 0, 0, 0, 0}, nil)) || !math.IsNaN(Spearman([]float64{1}, []float64{2}, nil)) {
		t.Error("correlation of a constant or a single value is not NaN")
	}
}

func TestScaleMatch(t *testing.T) {
	est, truth := []float64{1, 2, 0}, []float64{2, 3, 1}
	// c = (1·2 + 2·3)/(1 + 4) = 1.6; residuals −0.4, 0.2, −1.
	c, mse := ScaleMatch(est, truth, nil)
	if !near(c, 1.6, 1e-12) || !near(mse, (0.16+0.04+1)/3, 1e-12) {
		t.Errorf("c %g mse %g", c, mse)
	}
	c, mse = ScaleMatch(est, truth, []float64{1, 1, 2})
	if !near(c, 1.6, 1e-12) || !near(mse, (0.16+0.04+2)/4, 1e-12) {
		t.Errorf("weighted: c %g mse %g", c, mse)
	}
	// An all-zero estimate: c = 0, MSE = mean A².
	c, mse = ScaleMatch([]float64{0, 0}, []float64{1, -3}, nil)
	if c != 0 || !near(mse, 5, 1e-12) {
		t.Errorf("zero estimate: c %g mse %g", c, mse)
	}
}

func TestSignAgreement(t *testing.T) {
	est := []float64{1, -1, 0, 2}
	truth := []float64{0.5, 0.5, -0.5, 0.05}
	se := []float64{0.1, 0.1, 0.1, 0.1}
	// Resolved (|A| ≥ 0.2): the first three; the estimate agrees on the first only (0 never does).
	agree, resolved := SignAgreement(est, truth, se, nil, 2)
	if !near(agree, 1.0/3, 1e-12) || !near(resolved, 0.75, 1e-12) {
		t.Errorf("agree %g resolved %g", agree, resolved)
	}
	agree, resolved = SignAgreement(est, truth, se, []float64{3, 1, 1, 5}, 2)
	if !near(agree, 3.0/5, 1e-12) || !near(resolved, 5.0/10, 1e-12) {
		t.Errorf("weighted: agree %g resolved %g", agree, resolved)
	}
	if a, r := SignAgreement([]float64{1}, []float64{0.01}, []float64{1}, nil, 2); !math.IsNaN(a) || r != 0 {
		t.Errorf("nothing resolved: %g %g", a, r)
	}
}

func TestMeanSE(t *testing.T) {
	// Mean 2, sd (n−1) 1, SE 1/√3.
	m, se := meanSE([]float64{1, 2, 3})
	if m != 2 || !near(se, 1/math.Sqrt(3), 1e-12) {
		t.Errorf("mean %g se %g", m, se)
	}
	if _, se := meanSE([]float64{4}); !math.IsNaN(se) {
		t.Error("SE of one value is not NaN")
	}
}

func TestNumJSON(t *testing.T) {
	in := struct{ A, B Num }{Num(1.5), Num(math.NaN())}
	data, err := json.Marshal(in)
	if err != nil || string(data) != `{"A":1.5,"B":null}` {
		t.Fatalf("%s %v", data, err)
	}
	var out struct{ A, B Num }
	if err := json.Unmarshal(data, &out); err != nil || out.A != 1.5 || !math.IsNaN(float64(out.B)) {
		t.Fatalf("%+v %v", out, err)
	}
}
