package bodyedit

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// namedKeys are the key presses the tests use, as a terminal delivers them.
var namedKeys = map[string]tea.KeyPressMsg{
	"enter":         {Code: tea.KeyEnter},
	"tab":           {Code: tea.KeyTab},
	"backspace":     {Code: tea.KeyBackspace},
	"delete":        {Code: tea.KeyDelete},
	"left":          {Code: tea.KeyLeft},
	"right":         {Code: tea.KeyRight},
	"up":            {Code: tea.KeyUp},
	"down":          {Code: tea.KeyDown},
	"home":          {Code: tea.KeyHome},
	"end":           {Code: tea.KeyEnd},
	"pgup":          {Code: tea.KeyPgUp},
	"pgdown":        {Code: tea.KeyPgDown},
	"space":         {Code: tea.KeySpace, Text: " "},
	"ctrl+home":     {Code: tea.KeyHome, Mod: tea.ModCtrl},
	"ctrl+end":      {Code: tea.KeyEnd, Mod: tea.ModCtrl},
	"ctrl+left":     {Code: tea.KeyLeft, Mod: tea.ModCtrl},
	"ctrl+right":    {Code: tea.KeyRight, Mod: tea.ModCtrl},
	"alt+backspace": {Code: tea.KeyBackspace, Mod: tea.ModAlt},
	"ctrl+a":        {Code: 'a', Mod: tea.ModCtrl},
	"ctrl+e":        {Code: 'e', Mod: tea.ModCtrl},
	"ctrl+k":        {Code: 'k', Mod: tea.ModCtrl},
	"ctrl+u":        {Code: 'u', Mod: tea.ModCtrl},
}

func TestNamedKeysMatchTheirNames(t *testing.T) {
	for name, k := range namedKeys {
		if got := k.String(); got != name && name != "space" {
			t.Errorf("key %q has String() %q", name, got)
		}
	}
}

