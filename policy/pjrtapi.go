//go:build cgo && !noxla

package policy

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

// The head of PJRT_Api (pjrt_c_api.h) that every version of the C API keeps in place, so that a
// caller can read the version before it uses anything else: the table's size, its extension
// chain, and PJRT_Api_Version.
typedef struct {
	size_t struct_size;
	void *extension_start;
	size_t version_struct_size;
	void *version_extension_start;
	int major_version;
	int minor_version;
} graftrl_pjrt_api_head;

typedef const graftrl_pjrt_api_head *(*graftrl_get_pjrt_api)(void);

// graftrl_pjrt_api_version opens the plugin, calls its GetPjrtApi and reads the head of the
// table it returns. It returns 0, or 1 when dlopen fails, 2 when GetPjrtApi is missing, 3 when
// it returns NULL; *err holds dlerror's message (free it). The library stays open: go-xla
// opens it next and gets the same handle.
static int graftrl_pjrt_api_version(const char *path, graftrl_pjrt_api_head *out, char **err) {
	*err = NULL;
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		*err = strdup(e ? e : "dlopen failed");
		return 1;
	}
	dlerror();
	graftrl_get_pjrt_api fn = (graftrl_get_pjrt_api)dlsym(h, "GetPjrtApi");
	if (fn == NULL) {
		const char *e = dlerror();
		*err = strdup(e ? e : "no GetPjrtApi");
		return 2;
	}
	const graftrl_pjrt_api_head *api = fn();
	if (api == NULL) {
		return 3;
	}
	*out = *api;
	return 0;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// PJRTAPIMajor is the major version of the PJRT C API that go-xla v0.1.4 is written against
// (its pjrt_c_api.h: 0.83). A plugin of another major version lays out the API table
// differently: calling into it would crash the process.
const PJRTAPIMajor = 0

// PluginAPIVersion loads the plugin at path (a file that passed CheckPluginFile), calls its
// GetPjrtApi and returns the PJRT C API version the plugin reports, without initialising it.
func PluginAPIVersion(path string) (major, minor int, err error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var head C.graftrl_pjrt_api_head
	var cerr *C.char
	rc := C.graftrl_pjrt_api_version(cpath, &head, &cerr)
	if cerr != nil {
		defer C.free(unsafe.Pointer(cerr))
	}
	switch rc {
	case 1:
		return 0, 0, fmt.Errorf("PJRT plugin %s: cannot be loaded: %s (a library it needs may be missing: check with ldd)", path, C.GoString(cerr))
	case 2:
		return 0, 0, fmt.Errorf("PJRT plugin %s: does not export GetPjrtApi: %s", path, C.GoString(cerr))
	case 3:
		return 0, 0, fmt.Errorf("PJRT plugin %s: its GetPjrtApi returned no API table", path)
	}
	return int(head.major_version), int(head.minor_version), nil
}

// checkPlugin checks the plugin file (CheckPluginFile), then that it speaks the PJRT C API
// major version go-xla drives.
func checkPlugin(path string) error {
	if err := CheckPluginFile(path); err != nil {
		return err
	}
	major, minor, err := PluginAPIVersion(path)
	if err != nil {
		return err
	}
	if major != PJRTAPIMajor {
		return fmt.Errorf("PJRT plugin %s: reports PJRT C API %d.%d, incompatible with the %d.x this build drives (go-xla v0.1.4, API 0.83): use a plugin built for PJRT C API %d.x", path, major, minor, PJRTAPIMajor, PJRTAPIMajor)
	}
	return nil
}
