package strict

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// flowMaps is depth mappings nested in flow style: {a: {a: … {a: 1}}}.
func flowMaps(depth int) string {
	return strings.Repeat("{a: ", depth) + "1" + strings.Repeat("}", depth)
}

// flowLists is depth lists nested in flow style: [[[…[1]…]]].
func flowLists(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

// blockMaps is depth mappings nested in block style, one key per line.
func blockMaps(depth int) string {
	var b strings.Builder
	for i := range depth {
		b.WriteString(strings.Repeat(" ", i) + "a:")
		if i < depth-1 {
			b.WriteString("\n")
		}
	}
	return b.String() + " 1\n"
}

// billionLaughs is nine levels of anchors each repeating the one before ten times: 10⁹ scalars
// once expanded, in under 1 KB.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	return b.String()
}

// allocated is what f allocates, in bytes (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Mappings and lists nest at most MaxDepth levels, the top-level mapping the first, in flow and
// block style: MaxDepth is accepted, one more is refused naming the line, the column and the
// limit.
func TestParseDepth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		doc     func(depth int) string
		refused string
	}{
		{"flow mappings", func(d int) string { return "x: " + flowMaps(d-1) + "\n" }, "line 1, column 256:"},
		{"flow lists", func(d int) string { return "x: " + flowLists(d-1) + "\n" }, "line 1, column 67:"},
		{"block mappings", blockMaps, "line 65, column 65:"},
		{"a top-level list", flowLists, "line 1, column 65:"},
	} {
		if _, err := Parse([]byte(tc.doc(MaxDepth))); err != nil {
			t.Errorf("%s, %d levels: %v", tc.name, MaxDepth, err)
		}
		_, err := Parse([]byte(tc.doc(MaxDepth + 1)))
		var se *ShapeError
		want := tc.refused + " mappings and lists nested deeper than 64 levels (allowed at most 64)"
		if !errors.As(err, &se) || err.Error() != want {
			t.Errorf("%s, %d levels: error %v, want %s", tc.name, MaxDepth+1, err, want)
		}
	}
}

// The 9,990-deep mapping of a 50 KB file, which yaml.v3 parses, is refused right after parsing:
// checking it allocates little beyond the parse itself.
func TestParseDeepFileIsCheap(t *testing.T) {
	doc := []byte("name: t\nenv:\n  name: maze\n  a: " + flowMaps(9990) + "\n")
	if len(doc) > 51_000 {
		t.Fatalf("the document is %d bytes, want about 50 KB", len(doc))
	}
	var err error
	mem := allocated(func() { _, err = Parse(doc) })
	var se *ShapeError
	if !errors.As(err, &se) || se.Line != 4 || !strings.Contains(err.Error(), "deeper than 64 levels") {
		t.Fatalf("error %v, want a refusal at line 4", err)
	}
	if mem > 100<<20 {
		t.Errorf("refusing the document allocated %d MB, want under 100 MB", mem>>20)
	}
}

// An alias counts the levels of the value it stands for where it stands, and the nodes of that
// value against MaxAliasNodes; an alias inside the value it stands for is refused (yaml.v3
// parses it into a cyclic tree).
func TestParseAliases(t *testing.T) {
	deep := "deep: &d " + flowLists(61) + "\n"
	for _, ok := range []string{
		deep + "x: {y: {z: *d}}\n", // 3 + 61 = 64 levels
		"base: &b {lr: 0.1, epochs: 2}\nrun: {<<: *b, epochs: 3}\nother: *b\n",
		"a: &a [" + strings.Repeat("x, ", 998) + "x]\nb: [" + strings.Repeat("*a, ", 99) + "*a]\n", // 100 × 1,000 nodes
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("%.60q: %v", ok, err)
		}
	}
	for _, tc := range []struct{ doc, want string }{
		{deep + "x: {y: {z: {w: *d}}}\n",
			"line 2, column 16: alias *d nests mappings and lists deeper than 64 levels here (allowed at most 64)"},
		{"a: &a [" + strings.Repeat("x, ", 998) + "x]\nb: [" + strings.Repeat("*a, ", 100) + "*a]\n",
			"line 2, column 405: the aliases up to *a repeat more than 100000 nodes (allowed at most 100000 in all, each alias counting the nodes of the value it stands for)"},
		{billionLaughs(),
			"line 5, column 45: the aliases up to *a3 repeat more than 100000 nodes (allowed at most 100000 in all, each alias counting the nodes of the value it stands for)"},
		{"a: &a [1, *a]\n",
			"line 1, column 11: alias *a stands for a value that holds it, which would never end (allowed: aliases of values that end before the alias)"},
		{"a: &a {b: {c: *a}}\n",
			"line 1, column 15: alias *a stands for a value that holds it, which would never end (allowed: aliases of values that end before the alias)"},
	} {
		_, err := Parse([]byte(tc.doc))
		var se *ShapeError
		if !errors.As(err, &se) || err.Error() != tc.want {
			t.Errorf("%.60q: error %v, want %s", tc.doc, err, tc.want)
		}
	}
}

