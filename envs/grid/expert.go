package grid

import (
	"fmt"

	"github.com/graftrl/graftrl/envs"
)

// Moves returns the action words of the allowed moves, in direction order, and the distance to
// success each leads to: next(d) reports whether move d is allowed and, if so, the distance after it
// (0 for success, or envs.DistDead). It serves ValidMoves and ExpertMove.
func Moves(next func(d Direction) (dist int, ok bool)) (words []string, dists []int) {
	words, dists = make([]string, 0, NumDirections), make([]int, 0, NumDirections)
	for d := range NumDirections {
		if dist, ok := next(d); ok {
			words, dists = append(words, d.Word()), append(dists, dist)
		}
	}
	return words, dists
}

// ValidMoves is the ValidActions of a grid env (see envs.ValidActioner): the words of the allowed
// moves, in direction order, while an episode runs (see Moves for next); none otherwise.
func ValidMoves(running bool, next func(d Direction) (dist int, ok bool)) []string {
	if !running {
		return nil
	}
	words, _ := Moves(next)
	return words
}

// ExpertMove is the ExpertAction of a grid env's shortest-path expert (see envs.Expert): the word of
// the allowed move that leads closest to success (see Moves for next, and envs.Closest for the
// choice: ties go to the first in direction order, and where no move leads to a known distance, the
// first allowed move). Where no episode runs or no move is allowed, the error, prefixed by the env's
// name, wraps envs.ErrNoAction.
func ExpertMove(env string, running bool, next func(d Direction) (dist int, ok bool)) (string, error) {
	if running {
		if words, dists := Moves(next); len(words) > 0 {
			return words[envs.Closest(dists)], nil
		}
	}
	return "", fmt.Errorf("%s: %w", env, envs.ErrNoAction)
}
