package deps

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository root, seen from this package's folder.
const root = "../.."

// The module's import graph keeps every rule of the table, and a breach put into it is caught.
func TestArchitecture(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	g, err := loadGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	rows := table()
	t.Run("rules hold", func(t *testing.T) {
		for _, p := range check(rows, g) {
			t.Error(p)
		}
	})
	t.Run("a breach is caught", func(t *testing.T) {
		// tokens, the ground floor, importing the policy breaks three rules at once: it imports
		// a graftrl package, a package of a higher row, and through it GoMLX.
		tokens := *g["tokens"]
		tokens.imports = append(slices.Clone(tokens.imports), "policy")
		breached := maps.Clone(g)
		breached["tokens"] = &tokens
		// Only what the breach adds counts, so that this subtest holds whatever else is wrong.
		before := check(rows, g)
		var got, through []string
		for _, p := range check(rows, breached) {
			if slices.Contains(before, p) {
				continue
			}
			if strings.HasPrefix(p, "tokens ") {
				got = append(got, p)
			} else {
				through = append(through, p)
			}
		}
		want := []string{
			`tokens (row 1, "tokens") imports policy (row `,
			`tokens depends on GoMLX (tokens → policy → github.com/gomlx/`,
			`tokens imports policy: row "tokens" may import no other graftrl package`,
		}
		if len(got) != len(want) {
			t.Fatalf("got %d problems of tokens, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("problem %d = %q, want it to start with %q", i, got[i], want[i])
			}
		}
		// Every package that builds without GoMLX and imports tokens, directly or not, now
		// depends on GoMLX through it; rollout imports it directly.
		rollout := `rollout depends on GoMLX (rollout → tokens → policy → github.com/gomlx/`
		if !slices.ContainsFunc(through, func(p string) bool { return strings.HasPrefix(p, rollout) }) {
			t.Errorf("no problem starts with %q:\n%s", rollout, strings.Join(through, "\n"))
		}
		for _, p := range through {
			if !strings.Contains(p, " depends on GoMLX (") || !strings.Contains(p, " → tokens → policy → github.com/gomlx/") {
				t.Errorf("unexpected problem %q", p)
			}
		}
	})
	t.Run("files under other build constraints count", func(t *testing.T) {
		// rundir/lock_windows.go is built only on Windows; its import of x/sys/windows is
		// nonetheless in the graph.
		if !slices.Contains(g["rundir"].imports, "golang.org/x/sys/windows") {
			t.Errorf("rundir's imports %v lack golang.org/x/sys/windows (lock_windows.go)", g["rundir"].imports)
		}
	})
}

// The table of table.go lists the packages of ARCHITECTURE.md's table, in its order.
func TestTableMatchesArchitecture(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(string(text), -1) {
		if !strings.HasSuffix(m[1], "/") { // configs/, scripts/, docs/: folders, not packages
			doc = append(doc, m[1])
		}
	}
	var code []string
	for _, r := range table() {
		code = append(code, r.name)
	}
	if !slices.Equal(doc, code) {
		t.Errorf("ARCHITECTURE.md's table lists\n  %s\nbut internal/deps/table.go lists\n  %s", strings.Join(doc, " "), strings.Join(code, " "))
	}
}

// testRows is a small table with one rule of each kind, from the ground floor up.
func testRows() []row {
	return []row{
		{name: "a", leaf: true, noInit: true},
		{name: "t", use: testsOnly},
		{name: "b", pkgs: []string{"b", "b/sub"}, only: []string{"a"}},
		{name: "c", not: []string{"b/..."}, notOther: []string{"flag"}, noAsm: true},
		{name: "top", gomlx: true},
		{name: "d", use: nobody},
	}
}

// testGraph keeps every rule of testRows; top reaches GoMLX through an outside package.
func testGraph() graph {
	return graph{
		"a":                            {graftrl: true, imports: []string{"fmt"}},
		"t":                            {graftrl: true, imports: []string{"a"}},
		"b":                            {graftrl: true, imports: []string{"a"}},
		"b/sub":                        {graftrl: true, imports: []string{"a"}},
		"c":                            {graftrl: true, imports: []string{"a", "fmt"}, testImports: []string{"b", "t"}},
		"top":                          {graftrl: true, imports: []string{"b", "c", "github.com/x/y"}},
		"d":                            {graftrl: true, testImports: []string{"d"}},
		"fmt":                          {},
		"flag":                         {},
		"github.com/x/y":               {imports: []string{"github.com/gomlx/gomlx/graph"}},
		"github.com/gomlx/gomlx/graph": {},
	}
}

