package sokoban

import "github.com/graftrl/graftrl/envs/grid"

// successor is a move as grid.Moves sees it: whether it is allowed, and Info.Distance after it.
func (s *Sokoban) successor(d direction) (dist int, ok bool) {
	player, boxes, ok := s.moved(d)
	return s.distanceOf(player, boxes), ok
}

// ValidActions returns the moves onto a free cell and the pushes of a box onto a free cell, in the
// order up, down, left, right (see envs.ValidActioner).
func (s *Sokoban) ValidActions() []string { return grid.ValidMoves(s.ep.Running(), s.successor) }

// ExpertAction returns the first move, in the order up, down, left, right, that lies on a shortest
// solution, read from the level's solver table (a breadth-first search over (player, boxes)
// states); in a deadlocked room, where no solution is left, the first valid move (see envs.Expert).
func (s *Sokoban) ExpertAction() (string, error) {
	return grid.ExpertMove("sokoban", s.ep.Running(), s.successor)
}
