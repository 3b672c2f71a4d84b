package tui

import (
	"context"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/store"
)

// Tests of the app as a whole: what reaches the terminal (escapes, colour), sizes.

// hostile is a store whose product 1 was written by another program with an escape
// sequence in its name (tandem's own writes refuse control characters).
type hostile struct{ store.Store }

func (h hostile) poison(r *store.Record) *store.Record {
	if r != nil && r.ID == 1 && r.Kind == store.KindProduct {
		r.Fields["name"] = "Evil\x1b[2J\x1b]0;pwned\x07 name"
	}
	return r
}

func (h hostile) FindRecord(ctx context.Context, k store.Kind, id int64) (*store.Record, error) {
	r, err := h.Store.FindRecord(ctx, k, id)
	return h.poison(r), err
}

func (h hostile) FindRecords(ctx context.Context, f store.Filter) ([]*store.Record, error) {
	rs, err := h.Store.FindRecords(ctx, f)
	for _, r := range rs {
		h.poison(r)
	}
	return rs, err
}

func TestSafety_EscapeSequencesShownHarmlessly(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	d := newDriver(t, hostile{s}, "alice")
	for _, view := range []string{d.app.Render(), func() string { openProduct(t, d, 1, "enter"); return d.app.Render() }()} {
		if strings.Contains(view, "\x1b[2J") || strings.Contains(view, "\x07") || strings.Contains(view, "\x1b]0;") {
			t.Fatalf("raw escape sequence reached the screen: %q", view)
		}
		if !strings.Contains(ansi.Strip(view), `Evil\x1b[2J`) {
			t.Fatalf("escaped name not shown:\n%s", ansi.Strip(view))
		}
	}
}

func TestResize(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 40)
	d := newDriver(t, s, "alice")
	for _, size := range [][2]int{{100, 30}, {60, 12}, {80, 24}} {
		d.apply(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, screen := range []string{d.screen(), func() string { d.key("enter"); d.waitFor("product 1"); v := d.screen(); d.key("esc"); return v }()} {
			lines := strings.Split(screen, "\n")
			if len(lines) > size[1] {
				t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > size[0] {
					t.Errorf("%dx%d: line of width %d: %q", size[0], size[1], w, l)
				}
			}
		}
	}
}

func TestRun_NoColor(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	for _, tc := range []struct {
		name    string
		noColor bool
		env     string
		colour  bool
	}{{"option", true, "", false}, {"NO_COLOR", false, "1", false}, {"colour", false, "", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.env)
			t.Setenv("TERM", "xterm-256color")
			in, inw := io.Pipe()
			var out safeBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				// The output is no terminal, so colour is forced; NO_COLOR must still win.
				done <- Run(ctx, s, Options{User: "alice", NoColor: tc.noColor, ColorProfile: colorprofile.ANSI256, Input: in, Output: &out,
					DraftDir: t.TempDir(), Now: func() time.Time { return t0 }})
			}()
			for !strings.Contains(out.String(), "Product 3") {
				select {
				case err := <-done:
					t.Fatalf("Run ended early: %v; output %q", err, out.String())
				case <-time.After(20 * time.Millisecond):
				}
			}
			inw.Write([]byte("q"))
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			c := colourSGR(out.String())
			if tc.colour && c == "" {
				t.Fatal("no colour without NO_COLOR: the check cannot see colour")
			}
			if !tc.colour && c != "" {
				t.Fatalf("colour sequence %q in the output", c)
			}
		})
	}
}

var sgrRE = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourSGR returns the first SGR sequence in s that sets a colour, or "".
func colourSGR(s string) string {
	for _, m := range sgrRE.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				return m[0]
			}
		}
	}
	return ""
}

