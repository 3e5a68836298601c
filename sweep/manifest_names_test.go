package sweep

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listOutside lists every path under root that is not inside the sweep directory sd.
func listOutside(t *testing.T, root, sd string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == sd {
			return filepath.SkipDir
		}
		out = append(out, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A manifest.json whose sweep name, run names or config paths lead outside the sweep directory
// is refused by LoadManifest, naming the field and its value, and RunOne (what each Slurm array
// task runs) writes, locks and logs nothing outside the sweep directory.
func TestLoadManifestRefusesEscapingNames(t *testing.T) {
	root := t.TempDir()
	c := writeSweep(t, root, "name: esc\nbase: tiny.yaml\ngrid:\n  seed: [1, 2]\nset: [env_steps=20]\n")
	if _, err := c.Prepare(); err != nil {
		t.Fatal(err)
	}
	sd := c.Dir()
	path := filepath.Join(sd, ManifestFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		edit func(m map[string]any, run map[string]any)
		want string
	}{
		{"run name up three folders", func(_, r map[string]any) { r["name"] = "../../../x" }, `runs[0].name: "../../../x" is not allowed`},
		{"run name with a slash", func(_, r map[string]any) { r["name"] = "a/b" }, `runs[0].name: "a/b" is not allowed`},
		{"absolute run name", func(_, r map[string]any) { r["name"] = filepath.Join(root, "abs") }, `runs[0].name: "` + filepath.Join(root, "abs") + `" is not allowed`},
		{"run name ..", func(_, r map[string]any) { r["name"] = ".." }, `runs[0].name: ".." is not allowed`},
		{"config outside", func(_, r map[string]any) { r["config"] = "../../tiny.yaml" }, `runs[0].config: "../../tiny.yaml" is not allowed (run maze-grpo-s1's config is "configs/maze-grpo-s1.yaml"`},
		{"absolute config", func(_, r map[string]any) { r["config"] = filepath.Join(root, "tiny.yaml") }, `runs[0].config: "` + filepath.Join(root, "tiny.yaml") + `" is not allowed`},
		{"config of another run", func(_, r map[string]any) { r["config"] = "configs/maze-grpo-s2.yaml" }, `runs[0].config: "configs/maze-grpo-s2.yaml" is not allowed`},
		{"two runs of one name", func(m, _ map[string]any) {
			runs := m["runs"].([]any)
			runs[1].(map[string]any)["name"] = "maze-grpo-s1"
			runs[1].(map[string]any)["config"] = "configs/maze-grpo-s1.yaml"
		}, `runs[1].name: "maze-grpo-s1" is also the name of runs[0]`},
		{"sweep name", func(m, _ map[string]any) { m["name"] = "../x" }, `name: "../x" is not allowed`},
	} {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		tc.edit(m, m["runs"].([]any)[0].(map[string]any))
		data, _ := json.Marshal(m)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		before := listOutside(t, root, sd)
		_, err := LoadManifest(sd)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: LoadManifest: %v; want an error naming %s and %q", tc.what, err, path, tc.want)
		}
		l := fakeLauncher(t)
		for i := range 2 {
			if err := RunOne(context.Background(), sd, i, &l); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: RunOne(%d): %v; want %q", tc.what, i, err, tc.want)
			}
		}
		if after := listOutside(t, root, sd); !slices.Equal(before, after) {
			t.Errorf("%s: files outside the sweep directory changed:\nbefore %q\nafter  %q", tc.what, before, after)
		}
	}
	// The manifest as the sweep wrote it loads.
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadManifest(sd); err != nil {
		t.Errorf("the sweep's own manifest: %v", err)
	}
}
