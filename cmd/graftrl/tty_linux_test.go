//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the master, which the test reads, and the slave, the
// terminal of the process under test.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open the slave: %v", err)
	}
	return m, s
}

// On a terminal train shows a progress bar, and every periodic evaluation's line is printed
// above it: each "iter N eval" line appears, and the bar is drawn again below it.
func TestTerminalShowsEvalLines(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeTiny(t, dir, "")
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(bin, "train", "--config", cfg, "--iterations", "4")
	cmd.Dir, cmd.Stderr = dir, slave
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	read := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(master) // ends with EIO once the process has closed the terminal
		read <- data
	}()
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	var out string
	select {
	case data := <-read:
		out = string(data)
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	if err != nil {
		t.Fatalf("train on a terminal: %v\n%s", err, out)
	}
	if !strings.Contains(out, "\r") || !strings.Contains(out, "done in") {
		t.Fatalf("no progress bar or no closing line on the terminal:\n%q", out)
	}
	for i := 1; i <= 4; i++ {
		at := strings.Index(out, fmt.Sprintf("iter %d eval: greedy success", i))
		if at < 0 {
			t.Errorf("the terminal output lacks the evaluation of iteration %d:\n%q", i, out)
			continue
		}
		if bar := fmt.Sprintf("iter %d success", i); i < 4 && !strings.Contains(out[at:], bar) {
			t.Errorf("the progress bar (%q) is not drawn again below the evaluation of iteration %d:\n%q", bar, i, out)
		}
	}
}
