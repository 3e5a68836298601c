package pretrained

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/internal/limits"
	"github.com/graftrl/graftrl/modelfile"
)

// MemoryMargin is what a loader needs beyond its float32 weights: the Go runtime, the
// tokenizer, the file's raw tensor being dequantised, activations and a KV cache of a few
// thousand tokens of a small model.
const MemoryMargin = 256 << 20

// Float32Bytes is the size of c's weights as float32 (the output layer tied to the token
// embedding, counted once). It is computed in float64, so that a config with absurd sizes gives
// a huge size rather than an overflowed one.
func (c Config) Float32Bytes() float64 {
	d, f := float64(c.DModel), float64(c.Hidden)
	q, k := float64(c.Heads)*float64(c.HeadDim), float64(c.KVHeads)*float64(c.HeadDim)
	block := 2*d + d*(q+2*k) + q*d + 3*d*f
	return 4 * (float64(c.Vocab)*d + float64(c.Layers)*block + d)
}

// GGUFFloat32Bytes is the size of every tensor of g dequantised to float32, from its tensor
// directory, without reading a tensor. A tensor of a type that is not dequantised (Q5_K, …) is
// refused here, naming it and its type, so that a load fails before it starts.
func GGUFFloat32Bytes(g *modelfile.GGUF) (float64, error) {
	var n float64
	for _, t := range g.Tensors {
		// Dequantize checks the type before the lengths, so an empty call asks whether the
		// type is dequantised at all.
		if err := modelfile.Dequantize(t.Type, nil, nil); err != nil {
			return 0, fmt.Errorf("tensor %s is %s, a type that is not dequantised (F32, F16, BF16, Q8_0, Q4_0 and Q4_1 are)", t.Name, t.Type)
		}
		n += 4 * float64(t.Elements())
	}
	return n, nil
}

// CheckMemory refuses to load a model (named name in errors) whose float32 weights take
// weightBytes, held copies times at once (a decoder that repacks its matrices holds two):
// when weightBytes is over limits.Model's limit (GRAFTRL_MAX_MODEL_BYTES, which bounds what a
// loader holds as well as the file), or when copies·weightBytes + MemoryMargin is over the
// memory the kernel says is available (MemAvailable of /proc/meminfo; not checked where that
// file does not exist). Both errors wrap limits.ErrTooLarge.
func CheckMemory(name string, weightBytes float64, copies int) error {
	return checkMemory(name, weightBytes, copies, "/proc/meminfo")
}

func checkMemory(name string, weightBytes float64, copies int, meminfo string) error {
	limit, err := limits.Model.Bytes()
	if err != nil {
		return err
	}
	if weightBytes > float64(limit) {
		size := int64(math.Min(weightBytes, 1<<62))
		return limits.Model.TooLargeSize(name+" as float32 weights", size, limit, false)
	}
	need := float64(copies)*weightBytes + MemoryMargin
	avail, ok := memAvailable(meminfo)
	if ok && need > float64(avail) {
		return &memoryError{fmt.Sprintf("%s needs about %s of memory (%d× its float32 weights of %s, plus %s), more than the %s available (MemAvailable in %s); free memory or use a smaller model",
			name, mib(need), copies, mib(weightBytes), mib(MemoryMargin), mib(float64(avail)), meminfo)}
	}
	return nil
}

// memoryError is CheckMemory's error for a model larger than the memory available.
type memoryError struct{ msg string }

func (e *memoryError) Error() string { return e.msg }
func (e *memoryError) Unwrap() error { return limits.ErrTooLarge }

// MemAvailable is the memory the kernel says is available (MemAvailable of /proc/meminfo), in
// bytes, and whether it could be read (not on systems without that file).
func MemAvailable() (int64, bool) { return memAvailable("/proc/meminfo") }

// memAvailable is MemAvailable of a /proc/meminfo file, in bytes, and whether it was found.
func memAvailable(path string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 || kb > math.MaxInt64>>10 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// mib writes n bytes in MiB (GiB from 10 GiB), for messages.
func mib(n float64) string {
	if n >= 10<<30 {
		return fmt.Sprintf("%.1f GiB", n/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", n/(1<<20))
}
