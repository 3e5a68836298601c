//go:build cgo && !noxla

package policy_test

// The one conformance test that makes a plain GoMLX XLA backend itself, apart from
// policy.NewBackend: it needs go-xla, so it is left out of builds without cgo (-tags noxla), in
// which the rest of the xla:cpu tests still compile and skip.

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/xla"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/graftrl/graftrl/policy"
)

// gradientChildEnv marks the child process of TestXLACPUGradientRewrite.
const gradientChildEnv = "GRAFTRL_GRADIENT_REWRITE_CHILD"

// denseGradientProducts builds the gradient of a dense layer [2,3,4]·[4,5] on b and counts its
// DotGenerals and its multiplies of rank 4 or more (GoMLX v0.26's own gradient multiplies a
// broadcast [2,3,4,5] product and reduces it).
func denseGradientProducts(b backends.Backend) (dots, bigMuls int) {
	g := graph.NewGraph(b, "dense-gradient")
	x := graph.Parameter(g, "x", shapes.Make(dtypes.Float32, 2, 3, 4))
	w := graph.Parameter(g, "w", shapes.Make(dtypes.Float32, 4, 5))
	loss := graph.ReduceAllSum(graph.Tanh(graph.DotGeneral(x, []int{2}, nil, w, []int{0}, nil)))
	graph.Gradient(loss, x, w)
	for _, n := range g.Nodes() {
		switch {
		case n.Type() == graph.NodeTypeDotGeneral:
			dots++
		case n.Type() == graph.NodeTypeMul && n.Rank() >= 4:
			bigMuls++
		}
	}
	return dots, bigMuls
}

// Selecting an xla backend registers graftrl's gradients: in a fresh process that never makes a go
// backend, a dense layer's gradient built on a plain XLA backend (xlaName's plugin) has GoMLX's
// rank-4 product, and after policy.NewBackend it has none, only DotGenerals (the forward one and one per
// operand).
func TestXLACPUGradientRewrite(t *testing.T) {
	if os.Getenv(gradientChildEnv) == "1" {
		xla.EnableAutoInstall(false)
		plain, err := xla.New(strings.TrimPrefix(xlaName(), "xla:"))
		if err != nil {
			t.Fatal(err)
		}
		if dots, big := denseGradientProducts(plain); big == 0 {
			t.Fatalf("before the selection: %d DotGenerals and no rank-4 multiply: GoMLX's gradient changed, the check proves nothing", dots)
		}
		b, err := policy.NewBackend(policy.BackendOptions{Name: xlaName()})
		if err != nil {
			t.Fatal(err)
		}
		if dots, big := denseGradientProducts(b); big != 0 || dots != 3 {
			t.Fatalf("after selecting %s: %d DotGenerals and %d multiplies of rank ≥ 4, want 3 and 0", xlaName(), dots, big)
		}
		return
	}
	bothBackends(t) // skips where the plugin is not installed
	cmd := exec.Command(os.Args[0], "-test.run=^TestXLACPUGradientRewrite$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), gradientChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestXLACPUGradientRewrite") {
		t.Fatalf("child process: %v\n%s", err, out)
	}
}
