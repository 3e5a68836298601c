package doccheck

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Go code sends readers to the documentation in its comments and in the messages users see. A
// pointer to a section of a page is the page, then the section's heading, in quotes or not:
// "README, section X", "configs/README.md, X" or "configs/README.md (section X)" — README alone
// is the repository's README.md — or the page with an anchor, as a markdown link has it
// (FILE.md#anchor). Each must still name a heading of that page when the heading is renamed or
// the section moves to docs/. A page is checked when its first path element is at the
// repository root (as for paths in backticks), so an output file named in a comment (audit.md,
// report.md) is not taken for one.

var (
	// sectionRE matches a page and the text after it up to the end of the clause: the
	// section's heading, cut at a sentence's end by sectionOf.
	sectionRE = regexp.MustCompile(`(?:^|[^\w./-])((?:[\w.-]+/)*[\w.-]+\.md|README)(?:, (?:section )?| \(section )"?([^()\n;,"` + "`" + `]+)`)
	// anchorRE matches a page and an anchor.
	anchorRE = regexp.MustCompile(`(?:^|[^\w./-])((?:[\w.-]+/)*[\w.-]+\.md)#([\w-]+)`)
)

// GoFiles returns the Go files the check reads, relative to root and sorted: every .go file of
// the repository but tests (_test.go), testdata, generated output and folders Go ignores (their
// names start with . or _).
func GoFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || generated[rel]) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// CheckGo returns the pointers of one Go file (file being its path relative to root) that name a
// page that does not exist, or a section or anchor that no heading of the page has.
func CheckGo(root, file string, text []byte) []Broken {
	var out []Broken
	src := string(text)
	headings := map[string][]string{} // by page; nil: no such page
	headingsOf := func(page string) ([]string, bool) {
		h, ok := headings[page]
		if !ok {
			h = readHeadings(filepath.Join(root, filepath.FromSlash(page)))
			headings[page] = h
		}
		return h, h != nil
	}
	for _, m := range sectionRE.FindAllStringSubmatchIndex(src, -1) {
		page, section := src[m[2]:m[3]], sectionOf(src[m[4]:m[5]])
		end := m[5]
		if end < len(src) && src[end] == '"' {
			end++ // the quote that closes the heading
		}
		target := strings.TrimRight(src[m[2]:end], " .")
		if section == "" || placeholders[section] { // a pointer that shows the form, not one to follow
			continue
		}
		rel, ok := pagePath(root, page)
		if !ok {
			continue
		}
		h, exists := headingsOf(rel)
		switch {
		case !exists:
			out = append(out, Broken{file, lineOf(src, m[2]), "section", target, "no such file " + rel})
		case !hasHeading(h, section):
			out = append(out, Broken{file, lineOf(src, m[2]), "section", target, "no heading " + strconv.Quote(section) + " in " + rel})
		}
	}
	for _, m := range anchorRE.FindAllStringSubmatchIndex(src, -1) {
		page, anchor := src[m[2]:m[3]], src[m[4]:m[5]]
		rel, ok := pagePath(root, page)
		if !ok {
			continue
		}
		h, exists := headingsOf(rel)
		target := src[m[2]:m[5]]
		switch {
		case !exists:
			out = append(out, Broken{file, lineOf(src, m[2]), "anchor", target, "no such file " + rel})
		case !hasAnchor(h, anchor):
			out = append(out, Broken{file, lineOf(src, m[2]), "anchor", target, "no heading with the anchor " + strconv.Quote(anchor) + " in " + rel})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// sectionOf is the heading a pointer names: its text up to the end of a sentence, without
// surrounding spaces.
func sectionOf(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(strings.TrimSpace(s), ".")
}

// pagePath resolves the page of a pointer against root: README is the root's README.md; a path
// counts when its first element is at the root, and ok is false for any other name.
func pagePath(root, page string) (string, bool) {
	if page == "README" {
		return "README.md", true
	}
	rel := path.Clean(page)
	first := strings.SplitN(rel, "/", 2)[0]
	if first == "." || first == ".." || generated[first] {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(root, first)); err != nil {
		return "", false
	}
	return rel, true
}

// readHeadings returns the headings of a markdown file outside fenced code blocks, as written
// (nil when the file cannot be read; empty, not nil, when it has none).
func readHeadings(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	out := []string{}
	fence := ""
	for _, l := range strings.Split(string(data), "\n") {
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			switch {
			case fence == "":
				fence = t[:3]
			case t[:3] == fence:
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		level := len(t) - len(strings.TrimLeft(t, "#"))
		if level >= 1 && level <= 6 && strings.HasPrefix(t[level:], " ") {
			out = append(out, strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[level:]), "#")))
		}
	}
	return out
}

// hasHeading reports whether one of the headings reads as section, ignoring case, code and
// emphasis marks and runs of spaces (## `sft` is the section sft).
func hasHeading(headings []string, section string) bool {
	want := plain(section)
	for _, h := range headings {
		if plain(h) == want {
			return true
		}
	}
	return false
}

// hasAnchor reports whether one of the headings has the anchor GitHub gives it.
func hasAnchor(headings []string, anchor string) bool {
	for _, h := range headings {
		if slug(h) == anchor {
			return true
		}
	}
	return false
}

// plain is a heading's text without code and emphasis marks, in lower case, spaces collapsed.
func plain(s string) string {
	s = strings.NewReplacer("`", "", "*", "").Replace(s)
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// slug is the anchor GitHub gives a heading: its text in lower case, spaces turned into
// hyphens, and every character but letters, digits, hyphens and underscores dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
