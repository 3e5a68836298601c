package shop

import (
	"math/rand/v2"
	"strings"
)

// Word lists, in vocabulary order. Attributes are stored as indices into them.
const (
	colorWords    = "red blue green black white"
	categoryWords = "shirt shoes hat bag pants"
	sizeWords     = "s m l"
	priceWords    = "10 15 20 25 30 35"
	itemWords     = "i1 i2 i3 i4 i5 i6 i7 i8"
	numColors     = 5
	numCategories = 5
	numSizes      = 3
	numPrices     = 6
	// bag is the category without sizes.
	bag = 3
)

// nth returns the i-th word of a space-separated list, as a substring (no allocation).
func nth(list string, i int) string {
	for ; i > 0; i-- {
		list = list[strings.IndexByte(list, ' ')+1:]
	}
	if j := strings.IndexByte(list, ' '); j >= 0 {
		return list[:j]
	}
	return list
}

// indexOf returns the position of w in a space-separated list, or -1.
func indexOf(list, w string) int {
	for i := 0; list != ""; i++ {
		word := list
		if j := strings.IndexByte(list, ' '); j >= 0 {
			word, list = list[:j], list[j+1:]
		} else {
			list = ""
		}
		if word == w {
			return i
		}
	}
	return -1
}

// price returns the amount of price index p: 10, 15, ..., 35.
func price(p int8) int { return 10 + 5*int(p) }

// sized reports whether items of a category come in sizes.
func sized(category int8) bool { return category != bag }

// item is one product of a catalogue.
type item struct {
	category, color, price int8
	// sizes is the bit set of the sizes offered (bit s for size index s); 0 for a bag.
	sizes uint8
}

// catalog is the task of a seed: the products and the goal. It is a value type (fixed arrays) so that
// copying an env copies its task.
type catalog struct {
	n     int
	items [MaxItems]item
	// The goal: category, color, size (-1 for a bag) and the price bound (an amount; the price must
	// be below it).
	goalCategory, goalColor, goalSize int8
	bound                             int
}

// pcgStream is the second PCG seed word. It is part of the task identity: changing it changes the
// catalogue of every task seed.
const pcgStream = 0x73686f70 // "shop"

// correct reports whether item i matches every attribute of the goal.
func (c *catalog) correct(i int) bool {
	it := c.items[i]
	return it.category == c.goalCategory && it.color == c.goalColor && price(it.price) < c.bound &&
		(c.goalSize < 0 || it.sizes&(1<<c.goalSize) != 0)
}

// matches reports whether item i matches every word of a query (a bit set over colors, then
// categories).
func (c *catalog) matches(i int, query uint16) bool {
	it := c.items[i]
	for w := range numColors + numCategories {
		if query&(1<<w) == 0 {
			continue
		}
		if (w < numColors && int(it.color) != w) || (w >= numColors && int(it.category) != w-numColors) {
			return false
		}
	}
	return true
}

// results returns the items a query lists: those matching it, in id order, at most max.
func (c *catalog) results(query uint16, max int) (ids [MaxItems]int8, n int) {
	for i := range c.n {
		if n < max && c.matches(i, query) {
			ids[n] = int8(i)
			n++
		}
	}
	return ids, n
}

// generate draws the catalogue of a task seed. The goal is a category, a color, a size (none for a
// bag) and a price bound of 20 or 30. The catalogue holds exactly one item matching the goal; 1 ..
// results-1 look-alikes of the same category and color that are too expensive or lack the size; and
// other items of another category or color. The query "<color> <category>" therefore lists the
// target on its single page. Items are shuffled before they get their ids.
func (c *catalog) generate(cfg Config, seed int64) {
	var pcg rand.PCG
	pcg.Seed(uint64(seed), pcgStream)
	rng := rand.New(&pcg)
	c.n = cfg.Items
	c.goalCategory, c.goalColor = int8(rng.IntN(numCategories)), int8(rng.IntN(numColors))
	c.bound = 20 + 10*rng.IntN(2)
	c.goalSize = -1
	if sized(c.goalCategory) {
		c.goalSize = int8(rng.IntN(numSizes))
	}
	cheap := int8((c.bound - 10) / 5) // prices 0..cheap-1 are below the bound
	anySizes := func(category int8) uint8 {
		if !sized(category) {
			return 0
		}
		return uint8(1 + rng.IntN(7))
	}
	// The target.
	k := 0
	target := item{category: c.goalCategory, color: c.goalColor, price: int8(rng.IntN(int(cheap)))}
	if c.goalSize >= 0 {
		target.sizes = uint8(rng.IntN(8)) | 1<<c.goalSize
	}
	c.items[k] = target
	k++
	// Look-alikes: too expensive, or (for sized goals) without the goal size at any price.
	for range min(1+rng.IntN(cfg.Results-1), c.n-1) {
		it := item{category: c.goalCategory, color: c.goalColor}
		if c.goalSize >= 0 && rng.IntN(2) == 0 {
			it.price = int8(rng.IntN(numPrices))
			others := [2]uint8{}
			j := 0
			for s := range int8(numSizes) {
				if s != c.goalSize {
					others[j] = 1 << s
					j++
				}
			}
			switch rng.IntN(3) {
			case 0:
				it.sizes = others[0]
			case 1:
				it.sizes = others[1]
			default:
				it.sizes = others[0] | others[1]
			}
		} else {
			it.price = cheap + int8(rng.IntN(numPrices-int(cheap)))
			it.sizes = anySizes(it.category)
		}
		c.items[k] = it
		k++
	}
	// Other items: another category or another color.
	for ; k < c.n; k++ {
		it := item{category: int8(rng.IntN(numCategories)), color: int8(rng.IntN(numColors))}
		for it.category == c.goalCategory && it.color == c.goalColor {
			it.category, it.color = int8(rng.IntN(numCategories)), int8(rng.IntN(numColors))
		}
		it.price = int8(rng.IntN(numPrices))
		it.sizes = anySizes(it.category)
		c.items[k] = it
	}
	for i := c.n - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		c.items[i], c.items[j] = c.items[j], c.items[i]
	}
}
