package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// The commands of README.md and docs/ are run here against the binary TestMain built, so the
// documents show only what works. In each file, in order, in one temporary directory:
//
//   - a ```sh block runs as one bash script (set -e, pipefail) and must exit 0;
//   - a ```console block runs each line that starts with "$ " as a command; a line "(exit N)"
//     among the output after it says the exit status it must have, else 0; the output shown
//     is not compared;
//   - a block of any other language (yaml, json, text, none: screens and output) is not run.
//
// A line <!-- docs-test: … --> right before the opening fence changes that:
//
//	<!-- docs-test: file NAME -->     the block (any language) is written to NAME, not run
//	<!-- docs-test: exit N -->        the sh block must exit N
//	<!-- docs-test: postgres -->      run only when TANDEM_TEST_POSTGRES is set, with $DSN a
//	                                  fresh PostgreSQL schema of its own
//	<!-- docs-test: tmux TestE2E_X --> not run here: the named terminal test drives it
//	<!-- docs-test: skip REASON -->   not run, for the reason given
//
// `tandem` is the built binary (first on PATH); HOME and the XDG directories are temporary,
// so nothing of the machine's user is read or written.

// docsFiles returns README.md and the guides under docs/; the generated reference
// (docs/cli) has no commands to run: its test compares it with the binary.
func docsFiles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(files, guides...)
}

// docBlock is one fenced code block of a markdown file.
type docBlock struct {
	line   int    // the line of its opening fence, from 1
	lang   string // the fence's info string: sh, console, yaml, …
	marker string // the docs-test directive right before it, without "docs-test:"
	body   string
}

var (
	fenceRe  = regexp.MustCompile("^```([a-z0-9-]*)\\s*$")
	markerRe = regexp.MustCompile(`^<!--\s*docs-test:\s*(.*?)\s*-->\s*$`)
	exitRe   = regexp.MustCompile(`^\(exit (\d+)\)$`)
)

// parseBlocks returns the fenced blocks of a markdown text with their directives.
func parseBlocks(text string) []docBlock {
	var blocks []docBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := docBlock{line: i + 1, lang: m[1]}
		if i > 0 {
			if mm := markerRe.FindStringSubmatch(lines[i-1]); mm != nil {
				b.marker = mm[1]
			}
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		b.body = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, b)
	}
	return blocks
}

// TestDocs_CommandsRun runs the commands of every document, as the comment above says.
func TestDocs_CommandsRun(t *testing.T) {
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "tandem")); err != nil {
		t.Fatal(err)
	}
	for _, file := range docsFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			d := newDocDir(t, bin)
			for _, b := range parseBlocks(string(data)) {
				d.run(t, fmt.Sprintf("%s:%d", filepath.Base(file), b.line), b)
			}
		})
	}
}

// docDir is the temporary directory one document's blocks run in, and their environment.
type docDir struct {
	dir string
	env []string
}

// newDocDir makes the directory and an environment with the binary first on PATH, a
// temporary HOME and XDG directories, and no TANDEM_ variable of the test's own.
func newDocDir(t *testing.T, bin string) *docDir {
	d := &docDir{dir: t.TempDir()}
	home := t.TempDir()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "TANDEM_"), strings.HasPrefix(name, "XDG_"), name == "HOME", name == "PATH", name == "USER", name == "NO_COLOR":
		default:
			d.env = append(d.env, kv)
		}
	}
	d.env = append(d.env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home, "USER=alice",
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	return d
}

// run does what block b's language and directive say; where names it in messages.
func (d *docDir) run(t *testing.T, where string, b docBlock) {
	t.Helper()
	verb, arg, _ := strings.Cut(b.marker, " ")
	env := d.env
	switch verb {
	case "skip":
		if arg == "" {
			t.Errorf("%s: docs-test: skip gives no reason", where)
		}
		return
	case "tmux":
		if !testExists(t, arg) {
			t.Errorf("%s: docs-test: tmux names %q, which is no test of internal/cli", where, arg)
		}
		return
	case "file":
		if err := os.WriteFile(filepath.Join(d.dir, arg), []byte(b.body), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	case "postgres":
		if os.Getenv("TANDEM_TEST_POSTGRES") == "" {
			t.Logf("%s: needs PostgreSQL: set TANDEM_TEST_POSTGRES to run it", where)
			return
		}
		env = append(env[:len(env):len(env)], "DSN="+pgtest.DSN(t))
	case "", "exit":
	default:
		t.Errorf("%s: unknown docs-test directive %q", where, b.marker)
		return
	}
	switch b.lang {
	case "sh":
		want := 0
		if verb == "exit" {
			want = mustAtoi(t, where, arg)
		}
		d.expect(t, where, "set -eo pipefail\n"+b.body, want, env)
	case "console":
		for _, c := range consoleCommands(b.body) {
			d.expect(t, fmt.Sprintf("%s+%d", where, c.line), c.cmd, c.exit, env)
		}
	}
}

// consoleCommand is one "$ " line of a console block and the exit status shown after it.
type consoleCommand struct {
	line int // from the block's opening fence
	cmd  string
	exit int
}

// consoleCommands returns the commands of a console block's body.
func consoleCommands(body string) []consoleCommand {
	var cmds []consoleCommand
	for i, l := range strings.Split(body, "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			cmds = append(cmds, consoleCommand{line: i + 1, cmd: c})
		} else if m := exitRe.FindStringSubmatch(strings.TrimSpace(l)); m != nil && len(cmds) > 0 {
			cmds[len(cmds)-1].exit, _ = strconv.Atoi(m[1])
		}
	}
	return cmds
}

