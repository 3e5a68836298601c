// Package doccheck keeps graftrl's documentation from dangling. It reads README.md,
// ARCHITECTURE.md and every docs/**/*.md of the repository and reports, with file and line, each
// relative markdown link whose target does not exist and each repository path named in backticks
// (`configs/quickstart.yaml`) that does not exist. It also reads the Go code (every non-test .go
// file) and reports each pointer to a section of a page, in a comment or a message, whose page
// or heading does not exist (CheckGo). Its test runs the check on the repository, so
// `go test ./...` fails when a page or a section that the code points at moved.
//
// What counts as a path in backticks: one token, without spaces, globs, placeholders (<name>,
// NAME, DIR, …) or ellipses, whose first element is a file or folder at the repository root.
// Generated output (runs/, bin/) is not checked. Fenced code blocks are not read: they hold
// commands with placeholders, not references.
package doccheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Broken is one reference that names a file, or a section of a page, that does not exist.
type Broken struct {
	File   string // the markdown or Go file, relative to the repository root
	Line   int    // 1-based line of the reference
	Kind   string // "link" or "path" (markdown), "section" or "anchor" (Go code)
	Target string // the reference as written
	Why    string // what does not exist; empty for a link or path: the file or folder
}

// String formats b as "file:line: kind "target": why", why "no such file or folder" for a link
// or a path.
func (b Broken) String() string {
	why := b.Why
	if why == "" {
		why = "no such file or folder"
	}
	return fmt.Sprintf("%s:%d: %s %q: %s", b.File, b.Line, b.Kind, b.Target, why)
}

// generated are root folders of generated output, which a fresh clone does not have.
var generated = map[string]bool{"runs": true, "bin": true}

// placeholders are the upper-case words the documentation writes in place of a name.
var placeholders = map[string]bool{
	"NAME": true, "DIR": true, "FILE": true, "PATH": true, "PLUGIN": true, "KEY": true,
	"VALUE": true, "OLD": true, "ID": true, "N": true, "K": true, "S": true, "X": true,
}

var (
	linkRE  = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refRE   = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	upperRE = regexp.MustCompile(`[A-Z]+`)
	lineRE  = regexp.MustCompile(`:\d+(-\d+)?$`)
	schemes = []string{"http:", "https:", "mailto:"}
)

// FindRoot returns the repository root: dir or the nearest folder above it that holds go.mod.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("doccheck: no go.mod in %s or any folder above it", dir)
		}
	}
}

// Files returns the pages the check reads, relative to root and sorted: README.md,
// ARCHITECTURE.md and every .md file under docs/.
func Files(root string) ([]string, error) {
	files := []string{"README.md", "ARCHITECTURE.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sort.Strings(files[2:])
	return files, nil
}

// CheckRepo runs Check on every file Files lists and CheckGo on every file GoFiles lists.
func CheckRepo(root string) ([]Broken, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	goFiles, err := GoFiles(root)
	if err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	var all []Broken
	for _, f := range append(files, goFiles...) {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, fmt.Errorf("doccheck: %w", err)
		}
		if strings.HasSuffix(f, ".go") {
			all = append(all, CheckGo(root, f, text)...)
		} else {
			all = append(all, Check(root, f, text)...)
		}
	}
	return all, nil
}