// check reports each kind of breach, and nothing else, on a small graph.
func TestCheck(t *testing.T) {
	imports := func(p string, q ...string) func([]row, graph) []row {
		return func(rows []row, g graph) []row {
			g[p].imports = append(g[p].imports, q...)
			return rows
		}
	}
	cases := []struct {
		name  string
		edit  func([]row, graph) []row
		wants []string
	}{
		{"clean", func(r []row, _ graph) []row { return r }, nil},
		{"leaf imports graftrl, and upwards", imports("a", "b"), []string{
			`a (row 1, "a") imports b (row 3, "b"): a package imports only from its own row and the rows before it`,
			`a imports b: row "a" may import no other graftrl package`,
		}},
		{"outside only, and a test-only package", imports("b", "t"), []string{
			`b imports t, which only test files (and other test-support packages) may import`,
			`b imports t: row "b" may import only a of graftrl's packages`,
		}},
		{"forbidden, by a pattern's sub-package", imports("c", "b/sub"), []string{
			`c imports b/sub: row "c" must not import b/...`,
		}},
		{"forbidden, by a pattern's base", imports("c", "b"), []string{
			`c imports b: row "c" must not import b/...`,
		}},
		{"forbidden outside graftrl", imports("c", "flag"), []string{
			`c imports flag: row "c" must not import flag`,
		}},
		{"GoMLX through an outside package", imports("c", "github.com/x/y"), []string{
			`c depends on GoMLX (c → github.com/x/y → github.com/gomlx/gomlx/graph): row "c" builds without it`,
		}},
		{"GoMLX through a graftrl package", imports("a", "github.com/gomlx/gomlx/graph"), []string{
			`a depends on GoMLX (a → github.com/gomlx/gomlx/graph): row "a" builds without it`,
			`b depends on GoMLX (b → a → github.com/gomlx/gomlx/graph): row "b" builds without it`,
			`b/sub depends on GoMLX (b/sub → a → github.com/gomlx/gomlx/graph): row "b" builds without it`,
			`c depends on GoMLX (c → a → github.com/gomlx/gomlx/graph): row "c" builds without it`,
			`t depends on GoMLX (t → a → github.com/gomlx/gomlx/graph): row "t" builds without it`,
		}},
		{"imported by nobody, not even tests", func(r []row, g graph) []row {
			g["top"].testImports = []string{"d"}
			return r
		}, []string{`tests of top import d, which no other package may import`}},
		{"init", func(r []row, g graph) []row {
			g["a"].inits = []string{"a.go:3"}
			return r
		}, []string{`a has init functions (a.go:3): row "a" installs nothing on import`}},
		{"assembly", func(r []row, g graph) []row {
			g["c"].asm = []string{"c_amd64.s"}
			return r
		}, []string{`c holds assembly (c_amd64.s): row "c" holds none`}},
		{"a package without a row", func(r []row, g graph) []row {
			g["e"] = &node{graftrl: true}
			return r
		}, []string{`package e has no row: add one to ARCHITECTURE.md's table and to internal/deps/table.go, on the floor its imports allow`}},
		{"a row without its package", func(r []row, _ graph) []row {
			return append(r, row{name: "gone"})
		}, []string{`row "gone" names package gone, which does not exist: remove it from the table`}},
		{"a package in two rows", func(r []row, _ graph) []row {
			return append(r, row{name: "again", pkgs: []string{"b/sub"}})
		}, []string{`b/sub is in two rows, "b" and "again": a package has one row`}},
		{"a pattern that names nothing", func(r []row, _ graph) []row {
			r[3].not = append(r[3].not, "bb")
			return r
		}, []string{`row "c" names bb, which matches no graftrl package`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGraph()
			got := check(c.edit(testRows(), g), g)
			if !slices.Equal(got, c.wants) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.wants, "\n  "))
			}
		})
	}
}
