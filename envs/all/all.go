// Package all registers every environment of graftrl; commands import it for its side effect so
// that any env.name of a config resolves.
package all

import (
	// Registered environments.
	_ "github.com/graftrl/graftrl/envs/frozenlake"
	_ "github.com/graftrl/graftrl/envs/keydoor"
	_ "github.com/graftrl/graftrl/envs/maze"
	_ "github.com/graftrl/graftrl/envs/shop"
	_ "github.com/graftrl/graftrl/envs/sokoban"
	_ "github.com/graftrl/graftrl/envs/toolcalc"
)
