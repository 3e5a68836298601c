package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryDocs checks the repository's own README.md, ARCHITECTURE.md and docs/**/*.md.
func TestRepositoryDocs(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v under %s", files, root)
	}
	broken, err := CheckRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// TestCheckReportsBroken feeds a page with one of each kind of reference, broken and not, to a
// small repository and expects exactly the broken ones, with their lines.
func TestCheckReportsBroken(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"go.mod", "configs/quickstart.yaml", "docs/study/report.md", "scripts/gpu-check.sh"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One line per element; the comments give the line numbers the checker must report.
	page := strings.Join([]string{
		"# A page", // 1
		"[the study](study/report.md#result) and [missing](missing.md).",               // 2
		"![figure](study/plots/final.png) [web](https://example.com) [here](#a-page)",  // 3
		"Run `configs/quickstart.yaml`, not `configs/quickstrat.yaml`.",                // 4
		"Placeholders: `configs/envs/NAME.yaml`, `envs/<name>`, `scripts/*.sh`.",       // 5
		"Not checked: `runs/quickstart/`, `/usr/local/cuda`, `go test ./...`, `grpo`.", // 6
		"```", // 7
		"cat docs/nothere.md [x](nothere.md) `configs/nothere.yaml`", // 8
		"```",                                   // 9
		"A span over two lines: `graftrl bench", // 10
		"--json`, then `scripts/gone.sh`, `scripts/gpu-check.sh:12` and [ref][r].", // 11
		"",                          // 12
		"[r]: ../nothere/README.md", // 13
		"A lone ` opens no span across a blank line.", // 14
		"",                                       // 15
		"So `scripts/missing.sh` is still read.", // 16
	}, "\n")
	got := Check(root, "docs/page.md", []byte(page))
	want := []Broken{
		{"docs/page.md", 2, "link", "missing.md", ""},
		{"docs/page.md", 3, "link", "study/plots/final.png", ""},
		{"docs/page.md", 4, "path", "configs/quickstrat.yaml", ""},
		{"docs/page.md", 11, "path", "scripts/gone.sh", ""},
		{"docs/page.md", 13, "link", "../nothere/README.md", ""},
		{"docs/page.md", 16, "path", "scripts/missing.sh", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d broken references, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("broken[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if s := got[0].String(); s != `docs/page.md:2: link "missing.md": no such file or folder` {
		t.Errorf("String() = %s", s)
	}
}

// TestCheckGoReportsStalePointers feeds a Go file with pointers to sections of pages, stale and
// not, to a small repository and expects exactly the stale ones, with their lines and what is
// missing (on one line, sections before anchors).
func TestCheckGoReportsStalePointers(t *testing.T) {
	root := t.TempDir()
	pages := map[string]string{
		"go.mod":              "module x\n",
		"README.md":           "# x\n\n## Set-up\n\n```\n## Exit statuses\n```\n",
		"docs/reliability.md": "# Reliability\n\n## Exit statuses\n",
		"docs/backends.md":    "# Backends\n\n## XLA on a GPU: scripts/gpu-check.sh\n",
		"configs/README.md":   "# Keys\n\n## `sft`\n\n## Sweeps ##\n",
	}
	for f, text := range pages {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One line per element; the comments give the line numbers the checker must report.
	src := strings.Join([]string{
		"package x", // 1
		"// Exit statuses (README, Exit statuses).",                                // 2: a heading moved to docs/ (the README's is in a code block)
		"// Exit statuses (docs/reliability.md#exit-statuses).",                    // 3
		`const hint = "install it (see README, Backends), or use --backend go"`,    // 4: no such heading
		`const ok = "see docs/backends.md, XLA on a GPU: scripts/gpu-check.sh"`,    // 5
		"// See README, set-up. Then configs/README.md (section Sweeps).",          // 6
		"// Keys: configs/README.md, sft; configs/README.md, section Sweeps.",      // 7
		"// docs/reliability.md#exit-codes and docs/gone.md, Intro.",               // 8: no such anchor, no such page
		"// Writes audit.json, audit.md, table.csv (not pages of the repository).", // 9
		"// The forms: README, section X; docs/page.md#anchor, FILE.md#heading.",   // 10: a placeholder; docs/page.md is no page
		"// docs/backends.md#xla-on-a-gpu-scriptsgpu-checksh",                      // 11
		`// docs/reliability.md (section "Exit statuses"); README, "Exit codes".`,  // 12: quoted; no such heading
	}, "\n")
	got := CheckGo(root, "cmd/x/main.go", []byte(src))
	want := []Broken{
		{"cmd/x/main.go", 2, "section", "README, Exit statuses", `no heading "Exit statuses" in README.md`},
		{"cmd/x/main.go", 4, "section", "README, Backends", `no heading "Backends" in README.md`},
		{"cmd/x/main.go", 8, "section", "docs/gone.md, Intro", "no such file docs/gone.md"},
		{"cmd/x/main.go", 8, "anchor", "docs/reliability.md#exit-codes", `no heading with the anchor "exit-codes" in docs/reliability.md`},
		{"cmd/x/main.go", 10, "anchor", "docs/page.md#anchor", "no such file docs/page.md"},
		{"cmd/x/main.go", 12, "section", `README, "Exit codes"`, `no heading "Exit codes" in README.md`},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d stale pointers, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stale[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if s := got[0].String(); s != `cmd/x/main.go:2: section "README, Exit statuses": no heading "Exit statuses" in README.md` {
		t.Errorf("String() = %s", s)
	}
}

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := FindRoot(sub); err != nil || got != root {
		t.Errorf("FindRoot(%s) = %q, %v; want %q", sub, got, err, root)
	}
}
