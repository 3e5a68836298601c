package all_test

import (
	"go/parser"
	"go/token"
	"regexp"
	"testing"

	"github.com/graftrl/graftrl/advantage"
	_ "github.com/graftrl/graftrl/advantage/all"
)

// TestDocumentedEstimatorsAreRegistered holds the package comment's list of estimators to the
// registry, both ways: every estimator it names is registered with the help it quotes, and every
// registered estimator is named there.
func TestDocumentedEstimatorsAreRegistered(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "all.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  - (\w+): (.*)$`).FindAllStringSubmatch(f.Doc.Text(), -1) {
		documented[m[1]] = m[2]
	}
	if len(documented) == 0 {
		t.Fatalf("the package comment lists no estimator:\n%s", f.Doc.Text())
	}
	for name, help := range documented {
		if got := advantage.Help(name); got != help {
			t.Errorf("%s is documented in all.go as %q but registered with help %q", name, help, got)
		}
	}
	for _, name := range advantage.Names() {
		if _, ok := documented[name]; !ok {
			t.Errorf("%s is registered but missing from all.go's package comment", name)
		}
	}
}
