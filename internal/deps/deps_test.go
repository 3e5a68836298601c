package deps

import (
	"os/exec"
	"strings"
	"testing"
)

// plain are the packages that must build without GoMLX (ARCHITECTURE.md).
var plain = []string{
	"config", "internal/strict", "advantage", "sweep", "compare", "policy/spec", "policy/host",
	"rollout", "grpo", "graft", "envs",
}

// No package of plain depends on GoMLX, directly or through another package.
func TestNoGoMLXBelowPolicy(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, p := range plain {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/graftrl/graftrl/"+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/gomlx/") {
				t.Errorf("%s depends on %s", p, dep)
				break
			}
		}
	}
}
