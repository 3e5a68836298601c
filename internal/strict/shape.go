package strict

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	"gopkg.in/yaml.v3"
)

// MaxDepth is how deeply mappings and lists may nest in a document (its top-level mapping is
// the first level) or in a decoded value. Configs use a handful of levels; the bound is there
// because the cost of decoding grows faster than the size of a deeply nested document (yaml.v3
// re-encodes decoded values as text indented by their depth), so a 50 KB file nested 10,000
// levels deep would hold the program for seconds and a gigabyte.
const MaxDepth = 64

// MaxAliasNodes is how many nodes the aliases of one document may repeat, all aliases together:
// an alias (*name) counts the nodes of the value it stands for, with the aliases inside that
// value expanded. Anchors that share a section or two stay far below it; nine levels of ten
// aliases each ("billion laughs") would expand to 10⁹ nodes once decoded.
const MaxAliasNodes = 100_000

// ShapeError is a document or a value refused for its shape before anything is decoded from it:
// mappings and lists nested deeper than MaxDepth, aliases that repeat more than MaxAliasNodes
// nodes or stand for a value that holds them, or a second document in a file.
type ShapeError struct {
	// Line is the line of the document where the problem is (0 for a decoded value, which
	// has no lines).
	Line int
	// Key is the key of the options whose value is refused ("" for a document).
	Key string
	msg string
}

// Error formats the refusal as, for example,
//
//	line 4, column 257: mappings and lists nested deeper than 64 levels (allowed at most 64)
func (e *ShapeError) Error() string { return e.msg }

// Parse reads data, one YAML document, into its node tree and checks the tree (Check) before
// anything is decoded from it; parsing is linear in the size of data, decoding need not be. A
// leading --- and a closing ... are allowed, and so are later documents that hold nothing (only
// comments); a later document that holds a value is a *ShapeError naming its line, since it
// would be silently ignored. A file with no document (empty, or only comments) gives a node of
// Kind 0. A syntax error, in any of the documents, is yaml.v3's error.
func Parse(data []byte) (*yaml.Node, error) {
	return ParseAt(data, 0)
}

// ParseAt is Parse for a value that goes depth mappings and lists down into a document (a
// command line's key.path=value goes under the top level and one mapping per key but the
// last): its levels count from there.
func ParseAt(data []byte, depth int) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &yaml.Node{}, nil
		}
		return nil, err
	}
	if err := Check(&doc, depth); err != nil {
		return nil, err
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			return &doc, nil
		}
		if err != nil {
			return nil, err
		}
		if !emptyDocument(&next) {
			return nil, &ShapeError{Line: next.Line, msg: fmt.Sprintf(
				"line %d: a second YAML document starts here and would be ignored (allowed: one document, optionally opened by --- and closed by ...)",
				next.Line)}
		}
	}
}

// emptyDocument reports a document that holds nothing: a --- followed by comments at most.
func emptyDocument(doc *yaml.Node) bool {
	switch len(doc.Content) {
	case 0:
		return true
	case 1:
		n := doc.Content[0]
		return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" && n.Value == "" && n.Anchor == "" && n.Style == 0
	}
	return false
}

// Check refuses the node tree n, read with its aliases expanded, when its mappings and lists
// nest deeper than MaxDepth, when its aliases repeat more than MaxAliasNodes nodes in all, or
// when an alias stands for a value that holds it (a value that would never end). depth is the
// number of mappings and lists around n (0 for a document or its top level). Each refusal is a
// *ShapeError naming the line and the limit. The walk visits each node once (an alias reuses
// what its anchor's walk found) and stops at the first problem, so it costs at most the nodes
// of n and MaxDepth levels of recursion.
func Check(n *yaml.Node, depth int) error {
	c := checker{seen: map[*yaml.Node]shape{}, open: map[*yaml.Node]bool{}}
	_, err := c.walk(n, depth)
	return err
}

// shape is what Check knows of a node: how many levels of mappings and lists it holds (0 for a
// scalar) and how many nodes it expands to, counted up to MaxAliasNodes+1 only.
type shape struct {
	height int
	nodes  int64
}

