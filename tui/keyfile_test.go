package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// writeKeyFile writes a key map file with text in a fresh directory and returns its path.
func writeKeyFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tandem", KeyFileName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKeyFile_Rebinds: a key map file in the user's config directory ($XDG_CONFIG_HOME)
// rebinds keys: the new keys do the work, the old ones no longer do, and the list's and
// the editor's footers and the help show the keys as bound.
func TestKeyFile_Rebinds(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	if got, want := DefaultKeyFile(), filepath.Join(cfg, "tandem", "keys.yaml"); got != want {
		t.Fatalf("DefaultKeyFile() = %q, want %q", got, want)
	}
	path := writeKeyFile(t, "# mine\nsave: ctrl+w\nopen_lease: [E]\nup: [K, up]\ndown: [J, down]\n")
	if err := os.Rename(filepath.Dir(path), filepath.Join(cfg, "tandem")); err != nil {
		t.Fatal(err)
	}
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	d := newDriver(t, s, "alice")
	scr := d.screen()
	if !strings.Contains(scr, "E edit with lease") || strings.Contains(scr, "e edit with lease") {
		t.Fatalf("the list's footer does not show E for edit with lease:\n%s", scr)
	}
	if d.app.list.status.text != "" {
		t.Fatalf("a good key map file is reported: %q", d.app.list.status.text)
	}
	d.key("J")
	if d.app.list.cursor != 1 {
		t.Fatalf("J (down, rebound) left the cursor at %d", d.app.list.cursor)
	}
	d.key("j") // no longer down
	if d.app.list.cursor != 1 {
		t.Fatalf("j moved the cursor after down was rebound to J")
	}
	d.key("enter")
	d.waitFor("product 2 · v1")
	if scr := d.screen(); !strings.Contains(scr, "ctrl+w save") {
		t.Fatalf("the editor's footer does not show ctrl+w save:\n%s", scr)
	}
	d.key("tab")
	d.typeText("X")
	d.key("ctrl+s") // no longer save
	if strings.Contains(d.screen(), "saved v2") {
		t.Fatalf("ctrl+s saved after save was rebound")
	}
	d.key("ctrl+w")
	d.waitFor("saved v2")
	d.key("f1")
	help := d.screen()
	for _, w := range []string{"ctrl+w", "K/↑/J/↓"} {
		if !strings.Contains(help, w) {
			t.Errorf("the help does not show %q:\n%s", w, help)
		}
	}
}

// TestKeyFile_BadFile: a file that cannot be used is said in the list's status line, by
// line and what is wrong, and the TUI runs on the default keys, all of them.
func TestKeyFile_BadFile(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"unknown action", "save: ctrl+w\nfly: x\n", `line 2: unknown action "fly"`},
		{"unknown key", "save: ctrl+bogus\n", `line 1: save: unknown key "ctrl+bogus"`},
		{"twice in one screen", "save: ctrl+w\nnext_field: ctrl+w\n", "key ctrl+w is bound to both next_field and save on the editor screen"},
		{"bad yaml", "save: [ctrl+w\n", "not YAML of the form action: key"},
		{"not a key", "save: {a: b}\n", "save: want a key or a list of keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeKeyFile(t, tc.text)
			s := newFakeStore(t)
			mustSeed(t, s, 2)
			d := newDriver(t, s, "alice", func(o *Options) { o.KeyFile = path })
			got := d.app.list.status.text
			if !strings.Contains(got, tc.want) || !strings.Contains(got, path) || !strings.HasSuffix(got, "using the default keys") {
				t.Fatalf("status %q, want it to name %s and say %q", got, path, tc.want)
			}
			if !strings.Contains(d.screen(), "e edit with lease") {
				t.Fatalf("the footer does not show the default keys:\n%s", d.screen())
			}
			d.key("enter")
			d.waitFor("product 1 · v1")
			d.key("tab")
			d.typeText("X")
			d.key("ctrl+s")
			d.waitFor("saved v2")
		})
	}
}

// TestKeyFile_Missing: no file means the default keys and nothing said.
func TestKeyFile_Missing(t *testing.T) {
	km, err := LoadKeyMap(filepath.Join(t.TempDir(), "none.yaml"))
	if err != nil || km.Save.Keys()[0] != "ctrl+s" {
		t.Fatalf("a missing file gave %v, save %v", err, km.Save.Keys())
	}
	if names := ActionNames(); len(names) < 50 || names[0] != "all_mine" {
		t.Fatalf("ActionNames() = %v", names)
	}
	_ = store.KindProduct
}
