package envs

import (
	"testing"
)

// sideConfig is a configuration whose walls default by side, as a grid env's do.
type sideConfig struct {
	Size  int `yaml:"size"`
	Walls int `yaml:"walls"`
}

func (c sideConfig) Validate() error {
	return CheckRange("t", "walls", c.Walls, 0, c.Size)
}

// sideDefaults are the defaults of a side: size-1 walls.
func sideDefaults(probe sideConfig) (sideConfig, error) {
	return sideConfig{Size: probe.Size, Walls: probe.Size - 1}, CheckRange("t", "size", probe.Size, 2, 8)
}

// TestDecodeOptions checks the two passes: the defaults follow the side given, explicit keys win
// over them, and errors of the first pass, of the side and of validation come out as they are;
// and the single pass without byOptions: explicit keys over the fixed defaults.
func TestDecodeOptions(t *testing.T) {
	probe := sideConfig{Size: 3, Walls: 2}
	for _, tc := range []struct {
		opts      Options
		byOptions func(sideConfig) (sideConfig, error)
		want      sideConfig
		err       string
	}{
		{nil, sideDefaults, sideConfig{3, 2}, ""},
		{Options{"size": 6}, sideDefaults, sideConfig{6, 5}, ""},
		{Options{"size": 6, "walls": 0}, sideDefaults, sideConfig{6, 0}, ""},
		{Options{"walls": 3}, sideDefaults, sideConfig{3, 3}, ""},
		{Options{"walls": 4}, sideDefaults, sideConfig{3, 4}, `env t: option "walls": 4 is out of range (allowed 0..3)`},
		{Options{"size": 9}, sideDefaults, sideConfig{}, `env t: option "size": 9 is out of range (allowed 2..8)`},
		{Options{"side": 4}, sideDefaults, sideConfig{}, `env t: unknown option "side" (allowed: size, walls)`},
		{nil, nil, sideConfig{3, 2}, ""},
		{Options{"size": 6}, nil, sideConfig{6, 2}, ""},
		{Options{"size": 6, "walls": 7}, nil, sideConfig{6, 7}, `env t: option "walls": 7 is out of range (allowed 0..6)`},
		{Options{"side": 4}, nil, sideConfig{}, `env t: unknown option "side" (allowed: size, walls)`},
	} {
		got, err := DecodeOptions("t", tc.opts, probe, tc.byOptions)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%v: %+v, %v; want %+v, %s", tc.opts, got, err, tc.want, tc.err)
		}
	}
}
