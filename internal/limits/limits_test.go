package limits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "2KiB": 2048, "3MB": 3 << 20, "1GiB": 1 << 30, "5 G": 5 << 30, "7B": 7} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5MiB", "lots", "9999999999GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

// A file over its kind's limit is refused, naming the file and the variable that raises it.
func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Config.ReadFile(path)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), Config.Env()) {
		t.Fatalf("2 MiB config: %v", err)
	}
	t.Setenv(Config.Env(), "4MiB")
	if data, err := Config.ReadFile(path); err != nil || len(data) != 2<<20 {
		t.Fatalf("with the limit raised: %d bytes, %v", len(data), err)
	}
}

// FormatSize writes what ParseSize reads back, in the largest unit that divides the size.
func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{1: "1", 1000: "1000", 1024: "1KiB", 1536: "1536", 3 << 20: "3MiB", 1<<30 + 1<<20: "1025MiB", 1 << 62: "4294967296GiB"} {
		got := FormatSize(n)
		if back, err := ParseSize(got); got != want || err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q, read back as %d, %v; want %q", n, got, back, err, want)
		}
	}
}

var hint = regexp.MustCompile(`e\.g\. ` + Config.Env() + `=([^)]*)\)`)

// The message of a file over its limit suggests a setting of the variable, and that setting
// admits the file, whatever the limit and the size: the default limit and a file many times it,
// a limit no unit divides, a file one byte over.
func TestTooLargeHintAdmits(t *testing.T) {
	for _, tc := range []struct {
		limit string
		size  int64
	}{
		{"", 5 << 20},
		{"", 1<<20 + 1},
		{"1000", 3000},
		{"1000", 1001},
		{"3KiB", 10 << 10},
	} {
		path := filepath.Join(t.TempDir(), "big.yaml")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, tc.size); err != nil {
			t.Fatal(err)
		}
		t.Setenv(Config.Env(), tc.limit)
		_, err := Config.ReadFile(path)
		m := hint.FindStringSubmatch(fmt.Sprint(err))
		if !errors.Is(err, ErrTooLarge) || m == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("limit %q, %d bytes: error %v, want a suggested limit", tc.limit, tc.size, err)
			continue
		}
		t.Setenv(Config.Env(), m[1])
		if data, err := Config.ReadFile(path); err != nil || int64(len(data)) != tc.size {
			t.Errorf("limit %q, %d bytes: following %s=%s: %v", tc.limit, tc.size, Config.Env(), m[1], err)
		}
	}
	// A stream of unknown size is suggested a limit above the present one, in a form the
	// variable takes.
	err := Batch.TooLarge("stream", 1000, true)
	m := regexp.MustCompile(`e\.g\. ` + Batch.Env() + `=([^)]*)\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no suggestion in %q", err)
	}
	if n, perr := ParseSize(m[1]); perr != nil || n <= 1000 {
		t.Errorf("%q suggests %q: %d, %v", err, m[1], n, perr)
	}
}