// expect runs script with bash in the document's directory and fails the test unless it
// exits with want.
func (d *docDir) expect(t *testing.T, where, script string, want int, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = d.dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: run bash: %v", where, err)
	}
	if got != want {
		t.Errorf("%s: exit %d, the document says %d\n%s\noutput:\n%s", where, got, want, script, out.String())
	}
}

// testExists reports whether a test function of that name is in internal/cli.
func testExists(t *testing.T, name string) bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("\nfunc "+name+"(t *testing.T)")) {
			return true
		}
	}
	return false
}

// mustAtoi reads a directive's exit status.
func mustAtoi(t *testing.T, where, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: docs-test: exit %q is no number", where, s)
	}
	return n
}

// TestDocs_LayoutIsTrue: the README's Layout names every package of the repository (a
// package inside another may be named on its parent's line, as "pgtest/"), and every path
// it names exists.
func TestDocs_LayoutIsTrue(t *testing.T) {
	root := filepath.Join("..", "..")
	layout := readmeLayout(t, filepath.Join(root, "README.md"))
	listed := map[string]string{} // path → its line
	for _, line := range strings.Split(layout, "\n") {
		first, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
		for _, p := range strings.Split(first, ", ") {
			if p = strings.TrimSuffix(strings.TrimSpace(p), "/"); p != "" {
				listed[p] = line
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("the README's Layout names %s, which is not in the repository", p)
				}
			}
		}
	}
	for _, dir := range packageDirs(t, root) {
		if _, ok := listed[dir]; ok {
			continue
		}
		parentLine, ok := listed[filepath.ToSlash(filepath.Dir(dir))]
		if !ok || !strings.Contains(parentLine, filepath.Base(dir)+"/") && !strings.Contains(layout, dir) {
			t.Errorf("the README's Layout does not name the package %s", dir)
		}
	}
}

// readmeLayout returns the code block of the README's "## Layout" section.
func readmeLayout(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n## Layout\n")
	if !ok {
		t.Fatal(`README.md has no "## Layout" section`)
	}
	for _, b := range parseBlocks(sec) {
		return b.body
	}
	t.Fatal(`README.md's "Layout" shows no code block`)
	return ""
}

// packageDirs returns the directories under root, slash-separated and relative to it, that
// hold Go files other than tests (testdata and hidden directories left out).
func packageDirs(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel != "." {
				seen[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, 0, len(seen))
	for d := range seen {
		dirs = append(dirs, d)
	}
	return dirs
}

// TestDocs_ParseBlocks: fences, their directives and a console block's exit statuses are
// read as the comment at the top of this file says.
func TestDocs_ParseBlocks(t *testing.T) {
	text := "intro\n<!-- docs-test: exit 3 -->\n```sh\ntandem get product 1\n```\n\n" +
		"```console\n$ tandem sync\nconflict: …\n(exit 3)\n\n$ tandem status\nin sync\n```\n```yaml\na: 1\n```\n"
	blocks := parseBlocks(text)
	if len(blocks) != 3 {
		t.Fatalf("%d blocks, want 3: %+v", len(blocks), blocks)
	}
	if b := blocks[0]; b.lang != "sh" || b.marker != "exit 3" || b.line != 3 || b.body != "tandem get product 1\n" {
		t.Errorf("first block = %+v", b)
	}
	cmds := consoleCommands(blocks[1].body)
	want := []consoleCommand{{1, "tandem sync", 3}, {5, "tandem status", 0}}
	if fmt.Sprint(cmds) != fmt.Sprint(want) {
		t.Errorf("console commands = %v, want %v", cmds, want)
	}
	if blocks[2].lang != "yaml" || blocks[2].marker != "" {
		t.Errorf("third block = %+v", blocks[2])
	}
}

// linkRe matches a markdown link's target that is not a web address.
var linkRe = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocs_LinksResolve: every relative link of README.md, BENCHMARKS.md and docs/ (the
// generated reference too) names a file that exists and, with a #fragment, a heading of it.
func TestDocs_LinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := append(docsFiles(t), filepath.Join(root, "BENCHMARKS.md"))
	ref, err := filepath.Glob(filepath.Join(root, "docs", "cli", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range append(files, ref...) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRe.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			linked := file
			if path != "" {
				linked = filepath.Join(filepath.Dir(file), path)
			}
			if _, err := os.Stat(linked); err != nil {
				t.Errorf("%s links to %s, which does not exist", file, target)
				continue
			}
			if frag != "" && !slices.Contains(headingSlugs(t, linked), frag) {
				t.Errorf("%s links to %s, which has no heading #%s", file, path, frag)
			}
		}
	}
}

// headingSlugs returns the anchors GitHub gives the headings of a markdown file (code
// blocks left out).
func headingSlugs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	code := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			code = !code
		}
		title := strings.TrimLeft(line, "#")
		if code || title == line || !strings.HasPrefix(title, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slugs = append(slugs, b.String())
	}
	return slugs
}

// TestDocs_ReadmeIsShort: the README stays what a newcomer reads in five minutes (issue 26:
// under about 300 lines); detail belongs in a guide under docs/.
func TestDocs_ReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 300 {
		t.Errorf("README.md has %d lines, over 300: move the detail into a guide under docs/ and link it", n)
	}
}
