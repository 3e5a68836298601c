// Package gomlxfields is graftrl's one way of reading the unexported fields of GoMLX v0.26.0
// that its executors (internal/gobackend) and gradients (internal/gradients) need: the fields of
// the Go backend's nodes, the axes a node's op was built with. GoMLX does not export them, so
// they are found by name and type with reflection; nothing here panics when a field is missing
// or has another type, it returns an error naming the field, so that a GoMLX upgrade that moves
// them is reported (the tests of both packages fail) instead of crashing or computing something
// else. gomlx is pinned at v0.26.0 for this reason.
//
// Two forms: Offset finds a field of a static struct type once, for code that reads it on every
// op it runs (a pointer add per read); Ints and Int follow a path of field names through
// pointers and interfaces, for fields of types GoMLX does not name outside its package.
package gomlxfields

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Offset returns the byte offset of the field name of struct type S, after checking that it has
// type F.
func Offset[S, F any](name string) (uintptr, error) {
	s := reflect.TypeFor[S]()
	if s.Kind() != reflect.Struct {
		return 0, fmt.Errorf("gomlxfields: %s is not a struct", s)
	}
	f, ok := s.FieldByName(name)
	switch {
	case !ok:
		return 0, fmt.Errorf("gomlxfields: %s has no field %s (graftrl reads gomlx v0.26.0's fields)", s, name)
	case f.Type != reflect.TypeFor[F]():
		return 0, fmt.Errorf("gomlxfields: %s.%s is a %s, want %s (graftrl reads gomlx v0.26.0's fields)", s, name, f.Type, reflect.TypeFor[F]())
	case len(f.Index) != 1:
		return 0, fmt.Errorf("gomlxfields: %s.%s is a promoted field", s, name)
	}
	return f.Offset, nil
}

// At returns a pointer to the field of *s at byte offset off, which Offset[S, F] returned.
func At[F, S any](s *S, off uintptr) *F {
	return (*F)(unsafe.Add(unsafe.Pointer(s), off))
}

// Value follows path from v: each name is a field of the struct reached so far, after following
// pointers and interfaces to it. It returns the last field's value, or an error naming the step
// that is missing or nil.
func Value(v any, path ...string) (reflect.Value, error) {
	cur := reflect.ValueOf(v)
	at := fmt.Sprintf("%T", v)
	for _, name := range path {
		for cur.IsValid() && (cur.Kind() == reflect.Pointer || cur.Kind() == reflect.Interface) {
			if cur.IsNil() {
				return reflect.Value{}, fmt.Errorf("gomlxfields: %s is nil", at)
			}
			cur = cur.Elem()
		}
		if !cur.IsValid() || cur.Kind() != reflect.Struct {
			return reflect.Value{}, fmt.Errorf("gomlxfields: %s is not a struct", at)
		}
		next := cur.FieldByName(name)
		if !next.IsValid() {
			return reflect.Value{}, fmt.Errorf("gomlxfields: %s (%s) has no field %s (graftrl reads gomlx v0.26.0's fields)", at, cur.Type(), name)
		}
		cur, at = next, at+"."+name
	}
	return cur, nil
}

// Ints copies the []int at the end of path from v (see Value).
func Ints(v any, path ...string) ([]int, error) {
	f, err := Value(v, path...)
	if err != nil {
		return nil, err
	}
	if f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.Int {
		return nil, fmt.Errorf("gomlxfields: %T.%v is a %s, want []int", v, path, f.Type())
	}
	out := make([]int, f.Len())
	for i := range out {
		out[i] = int(f.Index(i).Int())
	}
	return out, nil
}

// Int reads the int at the end of path from v (see Value).
func Int(v any, path ...string) (int, error) {
	f, err := Value(v, path...)
	if err != nil {
		return 0, err
	}
	if f.Kind() != reflect.Int {
		return 0, fmt.Errorf("gomlxfields: %T.%v is a %s, want int", v, path, f.Type())
	}
	return int(f.Int()), nil
}