type checker struct {
	// seen holds the shape of every anchored node walked, for the aliases that stand for it.
	seen map[*yaml.Node]shape
	// open holds the anchored nodes being walked: an alias to one of them is inside its value.
	open map[*yaml.Node]bool
	// repeated counts the nodes the aliases walked so far stand for.
	repeated int64
}

func (c *checker) walk(n *yaml.Node, depth int) (shape, error) {
	if n == nil {
		return shape{}, nil
	}
	if n.Kind == yaml.AliasNode {
		return c.alias(n, depth)
	}
	container := n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode
	inner := depth
	if container {
		inner++
		if inner > MaxDepth {
			return shape{}, &ShapeError{Line: n.Line, msg: fmt.Sprintf(
				"line %d, column %d: mappings and lists nested deeper than %d levels (allowed at most %d)",
				n.Line, n.Column, MaxDepth, MaxDepth)}
		}
	}
	if n.Anchor != "" {
		c.open[n] = true
	}
	s := shape{nodes: 1}
	deepest := 0
	for _, child := range n.Content {
		cs, err := c.walk(child, inner)
		if err != nil {
			return shape{}, err
		}
		deepest = max(deepest, cs.height)
		s.nodes = min(s.nodes+cs.nodes, MaxAliasNodes+1)
	}
	if container {
		s.height = 1 + deepest
	} else {
		s.height = deepest // a document is no level of its own
	}
	if n.Anchor != "" {
		delete(c.open, n)
		c.seen[n] = s
	}
	return s, nil
}

// alias checks an alias where it stands: its value's levels below depth, its nodes against what
// the aliases may repeat.
func (c *checker) alias(n *yaml.Node, depth int) (shape, error) {
	target := n.Alias
	if target == nil {
		return shape{}, nil
	}
	if c.open[target] {
		return shape{}, &ShapeError{Line: n.Line, msg: fmt.Sprintf(
			"line %d, column %d: alias *%s stands for a value that holds it, which would never end (allowed: aliases of values that end before the alias)",
			n.Line, n.Column, n.Value)}
	}
	s, ok := c.seen[target]
	if !ok { // a tree checked from below its anchors: walk the anchored value on its own
		var err error
		if s, err = c.walk(target, 0); err != nil {
			return shape{}, err
		}
	}
	if depth+s.height > MaxDepth {
		return shape{}, &ShapeError{Line: n.Line, msg: fmt.Sprintf(
			"line %d, column %d: alias *%s nests mappings and lists deeper than %d levels here (allowed at most %d)",
			n.Line, n.Column, n.Value, MaxDepth, MaxDepth)}
	}
	c.repeated = min(c.repeated+s.nodes, MaxAliasNodes+1)
	if c.repeated > MaxAliasNodes {
		return shape{}, &ShapeError{Line: n.Line, msg: fmt.Sprintf(
			"line %d, column %d: the aliases up to *%s repeat more than %d nodes (allowed at most %d in all, each alias counting the nodes of the value it stands for)",
			n.Line, n.Column, n.Value, MaxAliasNodes, MaxAliasNodes)}
	}
	return s, nil
}

// valueDepth is how deeply mappings and lists (and structs and pointers, which may hold them)
// nest in v, 0 for a scalar, counted up to limit+1 only: a deep or cyclic value costs no more
// than limit levels of it.
func valueDepth(v reflect.Value, limit int) int {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return valueDepth(v.Elem(), limit)
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Array, reflect.Struct:
	default:
		return 0
	}
	if limit <= 0 {
		return 1
	}
	deepest := 0
	deeper := func(c reflect.Value) bool {
		deepest = max(deepest, valueDepth(c, limit-1))
		return deepest >= limit
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		deeper(v.Elem())
	case reflect.Map:
		for it := v.MapRange(); it.Next() && !deeper(it.Value()); {
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len() && !deeper(v.Index(i)); i++ {
		}
	case reflect.Struct:
		for i := 0; i < v.NumField() && !deeper(v.Field(i)); i++ {
		}
	}
	return 1 + deepest
}
