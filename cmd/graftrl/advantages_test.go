package main

import (
	"reflect"
	"strings"
	"testing"
)

// --estimators and --opt: labels keep an estimator's runs apart, option values are read as
// numbers and booleans where they are ones, and every refusal names what was wrong.
func TestParseEstimatorRuns(t *testing.T) {
	runs, err := parseEstimatorRuns("grpo, graft,graft:td", []string{"graft:td.mode=td", "graft:td.gamma=0.9", "grpo.eps=0.001"})
	if err != nil {
		t.Fatal(err)
	}
	var labels, names []string
	for _, r := range runs {
		labels, names = append(labels, r.Label), append(names, r.Name)
	}
	if want := []string{"grpo", "graft", "graft:td"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if want := []string{"grpo", "graft", "graft"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if want := map[string]any{"mode": "td", "gamma": 0.9}; !reflect.DeepEqual(runs[2].Options, want) {
		t.Errorf("graft:td options %v, want %v", runs[2].Options, want)
	}
	if len(runs[1].Options) != 0 {
		t.Errorf("graft took options %v meant for graft:td", runs[1].Options)
	}
	for _, c := range []struct {
		list string
		opts []string
		want string
	}{
		{"grpo,,graft", nil, "an empty name"},
		{"grpo,grpo", nil, `"grpo" listed twice`},
		{"grpo", []string{"graft.mode=td"}, `"graft" is not in --estimators`},
		{"grpo", []string{"grpo"}, "expected estimator.key=value"},
		{"nosuch", nil, "nosuch"},
		{"graft", []string{"graft.mode=sideways"}, "graft: "},
	} {
		if _, err := parseEstimatorRuns(c.list, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseEstimatorRuns(%q, %q) = %v, want an error with %q", c.list, c.opts, err, c.want)
		}
	}
}

func TestParseScalar(t *testing.T) {
	for in, want := range map[string]any{"3": 3, "-2": -2, "0.5": 0.5, "1e-3": 1e-3, "true": true, "false": false, "td": "td", "": ""} {
		if got := parseScalar(in); got != want {
			t.Errorf("parseScalar(%q) = %#v, want %#v", in, got, want)
		}
	}
}
