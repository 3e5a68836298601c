//go:build windows

package trainer

import "golang.org/x/sys/windows"

// diskFree is the space, in bytes, that this process's user may still write on the volume of
// dir (GetDiskFreeSpaceEx's figure for the caller, which honours quotas); ok is false when the
// call fails.
func diskFree(dir string) (free int64, ok bool) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, false
	}
	var avail, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &totalFree); err != nil {
		return 0, false
	}
	return int64(min(avail, 1<<62)), true
}
