package grpo

import (
	"math/rand/v2"
	"testing"

	"github.com/graftrl/graftrl/internal/interoptest"
	"github.com/graftrl/graftrl/rollout"
)

// The GRPO normalisation check (scripts/interop/grpo_check.py) recomputes GRPO's advantages with
// numpy, whose std(ddof=1) is torch.std's default (unbiased), i.e. what TRL and verl divide by.
// TestInteropGRPOExport writes groups of scores and graftrl's advantages for both std forms as
// JSON into $GRAFTRL_INTEROP_OUT when it is set, else into a temporary directory.

// grpoGroup is one task's group: the members' scores (Valid false for an errored trajectory,
// which is not a member of the statistics) and graftrl's A_i per member for each std form.
type grpoGroup struct {
	Scores     []float64 `json:"scores"`
	Valid      []bool    `json:"valid"`
	Sample     []float64 `json:"sample"`
	Population []float64 `json:"population"`
}

type grpoExport struct {
	Eps    float64     `json:"eps"`
	Groups []grpoGroup `json:"groups"`
}

// interopGroups draws groups of 2 to 16 scores: success rates with ties, returns with step
// penalties, all-equal groups and groups with errored trajectories.
func interopGroups() [][]rollout.Trajectory {
	rng := rand.New(rand.NewPCG(7, 11))
	var groups [][]rollout.Trajectory
	for g := range 40 {
		n := 2 + rng.IntN(15)
		var trajs []rollout.Trajectory
		for range n {
			var R float64
			switch g % 4 {
			case 0: // binary outcomes
				R = float64(rng.IntN(2))
			case 1: // all equal
				R = 1
			default: // outcomes with a step penalty, as score: return sees them
				R = float64(rng.IntN(2)) - 0.1*float64(rng.IntN(5))
			}
			tr := ep(0, R, "s", "g")
			if g%5 == 2 && rng.IntN(3) == 0 {
				tr.Err = "env crashed"
			}
			trajs = append(trajs, tr)
		}
		groups = append(groups, trajs)
	}
	return groups
}

func TestInteropGRPOExport(t *testing.T) {
	const eps = 1e-6
	out := grpoExport{Eps: eps}
	forms := map[Std]*GRPO{}
	for _, s := range []Std{StdSample, StdPopulation} {
		forms[s] = mustGRPO(t, Options{Eps: eps, Score: ScoreReturn, Std: s}, false)
	}
	for _, trajs := range interopGroups() {
		g := grpoGroup{}
		for _, tr := range trajs {
			g.Scores = append(g.Scores, tr.Return())
			g.Valid = append(g.Valid, tr.Err == "")
		}
		b := batch(1, trajs...)
		for s, est := range forms {
			adv, _ := est.Estimate(b)
			col := make([]float64, len(trajs))
			for i := range trajs {
				col[i] = adv[i][0]
			}
			if s == StdSample {
				g.Sample = col
			} else {
				g.Population = col
			}
		}
		out.Groups = append(out.Groups, g)
	}
	interoptest.WriteJSON(t, "grpo_groups.json", out)
}
