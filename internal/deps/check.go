package deps

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A row is one row of ARCHITECTURE.md's package table: its packages and the part of its "must
// not" that the import graph, or a parse of the package's files, can check. Patterns name
// packages as the graph does; "x/..." stands for x and every package below it.
type row struct {
	// name is the table's first column ("policy/host", "envs/<name>").
	name string
	// pkgs are the row's packages when it has several; otherwise the row's one package is name.
	pkgs []string
	// leaf: it imports no other graftrl package.
	leaf bool
	// only, when set, are the only graftrl packages it may import.
	only []string
	// not are the graftrl packages it must not import.
	not []string
	// notOther are the packages outside graftrl (standard library included) it must not import.
	notOther []string
	// gomlx: it may depend on GoMLX, directly or through other packages. No other row may.
	gomlx bool
	// use says who may import it.
	use use
	// noInit: none of its files has an init function (it installs nothing on import).
	noInit bool
	// noAsm: it holds no assembly.
	noAsm bool
}

// use is who may import a package.
type use int

const (
	anyone    use = iota // any package of a row above it, or of its own row
	testsOnly            // test files only
	nobody               // no other package, not even in tests
)

// gomlxPrefix starts the import path of every GoMLX package (GoMLX itself and go-xla).
const gomlxPrefix = "github.com/gomlx/"

// packages are the packages of r.
func (r row) packages() []string {
	if r.pkgs != nil {
		return r.pkgs
	}
	return []string{r.name}
}

// match reports whether pattern names pkg.
func match(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

// matchAny reports whether one of patterns names pkg.
func matchAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, pkg) })
}

// check returns every breach of the rows by graph g, one sentence each, sorted. A row's floor is
// its index in rows: a graftrl package imports only packages of its own floor or of the floors
// below it (earlier rows).
func check(rows []row, g graph) []string {
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	floor := map[string]int{}
	for i, r := range rows {
		for _, p := range r.packages() {
			if j, dup := floor[p]; dup {
				report("%s is in two rows, %q and %q: a package has one row", p, rows[j].name, r.name)
			}
			floor[p] = i
			if n := g[p]; n == nil || !n.graftrl {
				report("row %q names package %s, which does not exist: remove it from the table", r.name, p)
			}
		}
		for _, pattern := range slices.Concat(r.only, r.not) {
			if !graftrlMatch(g, pattern) {
				report("row %q names %s, which matches no graftrl package", r.name, pattern)
			}
		}
	}
	isGraftrl := func(p string) bool { return g[p] != nil && g[p].graftrl }

	for _, p := range slices.Sorted(maps.Keys(g)) {
		n := g[p]
		if !n.graftrl {
			continue
		}
		i, ok := floor[p]
		if !ok {
			report("package %s has no row: add one to ARCHITECTURE.md's table and to internal/deps/table.go, on the floor its imports allow", p)
			continue
		}
		r := rows[i]
		for _, q := range n.imports {
			if isGraftrl(q) {
				switch {
				case r.leaf:
					report("%s imports %s: row %q may import no other graftrl package", p, q, r.name)
				case r.only != nil && !matchAny(r.only, q):
					report("%s imports %s: row %q may import only %s of graftrl's packages", p, q, r.name, strings.Join(r.only, ", "))
				case matchAny(r.not, q):
					report("%s imports %s: row %q must not import %s", p, q, r.name, strings.Join(r.not, ", "))
				}
				if j, ok := floor[q]; ok && j > i {
					report("%s (row %d, %q) imports %s (row %d, %q): a package imports only from its own row and the rows before it", p, i+1, r.name, q, j+1, rows[j].name)
				}
				// A test-support package may build on another (gridtest on envtest): both end
				// up only in tests.
				if j, ok := floor[q]; ok && rows[j].use != anyone && !(r.use == testsOnly && rows[j].use == testsOnly) {
					report("%s imports %s, which %s", p, q, useText(rows[j].use))
				}
			} else if matchAny(r.notOther, q) {
				report("%s imports %s: row %q must not import %s", p, q, r.name, strings.Join(r.notOther, ", "))
			}
		}
		for _, q := range n.testImports {
			if j, ok := floor[q]; ok && q != p && rows[j].use == nobody {
				report("tests of %s import %s, which %s", p, q, useText(nobody))
			}
		}
		if !r.gomlx {
			if path := pathTo(g, p, func(q string) bool { return strings.HasPrefix(q, gomlxPrefix) }); path != nil {
				report("%s depends on GoMLX (%s): row %q builds without it", p, strings.Join(path, " → "), r.name)
			}
		}
		if r.noInit && len(n.inits) > 0 {
			report("%s has init functions (%s): row %q installs nothing on import", p, strings.Join(n.inits, ", "), r.name)
		}
		if r.noAsm && len(n.asm) > 0 {
			report("%s holds assembly (%s): row %q holds none", p, strings.Join(n.asm, ", "), r.name)
		}
	}
	slices.Sort(problems)
	return slices.Compact(problems)
}

// useText says who may import a package used as u.
func useText(u use) string {
	if u == testsOnly {
		return "only test files (and other test-support packages) may import"
	}
	return "no other package may import"
}

// graftrlMatch reports whether pattern names at least one graftrl package of g.
func graftrlMatch(g graph, pattern string) bool {
	for p, n := range g {
		if n.graftrl && match(pattern, p) {
			return true
		}
	}
	return false
}

// pathTo returns the shortest chain of imports from package from to a package that target
// accepts (from first), or nil when there is none. Packages missing from g (imported only under
// other build constraints) end a chain.
func pathTo(g graph, from string, target func(string) bool) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if target(p) {
			var path []string
			for q := p; q != ""; q = prev[q] {
				path = append(path, q)
			}
			slices.Reverse(path)
			return path
		}
		if n := g[p]; n != nil {
			for _, q := range n.imports {
				if _, seen := prev[q]; !seen {
					prev[q] = p
					queue = append(queue, q)
				}
			}
		}
	}
	return nil
}