// send feeds inputs to m: a named key, "paste:" and the pasted text, or else text typed one
// character at a time.
func send(t *testing.T, m Model, inputs ...string) Model {
	t.Helper()
	for _, in := range inputs {
		if k, ok := namedKeys[in]; ok {
			m, _ = m.Update(k)
			continue
		}
		if text, ok := strings.CutPrefix(in, "paste:"); ok {
			m, _ = m.Update(tea.PasteMsg{Content: text})
			continue
		}
		for _, r := range in {
			m, _ = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
	return m
}

// mustModel returns a focused editor of the given size holding value, cursor at line, col.
func mustModel(t *testing.T, value string, width, height, line, col int) Model {
	t.Helper()
	m := New()
	m.SetValue(value)
	m.SetSize(width, height)
	m.Focus()
	m.SetCursor(line, col)
	if got := m.Value(); got != value {
		t.Fatalf("SetValue(%q) then Value() = %q", value, got)
	}
	return m
}

func TestModel_Update(t *testing.T) {
	type pos struct{ line, col int }
	for _, tt := range []struct {
		name     string
		value    string
		width    int
		at       pos
		inputs   []string
		want     string
		wantPos  pos
		readOnly bool
	}{
		{name: "insert", value: "hello", at: pos{0, 2}, inputs: []string{"XY"}, want: "heXYllo", wantPos: pos{0, 4}},
		{name: "insert space", value: "ab", at: pos{0, 1}, inputs: []string{"space"}, want: "a b", wantPos: pos{0, 2}},
		{name: "insert into empty", value: "", inputs: []string{"hi", "enter", "yo"}, want: "hi\nyo", wantPos: pos{1, 2}},
		{name: "newline splits", value: "hello world", at: pos{0, 5}, inputs: []string{"enter"}, want: "hello\n world", wantPos: pos{1, 0}},
		{name: "backspace", value: "abc", at: pos{0, 2}, inputs: []string{"backspace"}, want: "ac", wantPos: pos{0, 1}},
		{name: "backspace joins", value: "ab\ncd", at: pos{1, 0}, inputs: []string{"backspace"}, want: "abcd", wantPos: pos{0, 2}},
		{name: "backspace at start", value: "ab", inputs: []string{"backspace"}, want: "ab", wantPos: pos{0, 0}},
		{name: "delete", value: "abc", at: pos{0, 1}, inputs: []string{"delete"}, want: "ac", wantPos: pos{0, 1}},
		{name: "delete joins", value: "ab\ncd", at: pos{0, 2}, inputs: []string{"delete"}, want: "abcd", wantPos: pos{0, 2}},
		{name: "delete at end", value: "ab", at: pos{0, 2}, inputs: []string{"delete"}, want: "ab", wantPos: pos{0, 2}},
		{name: "backspace wide", value: "日本語", at: pos{0, 2}, inputs: []string{"backspace"}, want: "日語", wantPos: pos{0, 1}},
		{name: "backspace combining", value: "e\u0301x", at: pos{0, 1}, inputs: []string{"backspace"}, want: "x", wantPos: pos{0, 0}},
		{name: "delete emoji sequence", value: "a👩‍👩‍👧b", at: pos{0, 1}, inputs: []string{"delete"}, want: "ab", wantPos: pos{0, 1}},
		{name: "right over emoji", value: "a👩‍👩‍👧b", at: pos{0, 1}, inputs: []string{"right", "X"}, want: "a👩‍👩‍👧Xb", wantPos: pos{0, 3}},
		{name: "left across lines", value: "ab\ncd", at: pos{1, 0}, inputs: []string{"left", "X"}, want: "abX\ncd", wantPos: pos{0, 3}},
		{name: "right across lines", value: "ab\ncd", at: pos{0, 2}, inputs: []string{"right", "X"}, want: "ab\nXcd", wantPos: pos{1, 1}},
		{name: "down in wrapped line", value: "aaaa bbbb cccc", width: 5, at: pos{0, 2}, inputs: []string{"down"}, want: "aaaa bbbb cccc", wantPos: pos{0, 7}},
		{name: "down twice in wrapped line", value: "aaaa bbbb cccc", width: 5, at: pos{0, 2}, inputs: []string{"down", "down"}, want: "aaaa bbbb cccc", wantPos: pos{0, 12}},
		{name: "down past last row", value: "aaaa bbbb cccc", width: 5, at: pos{0, 2}, inputs: []string{"down", "down", "down"}, want: "aaaa bbbb cccc", wantPos: pos{0, 14}},
		{name: "up in wrapped line", value: "aaaa bbbb cccc", width: 5, at: pos{0, 12}, inputs: []string{"up"}, want: "aaaa bbbb cccc", wantPos: pos{0, 7}},
		{name: "down from wrapped line", value: "aaaa bbbb\nxyz", width: 5, at: pos{0, 7}, inputs: []string{"down"}, want: "aaaa bbbb\nxyz", wantPos: pos{1, 2}},
		{name: "up into wrapped line", value: "aaaa bbbb\nxyz", width: 5, at: pos{1, 1}, inputs: []string{"up"}, want: "aaaa bbbb\nxyz", wantPos: pos{0, 6}},
		{name: "up keeps goal column", value: "abcdef\nx\nabcdef", at: pos{2, 4}, inputs: []string{"up", "up"}, want: "abcdef\nx\nabcdef", wantPos: pos{0, 4}},
		{name: "up from wide to narrow", value: "abcd\n日本語", at: pos{1, 1}, inputs: []string{"up"}, want: "abcd\n日本語", wantPos: pos{0, 2}},
		{name: "up from narrow to wide", value: "日本語\nabcd", at: pos{1, 3}, inputs: []string{"up"}, want: "日本語\nabcd", wantPos: pos{0, 1}},
		{name: "up on first row", value: "abc", at: pos{0, 2}, inputs: []string{"up"}, want: "abc", wantPos: pos{0, 0}},
		{name: "home and end", value: "abc", at: pos{0, 1}, inputs: []string{"end", "X", "home", "Y"}, want: "YabcX", wantPos: pos{0, 1}},
		{name: "ctrl+a is home", value: "abc", at: pos{0, 2}, inputs: []string{"ctrl+a", "X"}, want: "Xabc", wantPos: pos{0, 1}},
		{name: "ctrl+e is left to the screen", value: "abc", at: pos{0, 1}, inputs: []string{"ctrl+e"}, want: "abc", wantPos: pos{0, 1}},
		{name: "text begin and end", value: "ab\ncd\nef", at: pos{1, 1}, inputs: []string{"ctrl+end", "X", "ctrl+home", "Y"}, want: "Yab\ncd\nefX", wantPos: pos{0, 1}},
		{name: "word right", value: "one two  three", inputs: []string{"ctrl+right", "ctrl+right", "X"}, want: "one twoX  three", wantPos: pos{0, 8}},
		{name: "word left", value: "one two  three", at: pos{0, 14}, inputs: []string{"ctrl+left", "ctrl+left", "X"}, want: "one Xtwo  three", wantPos: pos{0, 5}},
		{name: "delete word back", value: "one two  three", at: pos{0, 9}, inputs: []string{"alt+backspace"}, want: "one three", wantPos: pos{0, 4}},
		{name: "delete word back joins at line start", value: "ab\ncd", at: pos{1, 0}, inputs: []string{"alt+backspace"}, want: "abcd", wantPos: pos{0, 2}},
		{name: "delete to line end", value: "abcd\nef", at: pos{0, 1}, inputs: []string{"ctrl+k"}, want: "a\nef", wantPos: pos{0, 1}},
		{name: "delete to line end joins", value: "a\nef", at: pos{0, 1}, inputs: []string{"ctrl+k"}, want: "aef", wantPos: pos{0, 1}},
		{name: "delete to line start", value: "abcd", at: pos{0, 3}, inputs: []string{"ctrl+u"}, want: "d", wantPos: pos{0, 0}},
		{name: "tab", value: "ab", at: pos{0, 1}, inputs: []string{"tab"}, want: "a    b", wantPos: pos{0, 5}},
		{name: "paste", value: "start end", at: pos{0, 6}, inputs: []string{"paste:one\r\ntwo\rthree "}, want: "start one\ntwo\nthree end", wantPos: pos{2, 6}},
		{name: "paste one line", value: "ab", at: pos{0, 1}, inputs: []string{"paste:XYZ"}, want: "aXYZb", wantPos: pos{0, 4}},
		{name: "paste keeps control characters", value: "", inputs: []string{"paste:a\x1b[31mb"}, want: "a\x1b[31mb", wantPos: pos{0, 7}},
		{name: "crlf kept", value: "a\r\nb\r\n", at: pos{1, 1}, inputs: []string{"c", "enter", "d"}, want: "a\r\nbc\r\nd\r\n", wantPos: pos{2, 1}},
		{name: "crlf join", value: "a\r\nb", at: pos{1, 0}, inputs: []string{"backspace"}, want: "ab", wantPos: pos{0, 1}},
		{name: "mixed endings kept", value: "a\r\nb\nc", at: pos{1, 1}, inputs: []string{"X"}, want: "a\r\nbX\nc", wantPos: pos{1, 2}},
		{name: "missing final newline kept", value: "a\nb", at: pos{1, 1}, inputs: []string{"X"}, want: "a\nbX", wantPos: pos{1, 2}},
		{name: "final newline kept", value: "a\nb\n", at: pos{1, 1}, inputs: []string{"X"}, want: "a\nbX\n", wantPos: pos{1, 2}},
		{name: "invalid utf-8 kept", value: "ok\xff\xfe\nsecond\xc3", at: pos{1, 6}, inputs: []string{"!"}, want: "ok\xff\xfe\nsecond!\xc3", wantPos: pos{1, 7}},
		{name: "edit next to invalid utf-8", value: "ok\xff\xfe", at: pos{0, 2}, inputs: []string{"right", "Z"}, want: "ok\xffZ\xfe", wantPos: pos{0, 4}},
		{name: "replacement character is one character", value: "a\ufffdb", at: pos{0, 1}, inputs: []string{"delete"}, want: "ab", wantPos: pos{0, 1}},
		{name: "backspace invalid byte", value: "a\xffb", at: pos{0, 2}, inputs: []string{"backspace"}, want: "ab", wantPos: pos{0, 1}},
		{name: "read-only ignores edits", value: "abc\ndef", readOnly: true, inputs: []string{"X", "enter", "backspace", "delete", "tab", "ctrl+k", "paste:zzz", "right", "down"}, want: "abc\ndef", wantPos: pos{1, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			width := tt.width
			if width == 0 {
				width = 40
			}
			m := mustModel(t, tt.value, width, 5, tt.at.line, tt.at.col)
			m.SetReadOnly(tt.readOnly)
			m = send(t, m, tt.inputs...)
			if got := m.Value(); got != tt.want {
				t.Errorf("Value() = %q, want %q", got, tt.want)
			}
			if line, col := m.Position(); (pos{line, col}) != tt.wantPos {
				t.Errorf("Position() = %d, %d, want %d, %d", line, col, tt.wantPos.line, tt.wantPos.col)
			}
			if got, want := m.Changed(), tt.want != tt.value; got != want {
				t.Errorf("Changed() = %v, want %v", got, want)
			}
			if got, want := m.LineCount(), strings.Count(tt.want, "\n")+1; got != want {
				t.Errorf("LineCount() = %d, want %d", got, want)
			}
		})
	}
}

func TestModel_UpdateBlurred(t *testing.T) {
	m := mustModel(t, "abc", 20, 5, 0, 0)
	m.Blur()
	m = send(t, m, "X", "enter", "paste:Y")
	if got := m.Value(); got != "abc" {
		t.Errorf("blurred editor took input: Value() = %q", got)
	}
}

func TestModel_Revision(t *testing.T) {
	m := mustModel(t, "abc", 20, 5, 0, 0)
	r0 := m.Revision()
	m = send(t, m, "right", "left")
	if m.Revision() != r0 || m.Changed() {
		t.Errorf("cursor moves changed the revision: %d -> %d, Changed %v", r0, m.Revision(), m.Changed())
	}
	m = send(t, m, "X")
	if m.Revision() == r0 || !m.Changed() {
		t.Errorf("typing did not change the revision: %d -> %d, Changed %v", r0, m.Revision(), m.Changed())
	}
	m.MarkSaved()
	if m.Changed() {
		t.Error("Changed() after MarkSaved")
	}
}

func TestModel_SetValueRoundTrip(t *testing.T) {
	for _, v := range []string{
		"", "\n", "\r\n", "a", "a\n", "a\r\n", "a\r\nb", "a\r\nb\r", "a\rb", "a\r\nb\nc\r\n",
		"\xff\xfe\xfd", "x\xc3\ny\r\n", "\ufffd\xff", "\x1b[2J\x07", "日本語\n👩‍👩‍👧\n", "\t\ttabs\t",
	} {
		m := New()
		m.SetValue(v)
		if got := m.Value(); got != v {
			t.Errorf("SetValue(%q) then Value() = %q", v, got)
		}
		if m.Changed() {
			t.Errorf("SetValue(%q): Changed() = true", v)
		}
	}
}

// view returns m's view split into lines.
func view(m Model) []string { return strings.Split(m.View(), "\n") }

func checkView(t *testing.T, m Model, want []string) {
	t.Helper()
	got := view(m)
	if len(got) != len(want) {
		t.Fatalf("View() has %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("View() line %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestModel_View(t *testing.T) {
	for _, tt := range []struct {
		name   string
		value  string
		inputs []string
		want   []string
	}{
		{
			name:  "wrap",
			value: "The quick brown fox jumps over the lazy dog.\nShort line\n\nlast",
			want: []string{
				"The quick brown fox ",
				"jumps over the lazy ",
				"dog.                ",
				"Short line          ",
				"                    ",
			},
		},
		{
			name:  "long word broken",
			value: "abcdefghijklmnopqrstuvwxyz",
			want: []string{
				"abcdefghijklmnopqrst",
				"uvwxyz              ",
				"                    ",
				"                    ",
				"                    ",
			},
		},
		{
			name:  "wide characters",
			value: "日本語のテキストを折り返す\nab日本",
			want: []string{
				"日本語のテキストを折",
				"り返す              ",
				"ab日本              ",
				"                    ",
				"                    ",
			},
		},
		{
			name:  "wide character not split at the edge",
			value: "abcdefghijklmnopqrs日本",
			want: []string{
				"abcdefghijklmnopqrs ",
				"日本                ",
				"                    ",
				"                    ",
				"                    ",
			},
		},
		{
			name:  "tabs",
			value: "a\tb\tc\n\tx",
			want: []string{
				"a   b   c           ",
				"    x               ",
				"                    ",
				"                    ",
				"                    ",
			},
		},
		{
			name:  "control characters escaped",
			value: "a\x1b[31mred\x07\rz\nbad\xffbyte\u202e",
			want: []string{
				`a\x1b[31mred\x07\rz `,
				`bad\xffbyte\u202e   `,
				"                    ",
				"                    ",
				"                    ",
			},
		},
		{
			name:   "scrolled to the end",
			value:  numbered(30),
			inputs: []string{"ctrl+end"},
			want: []string{
				"line 26             ",
				"line 27             ",
				"line 28             ",
				"line 29             ",
				"line 30             ",
			},
		},
		{
			name:   "page down",
			value:  numbered(30),
			inputs: []string{"pgdown"},
			want: []string{
				"line 06             ",
				"line 07             ",
				"line 08             ",
				"line 09             ",
				"line 10             ",
			},
		},
		{
			name:   "page down then up",
			value:  numbered(30),
			inputs: []string{"pgdown", "pgdown", "pgup"},
			want: []string{
				"line 06             ",
				"line 07             ",
				"line 08             ",
				"line 09             ",
				"line 10             ",
			},
		},
		{
			name:   "page down stops at the end",
			value:  numbered(7),
			inputs: []string{"pgdown", "pgdown"},
			want: []string{
				"line 03             ",
				"line 04             ",
				"line 05             ",
				"line 06             ",
				"line 07             ",
			},
		},
		{
			name:   "scroll by a wrapped row",
			value:  "one\ntwo\nthree\n" + strings.Repeat("word ", 12) + "\nend",
			inputs: []string{"down", "down", "down", "down", "down"},
			want: []string{
				"two                 ",
				"three               ",
				"word word word word ",
				"word word word word ",
				"word word word word ",
			},
		},
		{
			name:   "scroll back into a wrapped line",
			value:  strings.Repeat("word ", 12) + "\na\nb\nc\nd",
			inputs: []string{"ctrl+end", "up", "up", "up", "up", "up"},
			want: []string{
				"word word word word ",
				"                    ",
				"a                   ",
				"b                   ",
				"c                   ",
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := mustModel(t, tt.value, 20, 5, 0, 0)
			m = send(t, m, tt.inputs...)
			m.Blur()
			checkView(t, m, tt.want)
		})
	}
}

// numbered returns n lines "line 01", "line 02", … without a final newline.
func numbered(n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = "line " + string(rune('0'+(i+1)/10)) + string(rune('0'+(i+1)%10))
	}
	return strings.Join(lines, "\n")
}

func TestModel_ViewCursor(t *testing.T) {
	rev := func(s string) string { return lipgloss.NewStyle().Reverse(true).Render(s) }
	for _, tt := range []struct {
		name   string
		value  string
		inputs []string
		want   []string
	}{
		{name: "start", value: "abc", want: []string{rev("a") + "bc       ", "          "}},
		{name: "end of line", value: "abc", inputs: []string{"end"}, want: []string{"abc" + rev(" ") + "      ", "          "}},
		{name: "wide", value: "a日b", inputs: []string{"right"}, want: []string{"a" + rev("日") + "b      ", "          "}},
		{name: "end of a full row", value: "abcdefghij", inputs: []string{"end"}, want: []string{"abcdefghij", rev(" ") + "         "}},
		{name: "on a hanging space", value: "abcdefghij klm", inputs: []string{"end", "ctrl+left", "left"}, want: []string{"abcdefghi" + rev(" "), "klm       "}},
		{name: "on an escaped control", value: "a\x1bb", inputs: []string{"right"}, want: []string{"a" + rev(`\x1b`) + "b    ", "          "}},
		{name: "on a tab", value: "a\tb", inputs: []string{"right"}, want: []string{"a" + rev("   ") + "b     ", "          "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := mustModel(t, tt.value, 10, 2, 0, 0)
			m = send(t, m, tt.inputs...)
			checkView(t, m, tt.want)
		})
	}
}

func TestModel_ViewNeverWritesContentEscapes(t *testing.T) {
	value := "\x1b]0;pwned\x07\x1b[2J\x9b31m\x1bP+q\x1b\\\nnext\x1b"
	m := mustModel(t, value, 30, 6, 0, 0)
	m = send(t, m, "right", "right", "down")
	cursor := m.CursorStyle.Render("")
	// The only escapes allowed are the cursor's own SGR sequences around one cell.
	out := m.View()
	open, close, _ := strings.Cut(m.CursorStyle.Render("\x00"), "\x00")
	_ = cursor
	out = strings.ReplaceAll(out, open, "")
	out = strings.ReplaceAll(out, close, "")
	if i := strings.IndexAny(out, "\x1b\x07\x9b\u009b"); i >= 0 {
		t.Fatalf("View() writes a raw control character at %d: %q", i, out)
	}
	if !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Errorf("View() does not show the escape visibly: %q", out)
	}
	m.Blur()
	if out := m.View(); strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("blurred View() contains a raw control character: %q", out)
	}
}

func TestModel_ViewSizes(t *testing.T) {
	m := mustModel(t, "hello\nworld", 0, 0, 0, 0)
	if got := m.View(); got != "" {
		t.Errorf("View() at 0x0 = %q, want empty", got)
	}
	m.SetSize(1, 3)
	m = send(t, m, "ctrl+end", "X", "日")
	m.Blur()
	checkView(t, m, []string{"X", " ", " "})
}

func TestModel_Resize(t *testing.T) {
	m := mustModel(t, strings.Repeat("word ", 20), 20, 2, 0, 0)
	m = send(t, m, "ctrl+end")
	m.SetSize(10, 2)
	m.Blur()
	checkView(t, m, []string{"word word ", "          "})
	m.SetSize(30, 2)
	checkView(t, m, []string{"word word word word word word ", "word word                     "})
}
