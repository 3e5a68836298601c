package bench

// maxrssBytes converts getrusage's ru_maxrss on the system goos to bytes. The unit is not
// POSIX's to fix: Linux and the BSDs count kilobytes, macOS (and iOS) bytes; Solaris, illumos
// and AIX do not keep the figure reliably (illumos fills only the times), so ok is false there
// and for any other system, and the peak is reported as unknown (0) rather than guessed.
func maxrssBytes(goos string, maxrss int64) (bytes int64, ok bool) {
	switch goos {
	case "linux", "android", "freebsd", "netbsd", "openbsd", "dragonfly":
		return maxrss << 10, true
	case "darwin", "ios":
		return maxrss, true
	}
	return 0, false
}
