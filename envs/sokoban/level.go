package sokoban

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/graftrl/graftrl/envs/grid"
)

// maxFree bounds the floor cells: the interior of the largest room.
const maxFree = (MaxSize - 2) * (MaxSize - 2)

// A cell index (grid.Index) fits the int8 of free; otherwise this constant overflows and does not
// compile.
const _ = int8(MaxSize*grid.MaxSide - 1)

// pcgStream is the second PCG seed word. It is part of the task identity: changing it changes the
// level of every task seed.
const pcgStream = 0x736f6b6f // "soko"

// maxDraws bounds level generation; at the hardest settings about one draw in twenty is accepted,
// so reaching the bound means a bug rather than bad luck.
const maxDraws = 20_000

// dead marks states of the solver table from which no sequence of moves solves the level.
const dead = -1

// level is one room: its walls and targets, the start state, and the solver table over every state
// of the room. The table is computed once per level and never written afterwards, so copies of an
// env share it.
type level struct {
	size   int
	nBoxes int
	wall   [grid.MaxCells]bool
	target [grid.MaxCells]bool
	// targets are the target cells in increasing order (only the first boxes entries are used).
	targets     [2]int
	startPlayer int
	startBoxes  [2]int
	// free lists the floor cells (not walls) in increasing order; freeIdx maps a cell to its position
	// in free, or -1 for walls.
	free    [maxFree]int8
	nFree   int
	freeIdx [grid.MaxCells]int8
	// dist[index(player, boxes)] is the optimal number of moves to solve the level, or dead.
	dist []int16
}

// index maps a state onto the solver table: the player's floor index, then the boxes' (in
// increasing order), in base nFree.
func (l *level) index(player int, boxes [2]int) int {
	n := l.nFree
	i := int(l.freeIdx[player]) + n*int(l.freeIdx[boxes[0]])
	if l.nBoxes == 2 {
		i += n * n * int(l.freeIdx[boxes[1]])
	}
	return i
}

// indexFree is index over floor indices.
func (l *level) indexFree(p, b0, b1 int) int {
	n := l.nFree
	i := p + n*b0
	if l.nBoxes == 2 {
		i += n * n * b1
	}
	return i
}

// tableSize is the length of the solver table.
func (l *level) tableSize() int {
	n := l.nFree
	if l.nBoxes == 2 {
		return n * n * n
	}
	return n * n
}

// indexFloor lists the floor cells.
func (l *level) indexFloor() {
	l.nFree = 0
	for i := range l.freeIdx {
		l.freeIdx[i] = -1
	}
	for r := 1; r < l.size-1; r++ {
		for c := 1; c < l.size-1; c++ {
			i := grid.Index(r, c)
			if !l.wall[i] {
				l.freeIdx[i] = int8(l.nFree)
				l.free[l.nFree] = int8(i)
				l.nFree++
			}
		}
	}
}

// solve fills dist by a breadth-first search backwards from the solved states (every box on a target,
// the player on any other floor cell) over pulls, the reverse of pushes: the predecessor of a state is
// the player one cell back, either alone or pulling the box that lies ahead of it. It visits every
// state of the room once, at most 2·4 predecessors each. buf is reused when it is large enough.
func (l *level) solve(buf []int16) []int16 {
	size := l.tableSize()
	if cap(buf) < size {
		buf = make([]int16, size)
	}
	dist := buf[:size]
	for i := range dist {
		dist[i] = dead
	}
	n := l.nFree
	// The queue holds floor indices (player, box 0, box 1); a state is enqueued once.
	type state struct{ p, b0, b1 int8 }
	queue := make([]state, 0, 256)
	t0, t1 := int(l.freeIdx[l.targets[0]]), 0
	if l.nBoxes == 2 {
		t1 = int(l.freeIdx[l.targets[1]])
	}
	for p := range n {
		if p == t0 || (l.nBoxes == 2 && p == t1) {
			continue
		}
		dist[l.indexFree(p, t0, t1)] = 0
		queue = append(queue, state{int8(p), int8(t0), int8(t1)})
	}
	for head := 0; head < len(queue); head++ {
		s := queue[head]
		cur := dist[l.indexFree(int(s.p), int(s.b0), int(s.b1))]
		pc := int(l.free[s.p])
		b0 := int(l.free[s.b0])
		b1 := -1
		if l.nBoxes == 2 {
			b1 = int(l.free[s.b1])
		}
		for d := range grid.NumDirections {
			dd := d.Offset()
			q := pc - dd // where the player came from
			if l.wall[q] || q == b0 || q == b1 {
				continue
			}
			visit := func(p, c0, c1 int) {
				i := l.indexFree(p, c0, c1)
				if dist[i] == dead {
					dist[i] = cur + 1
					queue = append(queue, state{int8(p), int8(c0), int8(c1)})
				}
			}
			fq := int(l.freeIdx[q])
			// A plain move from q.
			visit(fq, int(s.b0), int(s.b1))
			// A push from q that moved the box from pc to pc+dd.
			ahead := pc + dd
			switch {
			case ahead == b0:
				nb0, nb1 := int(l.freeIdx[pc]), int(s.b1)
				if l.nBoxes == 2 && nb0 > nb1 {
					nb0, nb1 = nb1, nb0
				}
				visit(fq, nb0, nb1)
			case ahead == b1:
				nb0, nb1 := int(s.b0), int(l.freeIdx[pc])
				if nb0 > nb1 {
					nb0, nb1 = nb1, nb0
				}
				visit(fq, nb0, nb1)
			}
		}
	}
	return dist
}

