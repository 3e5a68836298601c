// Package limits bounds what graftrl reads from files: configs, saved batch files (their
// decompressed size included), checkpoints, the metrics files a comparison reads back and
// pretrained model files (GGUF), whose tensors are read on demand. A file
// over its limit is refused with an error that names the file, the limit and the environment
// variable that raises it, before the file is read into memory; where the file's size is known,
// the value of the variable the error suggests admits the file.
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
	// Metrics is a run's metrics.jsonl (and summary.json) as compare and sweep read them back:
	// 1 GiB, GRAFTRL_MAX_METRICS_BYTES. They are streamed, not held whole, but a file that never
	// ends (a link to /dev/urandom, a device) must still stop somewhere.
	Metrics
	// Model is a pretrained model file (GGUF): 8 GiB, GRAFTRL_MAX_MODEL_BYTES. Its tensors are
	// read one at a time, so the limit bounds what a loader may go on to hold, and every length
	// inside the file is checked against the file's size.
	Model
)

func (k Kind) spec() (what, env string, def int64) {
	switch k {
	case Config:
		return "config", "GRAFTRL_MAX_CONFIG_BYTES", 1 << 20
	case Batch:
		return "batch file", "GRAFTRL_MAX_BATCH_BYTES", 256 << 20
	case Metrics:
		return "metrics file", "GRAFTRL_MAX_METRICS_BYTES", 1 << 30
	case Model:
		return "model file", "GRAFTRL_MAX_MODEL_BYTES", 8 << 30
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
	if err != nil || n < 1 || n > maxSize/mult {
		return 0, errors.New("not a positive size (bytes, or a whole number with KiB, MiB or GiB)")
	}
	return n * mult, nil
}

// TooLarge is the error for an input of this kind over limit bytes whose size is not known
// (a stream cut at the limit): it names the input, the limit and how to raise it, and wraps
// ErrTooLarge. The value it suggests is the next power of two above the limit, which a size
// known to be over the limit may still exceed; TooLargeSize suggests one that admits the input.
func (k Kind) TooLarge(name string, limit int64, decompressed bool) error {
	what, env, _ := k.spec()
	size := ""
	if decompressed {
		size = " decompressed"
	}
	return &tooLarge{fmt.Sprintf("%s is larger than %s%s, the limit for a %s (raise it with %s=SIZE, e.g. %s)",
		name, human(limit), size, what, env, k.suggest(limit+1))}
}

// TooLargeSize is the error for an input of this kind whose size, over limit, is known: it names
// the input, its size, the limit and a setting of the environment variable that admits it (the
// size rounded up to a power of two, written as ParseSize reads it), and wraps ErrTooLarge.
func (k Kind) TooLargeSize(name string, size, limit int64, decompressed bool) error {
	what, env, _ := k.spec()
	d := ""
	if decompressed {
		d = " decompressed"
	}
	return &tooLarge{fmt.Sprintf("%s is %s%s, over %s, the limit for a %s (raise it with %s=SIZE, e.g. %s)",
		name, human(size), d, human(limit), what, env, k.suggest(max(size, limit+1)))}
}

// suggest is a setting of the kind's variable that admits at least n bytes: the smallest power
// of two not below n, so that the example is a round number, and one that ParseSize accepts.
func (k Kind) suggest(n int64) string {
	_, env, _ := k.spec()
	p := int64(1)
	for p < n && p < maxSize {
		p <<= 1
	}
	return env + "=" + FormatSize(p)
}

// maxSize is the largest size ParseSize reads (and so the largest limit that can be set).
const maxSize = 1 << 62

// FormatSize writes n bytes as ParseSize reads them back: in GiB, MiB or KiB when n is a whole
// number of them, else in bytes (a bare number).
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return strconv.FormatInt(n, 10)
}

// tooLarge is TooLarge's error.
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string { return e.msg }
func (e *tooLarge) Unwrap() error { return ErrTooLarge }

// ReadFile reads the file at path whole, refusing it without reading it when it is larger than
// the kind's limit; a file that grows while read, or one that is not regular, is still cut at the
// limit (Open).
func (k Kind) ReadFile(path string) ([]byte, error) {
	r, err := k.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Open opens the file at path for streaming, refusing it at once when it is a regular file
// larger than the kind's limit. The reader returned fails with the kind's TooLarge error as soon
// as more than the limit has been read, so a file that is not regular (a device, a pipe) or that
// grows while read stops there too.
func (k Kind) Open(path string) (io.ReadCloser, error) {
	limit, err := k.Bytes()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		f.Close()
		return nil, k.TooLargeSize(path, fi.Size(), limit, false)
	}
	return &bounded{f: f, left: limit, tooLarge: func() error { return k.TooLarge(path, limit, false) }}, nil
}

// bounded is Open's reader: the file, and how many more bytes it may give.
type bounded struct {
	f        *os.File
	left     int64
	tooLarge func() error
}

// Read reads from the file; once the limit has been read, a further byte is an error.
func (b *bounded) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a file that ends exactly at the limit from one that goes on.
		var one [1]byte
		n, err := b.f.Read(one[:])
		if n > 0 {
			return 0, b.tooLarge()
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.f.Read(p)
	b.left -= int64(n)
	return n, err
}

// Close closes the file.
func (b *bounded) Close() error { return b.f.Close() }

// human writes n bytes for a message: as FormatSize does, a bare number saying "bytes".
func human(n int64) string {
	s := FormatSize(n)
	if n < 1<<10 || n%(1<<10) != 0 {
		s += " bytes"
	}
	return s
}
