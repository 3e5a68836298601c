// Package limits bounds what graftrl reads from files: configs, saved batch files (their
// decompressed size included) and checkpoints. A file over its limit is refused with an error
// that names the file, the limit and the environment variable that raises it, before the file is
// read into memory.
package limits

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Kind is a kind of input with its own limit.
type Kind int

// The kinds of input, each with a default limit and an environment variable that changes it.
const (
	// Config is a YAML config file (a training or a sweep config): 1 MiB, GRAFTRL_MAX_CONFIG_BYTES.
	Config Kind = iota
	// Batch is a saved rollout batch, counted decompressed: 256 MiB, GRAFTRL_MAX_BATCH_BYTES.
	Batch
	// Checkpoint is a checkpoint or warm start, all its files together: 4 GiB,
	// GRAFTRL_MAX_CHECKPOINT_BYTES.
	Checkpoint
)

func (k Kind) spec() (what, env string, def int64) {
	switch k {
	case Config:
		return "config", "GRAFTRL_MAX_CONFIG_BYTES", 1 << 20
	case Batch:
		return "batch file", "GRAFTRL_MAX_BATCH_BYTES", 256 << 20
	default:
		return "checkpoint", "GRAFTRL_MAX_CHECKPOINT_BYTES", 4 << 30
	}
}

// Env is the environment variable that sets the kind's limit.
func (k Kind) Env() string {
	_, env, _ := k.spec()
	return env
}

// Default is the kind's limit in bytes when its environment variable is not set.
func (k Kind) Default() int64 {
	_, _, def := k.spec()
	return def
}

// ErrTooLarge is wrapped by every error about an input over its limit.
var ErrTooLarge = errors.New("over the size limit")

// Bytes is the kind's limit: its environment variable when set (bytes, or a number with KiB,
// MiB, GiB; KB, MB, GB are the same powers of two), else the default. A malformed value is an
// error naming the variable.
func (k Kind) Bytes() (int64, error) {
	what, env, def := k.spec()
	s := strings.TrimSpace(os.Getenv(env))
	if s == "" {
		return def, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %v (the %s size limit, e.g. %s=512MiB)", env, s, err, what, env)
	}
	return n, nil
}

// ParseSize reads a size: a positive number of bytes, optionally followed by KiB, MiB or GiB
// (KB, MB, GB and K, M, G mean the same).
func ParseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range []struct {
		suffixes []string
		mult     int64
	}{{[]string{"GiB", "GB", "G"}, 1 << 30}, {[]string{"MiB", "MB", "M"}, 1 << 20}, {[]string{"KiB", "KB", "K"}, 1 << 10}, {[]string{"B"}, 1}} {
		found := false
		for _, suf := range u.suffixes {
			if rest, ok := strings.CutSuffix(num, suf); ok {
				num, mult, found = strings.TrimSpace(rest), u.mult, true
				break
			}
		}
		if found {
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > (1<<62)/mult {
		return 0, errors.New("not a positive size (bytes, or a whole number with KiB, MiB or GiB)")
	}
	return n * mult, nil
}

// TooLarge is the error for an input of this kind over limit bytes: it names the input, the
// limit and how to raise it, and wraps ErrTooLarge.
func (k Kind) TooLarge(name string, limit int64, decompressed bool) error {
	what, env, _ := k.spec()
	size := ""
	if decompressed {
		size = " decompressed"
	}
	return &tooLarge{fmt.Sprintf("%s is larger than %s%s, the limit for a %s (raise it with %s=SIZE, e.g. %s=%s)",
		name, human(limit), size, what, env, env, human(limit*4))}
}

// tooLarge is TooLarge's error.
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string { return e.msg }
func (e *tooLarge) Unwrap() error { return ErrTooLarge }

// ReadFile reads the file at path whole, refusing it without reading it when it is larger than
// the kind's limit.
func (k Kind) ReadFile(path string) ([]byte, error) {
	limit, err := k.Bytes()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, k.TooLarge(path, limit, false)
	}
	// A file that grows while read, or one that is not regular, is still cut at the limit.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, k.TooLarge(path, limit, false)
	}
	return data, nil
}

func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
