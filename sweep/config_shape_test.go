package sweep

import (
	"strings"
	"testing"
)

// A sweep config is one YAML document, bounded in depth like a run config: a second document
// (once silently dropped, with the grid it held) and a deeply nested value are refused naming
// the file and the line.
func TestParseShape(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"second document", "name: x\nbase: b.yaml\n---\nvariants: [{estimator: graft}]\n", "line 3: a second YAML document"},
		{"too deep", "name: x\nbase: b.yaml\nset: " + strings.Repeat("[", 500) + strings.Repeat("]", 500) + "\n", "nested deeper than 64"},
	} {
		_, err := Parse("s.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), "s.yaml") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming s.yaml and %q", c.name, err, c.want)
		}
	}
	if _, err := Parse("s.yaml", []byte("---\nname: x\nbase: b.yaml\n...\n")); err != nil {
		t.Errorf("one document between --- and ...: %v", err)
	}
}
