package deps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// module is graftrl's module path; the graph names graftrl's packages relative to it.
const module = "github.com/graftrl/graftrl"

// A node is one package of the import graph.
type node struct {
	// graftrl marks a package of graftrl's module.
	graftrl bool
	// imports are the packages its non-test files import, graftrl's named relative to the
	// module ("envs/maze"), the others in full. For graftrl's packages every file counts,
	// whatever its build constraints (a Windows-only file, the no-cgo stubs), so that an import
	// hidden behind a tag is seen on any machine; for the others, what go list resolved here.
	imports []string
	// testImports are the packages its _test.go files import (graftrl's packages only).
	testImports []string
	// inits are its init functions, "file.go:LINE" (graftrl's packages only).
	inits []string
	// asm are its assembly files, whatever their build constraints (graftrl's packages only).
	asm []string
}

// graph maps a package's name to its node: every package of graftrl and every package they
// depend on.
type graph map[string]*node

// name is how the graph names the package of import path p: relative to the module for
// graftrl's packages, in full for the others.
func name(p string) string {
	if rel, ok := strings.CutPrefix(p, module+"/"); ok {
		return rel
	}
	return p
}

// listed is what loadGraph asks go list for, one package.
type listed struct {
	ImportPath        string
	Dir               string
	Imports           []string
	GoFiles           []string
	CgoFiles          []string
	IgnoredGoFiles    []string
	TestGoFiles       []string
	XTestGoFiles      []string
	SFiles            []string
	IgnoredOtherFiles []string
}

// loadGraph builds the import graph of the module whose root is root with a single go list
// call (graftrl's packages and all their dependencies), then reads the imports and init
// functions of graftrl's own files with go/parser.
func loadGraph(root string) (graph, error) {
	cmd := exec.Command("go", "list", "-deps",
		"-json=ImportPath,Dir,Imports,GoFiles,CgoFiles,IgnoredGoFiles,TestGoFiles,XTestGoFiles,SFiles,IgnoredOtherFiles",
		"./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps ./... in %s: %v\n%s", root, err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -deps ./...: %w", err)
		}
		n := &node{graftrl: p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/")}
		if !n.graftrl {
			for _, imp := range p.Imports {
				n.imports = append(n.imports, name(imp))
			}
		} else if err := n.parse(p); err != nil {
			return nil, err
		}
		g[name(p.ImportPath)] = n
	}
	return g, nil
}

// parse fills n from the files of graftrl's package p.
func (n *node) parse(p listed) error {
	var code, tests []string
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles, p.TestGoFiles, p.XTestGoFiles) {
		if strings.HasSuffix(f, "_test.go") {
			tests = append(tests, f)
		} else {
			code = append(code, f)
		}
	}
	fset := token.NewFileSet()
	for _, f := range code {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		n.imports = append(n.imports, importsOf(file)...)
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				n.inits = append(n.inits, fmt.Sprintf("%s:%d", f, fset.Position(fn.Pos()).Line))
			}
		}
	}
	for _, f := range tests {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n.testImports = append(n.testImports, importsOf(file)...)
	}
	for _, f := range slices.Concat(p.SFiles, p.IgnoredOtherFiles) {
		if strings.HasSuffix(f, ".s") {
			n.asm = append(n.asm, f)
		}
	}
	slices.Sort(n.imports)
	n.imports = slices.Compact(n.imports)
	slices.Sort(n.testImports)
	n.testImports = slices.Compact(n.testImports)
	return nil
}

// importsOf lists the packages file imports, named as the graph names them.
func importsOf(file *ast.File) []string {
	var out []string
	for _, spec := range file.Imports {
		if p, err := strconv.Unquote(spec.Path.Value); err == nil {
			out = append(out, name(p))
		}
	}
	return out
}
