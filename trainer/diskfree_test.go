package trainer

import (
	"runtime"
	"testing"
)

// diskFree reads the free space of a directory where the system tells it (Linux among them), and
// says when it cannot instead of reporting 0 bytes free.
func TestDiskFree(t *testing.T) {
	free, ok := diskFree(t.TempDir())
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("diskFree: unknown on Linux")
		}
		t.Skipf("no free-space figure on %s", runtime.GOOS)
	}
	if free <= 0 {
		t.Errorf("diskFree = %d bytes", free)
	}
	if _, ok := diskFree("/no/such/directory"); ok {
		t.Error("diskFree of a missing directory: ok")
	}
}
