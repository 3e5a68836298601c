//go:build !(linux || darwin || freebsd || dragonfly || windows)

package trainer

// diskFree is unknown on the other systems (NetBSD and Solaris have statvfs, OpenBSD statfs
// with other field names, none of them in a form graftrl reads): ok is false, and checkWritable
// then relies on its probe write alone.
func diskFree(dir string) (free int64, ok bool) { return 0, false }
