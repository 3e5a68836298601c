// Package all registers every environment of graftrl; commands import it for its side effect so
// that any env.name of a config resolves:
//
//   - frozenlake: cross a slippery frozen lake to the goal around holes
//   - keydoor: pick up the key, open the door and reach the goal behind it
//   - maze: reach the goal cell of a small grid around walls and traps
//   - openenv: a remote environment on an OpenEnv server (graftrl serve-env or any other)
//   - shop: find and buy the product of the instruction in a small web shop
//   - sokoban: push the boxes of a small room onto their targets
//   - toolcalc: reach a target number with calculator tool calls
//
// A test holds this list to the registry, both ways.
package all

import (
	// Registered environments.
	_ "github.com/graftrl/graftrl/envs/frozenlake"
	_ "github.com/graftrl/graftrl/envs/keydoor"
	_ "github.com/graftrl/graftrl/envs/maze"
	_ "github.com/graftrl/graftrl/envs/openenv"
	_ "github.com/graftrl/graftrl/envs/shop"
	_ "github.com/graftrl/graftrl/envs/sokoban"
	_ "github.com/graftrl/graftrl/envs/toolcalc"
)
