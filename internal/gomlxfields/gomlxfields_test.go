package gomlxfields

import (
	"strings"
	"testing"
)

type inner struct {
	axes []int
	size int
}

type holder interface{ unused() }

func (*inner) unused() {}

type outer struct {
	name  string
	in    holder
	count int
}

// TestOffsetAndAt reads and writes an unexported field through its offset, and refuses a missing
// field and one of another type with an error naming it.
func TestOffsetAndAt(t *testing.T) {
	off, err := Offset[outer, int]("count")
	if err != nil {
		t.Fatal(err)
	}
	o := &outer{count: 7}
	if p := At[int](o, off); *p != 7 {
		t.Fatalf("read %d, want 7", *p)
	}
	*At[int](o, off) = 9
	if o.count != 9 {
		t.Fatalf("wrote %d, want 9", o.count)
	}
	if _, err := Offset[outer, int]("missing"); err == nil || !strings.Contains(err.Error(), "no field missing") {
		t.Fatalf("missing field: %v", err)
	}
	if _, err := Offset[outer, string]("count"); err == nil || !strings.Contains(err.Error(), "count is a int, want string") {
		t.Fatalf("wrong type: %v", err)
	}
}

// TestPath follows fields through pointers and interfaces, and reports a nil or missing step, or a
// field of another type, instead of panicking.
func TestPath(t *testing.T) {
	o := &outer{in: &inner{axes: []int{2, 0, 1}, size: 5}}
	if got, err := Ints(o, "in", "axes"); err != nil || len(got) != 3 || got[0] != 2 || got[2] != 1 {
		t.Fatalf("Ints: %v %v", got, err)
	}
	if got, err := Int(o, "in", "size"); err != nil || got != 5 {
		t.Fatalf("Int: %v %v", got, err)
	}
	if got, err := Ints([]int{4}); err != nil || len(got) != 1 || got[0] != 4 {
		t.Fatalf("Ints of a slice itself: %v %v", got, err)
	}
	for _, c := range []struct {
		v    any
		path []string
		want string
	}{
		{&outer{}, []string{"in", "axes"}, "is nil"},
		{o, []string{"in", "nope"}, "has no field nope"},
		{o, []string{"in", "size"}, "want []int"},
		{o, []string{"name", "x"}, "is not a struct"},
	} {
		if _, err := Ints(c.v, c.path...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Ints(%v): %v, want an error with %q", c.path, err, c.want)
		}
	}
}
