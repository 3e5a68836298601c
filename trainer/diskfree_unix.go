//go:build linux || darwin || freebsd || dragonfly

package trainer

import "syscall"

// diskFree is the space, in bytes, that an unprivileged process may still write on the file
// system of dir (statfs: available blocks × block size). These are the systems whose syscall
// package has Statfs with these fields; ok is false when statfs fails.
func diskFree(dir string) (free int64, ok bool) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return 0, false
	}
	return int64(fs.Bavail) * int64(fs.Bsize), true
}