// Check returns the broken references of one markdown file, file being its path relative to
// root (links resolve from its folder; paths in backticks from root).
func Check(root, file string, text []byte) []Broken {
	prose, spans := split(string(text))
	var out []Broken
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	for _, re := range []*regexp.Regexp{linkRE, refRE} {
		for _, m := range re.FindAllStringSubmatchIndex(prose, -1) {
			target := prose[m[2]:m[3]]
			rel, ok := linkPath(file, target)
			if ok && !exists(rel) {
				out = append(out, Broken{file, lineOf(prose, m[2]), "link", target, ""})
			}
		}
	}
	for _, s := range spans {
		if rel, ok := repoPath(root, s.text); ok && !exists(rel) {
			out = append(out, Broken{file, s.line, "path", s.text, ""})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// linkPath resolves a link target against the folder of file; ok is false for targets that name
// no repository file (other schemes, pure anchors, generated output).
func linkPath(file, target string) (string, bool) {
	for _, s := range schemes {
		if strings.HasPrefix(strings.ToLower(target), s) {
			return "", false
		}
	}
	if i := strings.IndexByte(target, '#'); i >= 0 {
		target = target[:i]
	}
	if target == "" || strings.HasPrefix(target, "/") {
		return "", false
	}
	rel := path.Clean(path.Join(path.Dir(file), target))
	if generated[strings.SplitN(rel, "/", 2)[0]] {
		return "", false
	}
	return rel, true
}

// repoPath says whether a code span names a repository path, and which.
func repoPath(root, tok string) (string, bool) {
	tok = strings.TrimPrefix(strings.TrimSpace(tok), "./")
	if tok == "" || strings.ContainsAny(tok, " \t*<>$~{}|…") || strings.Contains(tok, "...") {
		return "", false
	}
	for _, w := range upperRE.FindAllString(tok, -1) {
		if placeholders[w] || strings.Trim(w, "N") == "" {
			return "", false
		}
	}
	tok = lineRE.ReplaceAllString(tok, "") // file.go:50 or file.go:50-51
	first := strings.SplitN(tok, "/", 2)[0]
	if first == "" || first == "." || first == ".." || generated[first] {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(root, first)); err != nil {
		return "", false // not a repository path: a key, a command, a word
	}
	return path.Clean(tok), true
}

// span is an inline code span and the line it starts on.
type span struct {
	text string
	line int
}

// split returns text with fenced code blocks and inline code spans blanked out (newlines kept,
// so offsets keep their line numbers) and the inline code spans found outside fenced blocks.
func split(text string) (string, []span) {
	b := []byte(text)
	lines := strings.SplitAfter(text, "\n")
	off, fence := 0, ""
	for _, l := range lines {
		t := strings.TrimLeft(l, " ")
		marker := ""
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			marker = t[:3]
		}
		if fence != "" || marker != "" {
			blank(b, off, off+len(l))
		}
		switch {
		case fence == "" && marker != "":
			fence = marker
		case fence != "" && marker == fence:
			fence = ""
		}
		off += len(l)
	}
	var spans []span
	line := 1
	for i := 0; i < len(b); {
		switch {
		case b[i] == '\n':
			line++
			fallthrough
		case b[i] != '`':
			i++
			continue
		}
		n := run(b, i)
		end := closing(b, i+n, n)
		if end < 0 {
			i += n
			continue
		}
		body := string(b[i+n : end])
		spans = append(spans, span{strings.TrimSpace(strings.ReplaceAll(body, "\n", " ")), line})
		line += strings.Count(body, "\n")
		blank(b, i, end+n)
		i = end + n
	}
	return string(b), spans
}

// run is the length of the run of backticks at b[i].
func run(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] == '`' {
		n++
	}
	return n
}

// closing is the offset of the next run of exactly n backticks from b[from] within the same
// paragraph (a code span does not cross a blank line), or -1.
func closing(b []byte, from, n int) int {
	for j := from; j < len(b); {
		if b[j] == '\n' && blankLineAfter(b, j) {
			return -1
		}
		if b[j] != '`' {
			j++
			continue
		}
		m := run(b, j)
		if m == n {
			return j
		}
		j += m
	}
	return -1
}

// blankLineAfter reports whether the line after the newline at b[nl] holds only spaces and tabs.
func blankLineAfter(b []byte, nl int) bool {
	for k := nl + 1; k < len(b) && b[k] != '\n'; k++ {
		if b[k] != ' ' && b[k] != '\t' {
			return false
		}
	}
	return true
}

// blank replaces b[from:to] by spaces, keeping newlines.
func blank(b []byte, from, to int) {
	for k := from; k < to; k++ {
		if b[k] != '\n' {
			b[k] = ' '
		}
	}
}

func lineOf(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }
