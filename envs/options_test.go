package envs

import (
	"errors"
	"math"
	"strings"
	"testing"
)

type testOptions struct {
	Size    int     `yaml:"size"`
	Rate    float64 `yaml:"rate"`
	Mode    string  `yaml:"mode"`
	Verbose bool    `yaml:"verbose,omitempty"`
	Skipped int     `yaml:"-"`
	Untaged int
	Inner   `yaml:",inline"`
}

type Inner struct {
	Depth int `yaml:"depth"`
}

func defaults() testOptions {
	return testOptions{Size: 5, Rate: 0.5, Mode: "fast", Skipped: 3, Untaged: 4, Inner: Inner{Depth: 2}}
}

func TestDecodeKeepsDefaults(t *testing.T) {
	tests := []struct {
		opts Options
		want testOptions
	}{
		{nil, defaults()},
		{Options{}, defaults()},
		{Options{"size": 7}, func() testOptions { d := defaults(); d.Size = 7; return d }()},
		{Options{"rate": 2, "mode": "slow", "verbose": true, "untaged": 9, "depth": 1},
			testOptions{Size: 5, Rate: 2, Mode: "slow", Verbose: true, Skipped: 3, Untaged: 9, Inner: Inner{Depth: 1}}},
		{Options{"size": 6.0, "rate": -1e-3}, func() testOptions { d := defaults(); d.Size, d.Rate = 6, -1e-3; return d }()},
		{Options{"size": int64(1) << 40}, func() testOptions { d := defaults(); d.Size = 1 << 40; return d }()},
	}
	for _, tc := range tests {
		got := defaults()
		if err := tc.opts.Decode("toy", &got); err != nil || got != tc.want {
			t.Errorf("Decode(%v) = %+v, %v; want %+v", tc.opts, got, err, tc.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		opts Options
		key  string
		want string
	}{
		{Options{"szie": 5}, "szie", `env toy: unknown option "szie" (allowed: depth, mode, rate, size, untaged, verbose)`},
		{Options{"Size": 5}, "Size", `unknown option "Size"`},
		{Options{"skipped": 5}, "skipped", `unknown option "skipped"`},
		// The first unknown key in sorted order is reported, whatever the map order.
		{Options{"zz": 1, "aa": 1, "size": 1}, "aa", `unknown option "aa"`},
		{Options{"size": "five"}, "size", `env toy: option "size": "five" has the wrong type (allowed integers)`},
		{Options{"size": "5"}, "size", `option "size": "5" has the wrong type (allowed integers)`},
		{Options{"size": 5.5}, "size", `option "size": 5.5 has the wrong type`},
		{Options{"size": math.NaN()}, "size", `option "size": NaN has the wrong type`},
		{Options{"size": math.Inf(1)}, "size", `option "size": +Inf has the wrong type`},
		{Options{"size": nil}, "size", `option "size": null has the wrong type (allowed integers)`},
		{Options{"size": []any{1, 2}}, "size", `option "size": [1 2] has the wrong type`},
		{Options{"rate": true}, "rate", `option "rate": true has the wrong type (allowed numbers)`},
		{Options{"verbose": "maybe"}, "verbose", `option "verbose": "maybe" has the wrong type (allowed true, false)`},
		{Options{"depth": "x"}, "depth", `option "depth": "x" has the wrong type (allowed integers)`},
		{Options{"mode": map[string]any{"a": 1}}, "mode", `option "mode": map[a:1] has the wrong type (allowed strings)`},
	}
	for _, tc := range tests {
		got := defaults()
		err := tc.opts.Decode("toy", &got)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Key != tc.key || oe.Env != "toy" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%v) error %v, want an OptionError for %q containing %s", tc.opts, err, tc.key, tc.want)
		}
	}
}

func TestDecodeBadDestination(t *testing.T) {
	var n int
	for _, dst := range []any{nil, testOptions{}, &n, (*testOptions)(nil)} {
		if err := (Options{}).Decode("toy", dst); err == nil || !strings.Contains(err.Error(), "env toy") {
			t.Errorf("Decode into %T: error %v", dst, err)
		}
	}
}

func TestCheckRange(t *testing.T) {
	if err := CheckRange("toy", "size", 5, 5, 7); err != nil {
		t.Errorf("5 in 5..7: %v", err)
	}
	if err := CheckRange("toy", "size", 7, 5, 7); err != nil {
		t.Errorf("7 in 5..7: %v", err)
	}
	if err := CheckRange("toy", "rate", 0.0, -1, 0); err != nil {
		t.Errorf("0 in -1..0: %v", err)
	}
	tests := []struct {
		err  error
		want string
	}{
		{CheckRange("maze", "size", 9, 5, 7), `env maze: option "size": 9 is out of range (allowed 5..7)`},
		{CheckRange("maze", "size", 4, 5, 7), `env maze: option "size": 4 is out of range (allowed 5..7)`},
		{CheckRange("toy", "rate", 0.25, -1, 0), `env toy: option "rate": 0.25 is out of range (allowed -1..0)`},
		{CheckRange("toy", "rate", math.NaN(), -1, 0), `env toy: option "rate": NaN is out of range (allowed -1..0)`},
		{CheckRange("toy", "mode", "z", "a", "m"), `env toy: option "mode": "z" is out of range (allowed a..m)`},
	}
	for _, tc := range tests {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("error %v, want %s", tc.err, tc.want)
		}
	}
}

// An option nested deeper than the strict decoder allows (an env reached over the network, or
// options built in code) is refused naming the env and the key, before anything is encoded.
func TestDecodeTooDeep(t *testing.T) {
	var v any = 1
	for range 10_000 {
		v = map[string]any{"a": v}
	}
	dst := defaults()
	err := Options{"mode": v}.Decode("toy", &dst)
	if err == nil || !strings.Contains(err.Error(), "env toy") || !strings.Contains(err.Error(), `"mode"`) {
		t.Fatalf("Decode of a 10000-deep option: %v", err)
	}
}
