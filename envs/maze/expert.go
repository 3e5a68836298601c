package maze

import "github.com/graftrl/graftrl/envs/grid"

// successor is a move as grid.Moves sees it: whether it is valid, and Info.Distance after it.
func (m *Maze) successor(d direction) (dist int, ok bool) {
	next, ok := m.move(d)
	return m.distanceAt(next), ok
}

// ValidActions returns the moves that stay on the grid and off the walls, in the order up, down,
// left, right, then look with idle_actions; a move onto a trap is valid (see envs.ValidActioner).
func (m *Maze) ValidActions() []string {
	if !m.ep.Running() {
		return nil
	}
	return append(grid.ValidMoves(true, m.successor), m.IdleActions()...)
}

// ExpertAction returns the first move, in the order up, down, left, right, that lies on a shortest
// path to the goal avoiding traps, read from the breadth-first distances of the layout; where the
// goal cannot be reached (only on a hand-built layout), the first valid move (see envs.Expert).
func (m *Maze) ExpertAction() (string, error) {
	return grid.ExpertMove("maze", m.ep.Running(), m.successor)
}
