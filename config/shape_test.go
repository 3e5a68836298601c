package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/internal/limits"
)

// allocated is what f allocates, in bytes (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// deepMaps is depth mappings nested in flow style: {a: {a: … {a: 1}}}.
func deepMaps(depth int) string {
	return strings.Repeat("{a: ", depth) + "1" + strings.Repeat("}", depth)
}

// deepLists is depth lists nested in flow style: [[[…[1]…]]].
func deepLists(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

// nestedValue is depth maps nested in one another, as options decoded from YAML or JSON hold them.
func nestedValue(depth int) any {
	var v any = 1
	for range depth {
		v = map[string]any{"a": v}
	}
	return v
}

// A 50 KB config holding a 9,990-deep mapping among its env options is refused naming the file,
// the line and the limit, at the cost of parsing it: under 100 MB allocated (it took 1 GB to
// refuse when the options were re-encoded first).
func TestDeepConfigRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deep.yaml")
	data := "name: t\nenv:\n  name: maze\n  a: " + deepMaps(9990) + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	mem := allocated(func() { _, err = Load(path, nil) })
	var ce *Error
	want := "config " + path + ": line 4, column 254: mappings and lists nested deeper than 64 levels (allowed at most 64)"
	if !errors.As(err, &ce) || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if mem > 100<<20 {
		t.Errorf("refusing %d bytes allocated %d MB, want under 100 MB", len(data), mem>>20)
	}
}

// Aliases repeat at most strict.MaxAliasNodes nodes, refused before any of them is expanded:
// a billion laughs among the env options (which yaml.v3 refuses too, once decoding, as "excessive
// aliasing"), and a 3 KB file whose 100 aliases repeat a list of 1,000 (which yaml.v3 lets through,
// to 100,000 options values re-encoded: 187 MB).
func TestAliasBombRefused(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString("name: t\nenv:\n  name: maze\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	wide := "name: t\nenv:\n  name: maze\n  a: &a [" + strings.Repeat("x, ", 999) + "x]\n  b: [" + strings.Repeat("*a, ", 99) + "*a]\n"
	for _, tc := range []struct{ doc, at string }{
		{laughs.String(), "line 8, column 47: the aliases up to *a3"},
		{wide, "line 5, column 403: the aliases up to *a"},
	} {
		var err error
		mem := allocated(func() { _, err = Parse("x.yaml", []byte(tc.doc), nil) })
		want := "config x.yaml: " + tc.at + " repeat more than 100000 nodes (allowed at most 100000 in all, each alias counting the nodes of the value it stands for)"
		if err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
		if mem > 10<<20 {
			t.Errorf("refusing it allocated %d MB, want under 10 MB", mem>>20)
		}
	}
}

// A config is one YAML document: a second one is refused naming the file and its line, rather
// than ignored; a leading ---, a closing ... and an empty document after --- are accepted.
func TestConfigOneDocument(t *testing.T) {
	for _, ok := range []string{"---\nname: a\n", "name: a\n...\n", "name: a\n---\n", "---\nname: a\n...\n---\n# nothing\n"} {
		if cfg, err := Parse("x.yaml", []byte(ok), nil); err != nil || cfg.Name != "a" {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, tc := range []struct{ doc, want string }{
		{"name: a\n---\nname: b\n", "config x.yaml: line 2: a second YAML document starts here"},
		{"name: a\niterations: 3\n...\n---\niterations: 5\n", "config x.yaml: line 4: a second YAML document starts here"},
		{"name: a\n---\nname: [b\n", "config x.yaml: invalid YAML: line "},
	} {
		if _, err := Parse("x.yaml", []byte(tc.doc), nil); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to begin %q", tc.doc, err, tc.want)
		}
	}
}

// A --set value is bounded as a file is, its levels counted from where it goes (env.a: under
// the top level and env), and a refusal names the flag with its value cut short.
func TestDeepOverrideRefused(t *testing.T) {
	if cfg, err := Decode("x.yaml", []byte(minimalYAML), []string{"env.a=" + deepLists(62)}); err != nil || cfg.Env.Options["a"] == nil {
		t.Errorf("64 levels in all: %v", err)
	}
	for _, tc := range []struct{ set, want string }{
		{"env.a=" + deepLists(63),
			"--set env.a=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[… (127 bytes): env.a: the value at line 1, column 63: mappings and lists nested deeper than 64 levels (allowed at most 64)"},
		{"env.a=" + deepLists(9990),
			"--set env.a=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[… (19981 bytes): env.a: the value at line 1, column 63: mappings and lists nested deeper than 64 levels (allowed at most 64)"},
		{"estimator.b=" + deepMaps(9990),
			"--set estimator.b={a: {a: {a: {a: {a: {a: {a: {a: {a: {a: … (49951 bytes): estimator.b: the value at line 1, column 249: mappings and lists nested deeper than 64 levels (allowed at most 64)"},
		{"label=a\n---\nb",
			"--set label=a\n---\nb: label: the value at line 2: a second YAML document starts here and would be ignored (allowed: one document, optionally opened by --- and closed by ...)"},
	} {
		var err error
		mem := allocated(func() { _, err = Parse("x.yaml", []byte(minimalYAML), []string{tc.set}) })
		var ce *Error
		if !errors.As(err, &ce) || err.Error() != tc.want {
			t.Errorf("error %v, want %s", err, tc.want)
		}
		if mem > 100<<20 {
			t.Errorf("refusing %.30q allocated %d MB, want under 100 MB", tc.set, mem>>20)
		}
	}
}

// Env and estimator options set by other means than a file (a config built in code, options
// from JSON) are bounded when they are checked: a 9,990-deep value is refused before it is
// re-encoded for the strict decoder.
func TestDeepOptionsRefused(t *testing.T) {
	for _, section := range []string{"env", "estimator"} {
		cfg := Defaults()
		cfg.Name = "t"
		if section == "env" {
			cfg.Env.Options = map[string]any{"a": nestedValue(9990)}
		} else {
			cfg.Estimator.Options = map[string]any{"a": nestedValue(9990)}
		}
		var err error
		mem := allocated(func() { err = cfg.Validate() })
		if err == nil || !strings.Contains(err.Error(), `key "a": mappings and lists nested deeper than 64 levels (allowed at most 64`) {
			t.Errorf("%s options: error %v", section, err)
		}
		if mem > 100<<20 {
			t.Errorf("refusing %s options allocated %d MB, want under 100 MB", section, mem>>20)
		}
	}
}

var hint = regexp.MustCompile(`e\.g\. ` + limits.Config.Env() + `=([^)]*)\)`)

// The message of a config over the size limit suggests a limit, and that limit admits the file:
// for the default limit and for limits in bytes that no unit divides.
func TestConfigSizeHintAdmits(t *testing.T) {
	for _, tc := range []struct {
		limit string
		size  int
	}{
		{"", 5 << 20},
		{"1000", 3000},
		{"1MiB", 1<<20 + 1},
	} {
		path := filepath.Join(t.TempDir(), "big.yaml")
		data := "name: t\nlabel: " + strings.Repeat("x", tc.size-16) + "\n"
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv(limits.Config.Env(), tc.limit)
		_, err := Load(path, nil)
		m := hint.FindStringSubmatch(fmt.Sprint(err))
		if m == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("limit %q, %d bytes: error %v, want a suggested limit", tc.limit, len(data), err)
			continue
		}
		t.Setenv(limits.Config.Env(), m[1])
		if _, err := Load(path, nil); err != nil {
			t.Errorf("limit %q, %d bytes: following %s=%s: %v", tc.limit, len(data), limits.Config.Env(), m[1], err)
		}
	}
}