// A billion laughs is refused before any of it is expanded.
func TestParseAliasBombIsCheap(t *testing.T) {
	var err error
	mem := allocated(func() { _, err = Parse([]byte(billionLaughs())) })
	var se *ShapeError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want a *ShapeError", err)
	}
	if mem > 1<<20 {
		t.Errorf("refusing it allocated %d kB, want under 1 MB", mem>>10)
	}
}

// A file is one document: a second one that holds anything is refused naming its line; a
// leading ---, a closing ... and later documents that hold nothing are accepted.
func TestParseOneDocument(t *testing.T) {
	for _, ok := range []string{
		"name: x\n",
		"---\nname: x\n",
		"name: x\n...\n",
		"---\nname: x\n...\n",
		"name: x\n---\n",
		"name: x\n---\n# nothing more\n",
		"name: x\n---\n...\n",
	} {
		n, err := Parse([]byte(ok))
		if err != nil || n.Kind != yaml.DocumentNode || len(n.Content) != 1 || n.Content[0].Content[1].Value != "x" {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, empty := range []string{"", "# only a comment\n"} {
		if n, err := Parse([]byte(empty)); err != nil || n.Kind != 0 {
			t.Errorf("%q: %+v, %v", empty, n, err)
		}
	}
	for _, tc := range []struct {
		doc  string
		line int
	}{
		{"name: x\n---\nname: y\n", 2},
		{"---\nname: x\n...\n---\nname: y\n", 4},
		{"name: x\n---\n---\n# c\n---\n[1]\n", 5},
		{"name: x\n--- null\n", 2},
	} {
		_, err := Parse([]byte(tc.doc))
		var se *ShapeError
		if !errors.As(err, &se) || se.Line != tc.line ||
			err.Error() != fmt.Sprintf("line %d: a second YAML document starts here and would be ignored (allowed: one document, optionally opened by --- and closed by ...)", tc.line) {
			t.Errorf("%q: error %v, want a refusal at line %d", tc.doc, err, tc.line)
		}
	}
	// A syntax error in a later document is one too.
	if _, err := Parse([]byte("name: x\n---\n[\n")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a broken second document: %v", err)
	}
}

// Decode checks a tree it did not parse itself (as a sweep config's, parsed by yaml.Unmarshal)
// before decoding anything from it.
func TestDecodeChecksTree(t *testing.T) {
	for _, text := range []string{"items: " + flowLists(9990), billionLaughs()} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(text), &n); err != nil {
			t.Fatal(err)
		}
		var d doc
		var se *ShapeError
		if err := Decode(n.Content[0], &d); !errors.As(err, &se) || se.Line == 0 {
			t.Errorf("%.40q: error %v, want a *ShapeError with a line", text, err)
		}
	}
}

type options struct {
	Tree  map[string]any `yaml:"tree"`
	Count int            `yaml:"count"`
}

// nested is depth maps nested in one another, as decoded from YAML or JSON.
func nested(depth int) any {
	var v any = 1
	for range depth {
		v = map[string]any{"a": v}
	}
	return v
}

// DecodeMap refuses a value nested deeper than MaxDepth (the options counting as the first
// level) before converting it, and converts one at the limit.
func TestDecodeMapDepth(t *testing.T) {
	var o options
	if err := DecodeMap(map[string]any{"tree": nested(MaxDepth - 1)}, &o); err != nil || valueDepth(reflect.ValueOf(o.Tree), 100) != MaxDepth-1 {
		t.Fatalf("%d levels under the options: %v", MaxDepth-1, err)
	}
	for _, v := range []any{nested(MaxDepth), nested(9990), []any{[]any{nested(MaxDepth)}}} {
		var err error
		mem := allocated(func() { err = DecodeMap(map[string]any{"tree": v, "count": 1}, &o) })
		var se *ShapeError
		if !errors.As(err, &se) || se.Key != "tree" ||
			err.Error() != `key "tree": mappings and lists nested deeper than 64 levels (allowed at most 64, the options counting as the first)` {
			t.Errorf("error %v", err)
		}
		if mem > 1<<20 {
			t.Errorf("refusing it allocated %d kB, want under 1 MB", mem>>10)
		}
	}
	// A value that holds itself is no deeper than the limit to check.
	cyclic := map[string]any{}
	cyclic["a"] = cyclic
	var se *ShapeError
	if err := DecodeMap(map[string]any{"tree": cyclic}, &o); !errors.As(err, &se) {
		t.Errorf("a cyclic value: %v", err)
	}
}
