package trainer

import (
	"errors"
	"os"
	"path/filepath"
)

// mkdirAllMade is os.MkdirAll that returns the directories it created, deepest first, so that
// work refused or failed at set-up can remove exactly those (removeMade) and never a directory
// that was there before.
func mkdirAllMade(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// A directory another process created in the meantime is not ours to remove; os.Remove
	// of a directory that is not empty fails, so removeMade leaves such a one in place anyway.
	return missing, nil
}

// removeMade removes the directories mkdirAllMade created, deepest first, each only while it is
// empty: what another process put there since keeps its directory.
func removeMade(made []string) {
	for _, d := range made {
		if os.Remove(d) != nil {
			return
		}
	}
}
