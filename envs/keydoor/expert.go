package keydoor

import "github.com/graftrl/graftrl/envs/grid"

// successor is a move as grid.Moves sees it: whether it is valid, and Info.Distance after it.
func (k *KeyDoor) successor(d direction) (dist int, ok bool) {
	next, ok := k.move(d)
	return k.distanceAt(next, k.holds(next, k.hasKey)), ok
}

// ValidActions returns the moves that stay on the grid, off the walls and off the door unless the
// key is held, in the order up, down, left, right (see envs.ValidActioner).
func (k *KeyDoor) ValidActions() []string { return grid.ValidMoves(k.ep.Running(), k.successor) }

// ExpertAction returns the first move, in the order up, down, left, right, that lies on a shortest
// path to the goal (through the key's cell and the door while the key is not held), read from the
// breadth-first distances over (cell, key held) states; where the goal cannot be reached (only on a
// hand-built layout), the first valid move (see envs.Expert).
func (k *KeyDoor) ExpertAction() (string, error) {
	return grid.ExpertMove("keydoor", k.ep.Running(), k.successor)
}