// TestNoColor_SelectedRowMarked: without colour the selected row of the locks and history
// screens is marked by more than bold.
func TestNoColor_SelectedRowMarked(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	mustLease(t, s, "bob", 2, 10*time.Minute)
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 1, store.Update{BaseVersion: 1,
		Set: store.Values{"price": int64(1500)}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.key("L")
	d.waitFor("bob")
	if !strings.Contains(d.screen(), "▸ product") {
		t.Fatalf("the locks screen's selected row has no marker:\n%s", d.screen())
	}
	d.key("esc")
	d.key("h")
	d.waitFor("history of product 1")
	d.waitFor("v2")
	if !strings.Contains(d.screen(), "▸ v2") {
		t.Fatalf("the history's selected row has no marker:\n%s", d.screen())
	}
}

// TestSmallScreen_KeepsStatusAndFooter: at 15 rows and fewer every screen keeps its status
// line and footer (the form scrolls instead), so a save's message can be seen.
func TestSmallScreen_KeepsStatusAndFooter(t *testing.T) {
	_, alice, bob := conflictSetup(t)
	lastTwo := func(d *driver) (string, string) {
		lines := strings.Split(d.screen(), "\n")
		return lines[len(lines)-2], lines[len(lines)-1]
	}
	for _, h := range []int{15, 10} {
		alice.apply(tea.WindowSizeMsg{Width: 80, Height: h})
		focusField(t, alice, "description")
		if h == 15 {
			alice.golden("editor_body_15rows")
		}
		if _, footer := lastTwo(alice); !strings.Contains(footer, "ctrl+s save") {
			t.Fatalf("%d rows: the editor's footer is gone:\n%s", h, alice.screen())
		}
		if n := strings.Count(alice.screen(), "\n") + 1; n != h {
			t.Fatalf("%d rows: the editor drew %d lines", h, n)
		}
	}
	alice.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	focusField(t, alice, "name")
	alice.typeText(" small")
	alice.key("ctrl+s")
	alice.waitFor("saved v2")
	if status, _ := lastTwo(alice); !strings.Contains(status, "saved v2") {
		t.Fatalf("the save's message is not on the status line:\n%s", alice.screen())
	}
	// The conflict dialog and the merge view.
	bobSaves(t, bob, "price", "12.00")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	if _, footer := lastTwo(alice); !strings.Contains(footer, "merge") {
		t.Fatalf("the dialog's footer is gone:\n%s", alice.screen())
	}
	alice.key("m")
	alice.waitFor("1 of 1 conflict left")
	if _, footer := lastTwo(alice); !strings.Contains(footer, "mine") {
		t.Fatalf("the merge view's footer is gone:\n%s", alice.screen())
	}
	for _, k := range []string{"esc", "esc"} {
		alice.key(k)
	}
	alice.key("esc")
	alice.key("y")
	alice.waitFor("[ products ]")
	for _, scr := range []string{"h", "L"} {
		alice.key(scr)
		alice.settle()
		if _, footer := lastTwo(alice); !strings.Contains(footer, "esc back") {
			t.Fatalf("screen %s: the footer is gone:\n%s", scr, alice.screen())
		}
		alice.key("esc")
	}
}

// TestSafety_LiteralBackslashUnambiguous: a name holding the four characters \x1b shows
// with its backslash doubled, in the list and the editor, so it never looks like a real ESC
// (shown \x1b); the field stays editable, as typing it back gives the same name.
func TestSafety_LiteralBackslashUnambiguous(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	if _, err := s.UpdateRecord(actorCtx("bob"), store.KindProduct, 2, store.Update{BaseVersion: 1,
		Set: store.Values{"name": `Lit\x1b name`}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, hostile{s}, "alice")
	d.waitFor(`Lit\\x1b name`)
	if scr := d.screen(); !strings.Contains(scr, `Evil\x1b[2J`) || strings.Contains(scr, `Evil\\x1b`) {
		t.Fatalf("the real ESC is not shown as \\x1b:\n%s", scr)
	}
	openProduct(t, d, 2, "enter")
	if !strings.Contains(d.screen(), `Lit\\x1b name`) {
		t.Fatalf("the editor shows the literal backslash undoubled:\n%s", d.screen())
	}
	for _, fi := range d.app.editor.fields {
		if fi.f.Name == "name" && fi.readOnly != "" {
			t.Fatalf("a name with a literal backslash is read-only: %s", fi.readOnly)
		}
	}
}