// startDistance is the solver's distance of the start state.
func (l *level) startDistance() int {
	return int(l.dist[l.index(l.startPlayer, l.startBoxes)])
}

// generate draws the level of a task seed: interior walls, targets, boxes and the player on distinct
// interior cells, redrawn from the same random stream until no box starts on a target and the solver
// finds a solution of minSolution..maxSolution moves.
func (l *level) generate(cfg Config, seed int64) error {
	n := cfg.Size
	interior := (n - 2) * (n - 2)
	need := cfg.Walls + 2*cfg.Boxes + 1
	if need > interior {
		return fmt.Errorf("sokoban: %d walls and %d boxes do not fit a %dx%d room", cfg.Walls, cfg.Boxes, n, n)
	}
	var pcg rand.PCG
	pcg.Seed(uint64(seed), pcgStream)
	rng := rand.New(&pcg)
	var perm [maxFree]int
	for i := range interior {
		perm[i] = grid.Index(1+i/(n-2), 1+i%(n-2))
	}
	l.size, l.nBoxes = n, cfg.Boxes
	var buf []int16
	for range maxDraws {
		// A partial Fisher-Yates shuffle: the first `need` entries are a uniform draw of distinct
		// cells; continuing to shuffle the previous draw keeps it uniform.
		for i := range need {
			j := i + rng.IntN(interior-i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		l.wall, l.target = [grid.MaxCells]bool{}, [grid.MaxCells]bool{}
		for i := range grid.MaxCells {
			r, c := grid.Row(i), grid.Col(i)
			l.wall[i] = r == 0 || r >= n-1 || c == 0 || c >= n-1
		}
		for _, i := range perm[:cfg.Walls] {
			l.wall[i] = true
		}
		k := cfg.Walls
		l.targets = [2]int{perm[k], perm[k]}
		l.startBoxes = [2]int{perm[k+cfg.Boxes], perm[k+cfg.Boxes]}
		if cfg.Boxes == 2 {
			l.targets[1] = perm[k+1]
			l.startBoxes[1] = perm[k+3]
		}
		l.targets = sorted(l.targets)
		l.startBoxes = sorted(l.startBoxes)
		for _, t := range l.targets[:cfg.Boxes] {
			l.target[t] = true
		}
		l.startPlayer = perm[k+2*cfg.Boxes]
		l.indexFloor()
		l.dist = l.solve(buf)
		buf = l.dist
		if d := l.startDistance(); d >= minSolution && d <= maxSolution(cfg.Size, cfg.Boxes) {
			// The table escapes into the env (and its clones); the next level gets a fresh one.
			l.dist = append([]int16(nil), l.dist...)
			return nil
		}
	}
	return fmt.Errorf("sokoban: no solvable level for task seed %d after %d draws", seed, maxDraws)
}

// sorted returns the pair in increasing order.
func sorted(b [2]int) [2]int {
	if b[0] > b[1] {
		b[0], b[1] = b[1], b[0]
	}
	return b
}

// parseLevel builds a level from a literal room in the usual Sokoban text notation, one string per
// row: '#' wall, ' ' or '-' floor, '@' player, '+' player on a target, '$' box, '*' box on a target,
// '.' target. The room is square with walls all around, of side 3..MaxSize, with one or two boxes
// and as many targets. It lets tests pin down dynamics on hand-checked rooms; unlike generate it
// accepts unsolvable and already solved rooms.
func parseLevel(rows []string) (level, error) {
	var l level
	n := len(rows)
	var boxes, targets []int
	players := 0
	err := grid.ParseRows("sokoban: room", rows, 3, MaxSize, func(i int, ch byte) error {
		if r, c := grid.Row(i), grid.Col(i); (r == 0 || r == n-1 || c == 0 || c == n-1) && ch != '#' {
			return errors.New("the border must be walls")
		}
		switch ch {
		case '#':
			l.wall[i] = true
		case ' ', '-':
		case '@', '+':
			l.startPlayer = i
			players++
		case '$', '*':
			boxes = append(boxes, i)
		case '.':
		default:
			return grid.UnknownCell(ch)
		}
		if ch == '+' || ch == '*' || ch == '.' {
			targets = append(targets, i)
		}
		return nil
	})
	if err != nil {
		return level{}, err
	}
	if players != 1 || len(boxes) < 1 || len(boxes) > 2 || len(targets) != len(boxes) {
		return level{}, fmt.Errorf("sokoban: room has %d players, %d boxes and %d targets, want 1, 1..2 and as many targets as boxes",
			players, len(boxes), len(targets))
	}
	l.size, l.nBoxes = n, len(boxes)
	for i := range 2 {
		l.startBoxes[i] = boxes[min(i, len(boxes)-1)]
		l.targets[i] = targets[min(i, len(targets)-1)]
	}
	for _, t := range targets {
		l.target[t] = true
	}
	l.indexFloor()
	l.dist = l.solve(nil)
	return l, nil
}
