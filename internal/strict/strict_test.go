package strict

import (
	"errors"
	"math"
	"testing"

	"gopkg.in/yaml.v3"
)

type item struct {
	Label string   `yaml:"label"`
	Set   []string `yaml:"set"`
}

type doc struct {
	Name  string  `yaml:"name"`
	Count int     `yaml:"count"`
	Seed  uint64  `yaml:"seed"`
	Rate  float64 `yaml:"rate"`
	On    bool    `yaml:"on"`
	Inner struct {
		Depth int `yaml:"depth"`
	} `yaml:"inner"`
	Items []item `yaml:"items"`
}

func parse(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

// Every refusal names the key's full path, the value as written and what is allowed.
func TestDecodeRefusals(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"nmae: x", `unknown key "nmae" (allowed at the top level: count, inner, items, name, on, rate, seed)`},
		{"inner: {deep: 1}", `unknown key "inner.deep" (allowed under inner: depth)`},
		{"items: [{label: a, sets: []}]", `unknown key "items[0].sets" (allowed under items: label, set)`},
		{"count: 1.5", `key "count": value "1.5" is not a valid integer`},
		{"count: 2.0", `key "count": value "2.0" is not a valid integer`},
		{"count: 1e3", `key "count": value "1e3" is not a valid integer`},
		{"count: ", `key "count": value null is not a valid integer`},
		{"seed: -1", `key "seed": value "-1" is not a valid non-negative integer`},
		{"on: maybe", `key "on": value "maybe" is not a valid boolean (true/false)`},
		{"rate: [1]", `key "rate": must be a number, got a list`},
		{"inner: 3", `key "inner": must be a mapping, got "3"`},
		{"items: x", `key "items": must be a list of mappings, got "x"`},
		{"name: a\nname: b", `key "name" appears twice`},
	} {
		var d doc
		err := Decode(parse(t, tc.yaml), &d)
		var se *Error
		if !errors.As(err, &se) || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %s", tc.yaml, err, tc.want)
		}
	}
}

// Keys left out keep their values; the rest are set, lists replaced.
func TestDecodeKeepsDefaults(t *testing.T) {
	d := doc{Name: "n", Count: 3, Rate: 0.5}
	d.Inner.Depth = 2
	if err := Decode(parse(t, "count: 4\ninner: {}\nitems: [{label: a, set: [x=1]}]\non: yes"), &d); err != nil {
		t.Fatal(err)
	}
	if d.Name != "n" || d.Count != 4 || d.Rate != 0.5 || d.Inner.Depth != 2 || !d.On || len(d.Items) != 1 || d.Items[0].Set[0] != "x=1" {
		t.Errorf("decoded %+v", d)
	}
}

// A decoded map: a whole float is an integer, NaN and a fraction are not; the first refusal in
// sorted key order is reported.
func TestDecodeMap(t *testing.T) {
	var d doc
	if err := DecodeMap(map[string]any{"count": 6.0, "rate": 2}, &d); err != nil || d.Count != 6 || d.Rate != 2 {
		t.Fatalf("%+v, %v", d, err)
	}
	for _, v := range []any{5.5, math.NaN(), math.Inf(1), "5", nil} {
		var se *Error
		if err := DecodeMap(map[string]any{"count": v}, &d); !errors.As(err, &se) || se.Key != "count" || Words(se.Type) != "integers" {
			t.Errorf("count: %v: error %v", v, err)
		}
	}
	var se *Error
	if err := DecodeMap(map[string]any{"zz": 1, "aa": 1}, &d); !errors.As(err, &se) || se.Key != "aa" || !se.Unknown {
		t.Errorf("unknown keys: %v", err)
	}
}
