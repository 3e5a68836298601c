package modelfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// SmolLM2File is the name scripts/install-smollm2.sh gives SmolLM2-135M-Instruct's GGUF file.
const SmolLM2File = "SmolLM2-135M-Instruct.Q4_1.gguf"

// InstalledPath is where scripts/install-smollm2.sh keeps the model file name:
// ${XDG_CACHE_HOME:-~/.cache}/graftrl/models/name, as the script spells it on every system.
func InstalledPath(name string) (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no cache folder for %s: %w (set XDG_CACHE_HOME)", name, err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "graftrl", "models", name), nil
}

// InstalledSmolLM2 returns the path of SmolLM2-135M-Instruct's file as scripts/install-smollm2.sh
// installs it, or an error naming that path and the script when it is not there.
func InstalledSmolLM2() (string, error) {
	path, err := InstalledPath(SmolLM2File)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("SmolLM2-135M-Instruct is not installed at %s (run scripts/install-smollm2.sh): %w", path, err)
	}
	return path, nil
}
