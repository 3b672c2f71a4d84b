package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"go.yaml.in/yaml/v3"
)

// The key map file rebinds any of the TUI's keys: $XDG_CONFIG_HOME/tandem/keys.yaml
// (os.UserConfigDir: ~/.config on Linux when XDG_CONFIG_HOME is unset). Each entry names an
// action, the KeyMap field in snake case, and gives its key or keys, which replace the
// default ones:
//
//	save: ctrl+w
//	open_lease: [e, E]
//	pick_theirs: "9"
//
// The footers and the help show the keys as bound. A file that cannot be used (bad YAML,
// an unknown action or key, a key bound to two actions of one screen) is reported and the
// defaults are used, all of them: the TUI never runs on half a key map.

// KeyFileName is the key map file's name in the user's tandem config directory.
const KeyFileName = "keys.yaml"

// DefaultKeyFile is the key map file's path: $XDG_CONFIG_HOME/tandem/keys.yaml, or where
// os.UserConfigDir says; "" when there is no config directory.
func DefaultKeyFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "tandem", KeyFileName)
}

// LoadKeyMap returns the default keys with the rebindings of the file at path. A missing
// file (or path "") gives the defaults and no error; a file that cannot be used gives the
// defaults and an EINVALID-like error that names the file and what is wrong in it.
func LoadKeyMap(path string) (KeyMap, error) {
	def := DefaultKeyMap()
	if path == "" {
		return def, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return def, nil
	}
	if err != nil {
		return def, fmt.Errorf("key map %s: %w", path, err)
	}
	km, err := parseKeyMap(data)
	if err != nil {
		return def, fmt.Errorf("key map %s: %w; using the default keys", path, err)
	}
	return km, nil
}

// parseKeyMap applies the rebindings in data to the default keys.
func parseKeyMap(data []byte) (KeyMap, error) {
	km := DefaultKeyMap()
	var raw map[string]yaml.Node
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return km, fmt.Errorf("not YAML of the form action: key: %w", err)
	}
	fields := actionFields()
	v := reflect.ValueOf(&km).Elem()
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	slices.Sort(names)
	rebound := map[string]bool{}
	for _, name := range names {
		node := raw[name]
		idx, ok := fields[name]
		if !ok {
			return DefaultKeyMap(), fmt.Errorf("line %d: unknown action %q (docs/tui.md, \"Your own keys\", lists the actions)", node.Line, name)
		}
		var keys []string
		if node.Kind == yaml.SequenceNode {
			if err := node.Decode(&keys); err != nil {
				return DefaultKeyMap(), fmt.Errorf("line %d: %s: want a key or a list of keys", node.Line, name)
			}
		} else {
			var one string
			if err := node.Decode(&one); err != nil {
				return DefaultKeyMap(), fmt.Errorf("line %d: %s: want a key or a list of keys", node.Line, name)
			}
			keys = []string{one}
		}
		if len(keys) == 0 {
			return DefaultKeyMap(), fmt.Errorf("line %d: %s: no key given", node.Line, name)
		}
		for _, k := range keys {
			if !validKey(k) {
				return DefaultKeyMap(), fmt.Errorf("line %d: %s: unknown key %q (a character, or a name such as enter, esc, tab, up, f5, ctrl+w, alt+x)", node.Line, name, k)
			}
		}
		b := v.Field(idx).Addr().Interface().(*key.Binding)
		*b = key.NewBinding(key.WithKeys(keys...), key.WithHelp(keyLabel(keys), b.Help().Desc))
		rebound[name] = true
	}
	km.custom = len(rebound) > 0
	if err := clashes(km, rebound); err != nil {
		return DefaultKeyMap(), err
	}
	return km, nil
}

// actionFields maps each action name to its KeyMap field's index.
func actionFields() map[string]int {
	t := reflect.TypeFor[KeyMap]()
	out := map[string]int{}
	for i := range t.NumField() {
		if f := t.Field(i); f.Type == reflect.TypeFor[key.Binding]() {
			out[snake(f.Name)] = i
		}
	}
	return out
}

// ActionNames returns the names a key map file gives actions, sorted.
func ActionNames() []string {
	var out []string
	for name := range actionFields() {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// snake turns a field name into an action name: OpenLease → open_lease.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// namedKeys are the keys a file may name besides a single character.
var namedKeys = map[string]bool{
	"enter": true, "esc": true, "tab": true, "space": true, "backspace": true, "delete": true, "insert": true,
	"up": true, "down": true, "left": true, "right": true, "home": true, "end": true, "pgup": true, "pgdown": true,
}

// validKey reports whether k names a key as the TUI receives it: a character, a named key
// or f1–f20, with ctrl+, alt+ or shift+ before it.
func validKey(k string) bool {
	base := k
	for {
		rest, ok := cutAny(base, "ctrl+", "alt+", "shift+")
		if !ok {
			break
		}
		base = rest
	}
	if base == "" {
		return false
	}
	if utf8.RuneCountInString(base) == 1 {
		r, _ := utf8.DecodeRuneInString(base)
		return unicode.IsPrint(r) && !unicode.IsSpace(r)
	}
	if namedKeys[base] {
		return true
	}
	var n int
	if _, err := fmt.Sscanf(base, "f%d", &n); err == nil && fmt.Sprintf("f%d", n) == base && n >= 1 && n <= 20 {
		return true
	}
	return false
}

// cutAny cuts the first of prefixes s starts with.
func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest, true
		}
	}
	return s, false
}

// keyScreens are the actions each screen takes keys for: within one, a key means one
// action. The global keys count on the screens where they work.
var keyScreens = []struct {
	name    string
	actions []string
}{
	{"list", []string{"help", "help_anywhere", "quit", "force_quit", "up", "down", "page_up", "page_down", "switch_kind", "filter", "open", "open_lease", "new", "history", "locks", "sort_next", "sort_reverse", "fold", "sync", "delete", "restore"}},
	{"editor", []string{"help_anywhere", "force_quit", "next_field", "prev_field", "inc", "dec", "save", "back", "ext_editor", "restore_draft", "undo_edit", "redo_edit", "move_doc", "open_conflict", "delete_in_editor"}},
	{"conflict dialog", []string{"help", "help_anywhere", "force_quit", "reload", "retry", "merge", "back"}},
	{"merge view", []string{"help", "help_anywhere", "force_quit", "up", "down", "pick_mine", "pick_theirs", "pick_base", "pick_both", "edit_value", "next_hunk", "prev_hunk", "all_mine", "all_theirs", "words", "undo", "save", "back"}},
	{"history", []string{"help", "help_anywhere", "force_quit", "up", "down", "page_up", "page_down", "top", "bottom", "switch_tab", "revert", "restore", "back"}},
	{"locks", []string{"help", "help_anywhere", "force_quit", "up", "down", "open", "back"}},
	{"questions", []string{"force_quit", "yes", "no", "subtree"}},
}

// clashes finds a key the file bound to two actions of one screen that the defaults did
// not bind together.
func clashes(km KeyMap, rebound map[string]bool) error {
	fields := actionFields()
	got, def := reflect.ValueOf(km), reflect.ValueOf(DefaultKeyMap())
	keysOf := func(v reflect.Value, action string) []string {
		return v.Field(fields[action]).Interface().(key.Binding).Keys()
	}
	for _, scr := range keyScreens {
		for i, a := range scr.actions {
			for _, b := range scr.actions[i+1:] {
				if !rebound[a] && !rebound[b] {
					continue
				}
				for _, k := range keysOf(got, a) {
					if slices.Contains(keysOf(got, b), k) && !(slices.Contains(keysOf(def, a), k) && slices.Contains(keysOf(def, b), k)) {
						return fmt.Errorf("key %s is bound to both %s and %s on the %s screen", k, a, b, scr.name)
					}
				}
			}
		}
	}
	return nil
}

// keyLabel is how the help and the footers name keys: each once, arrows as arrows.
func keyLabel(keys []string) string {
	show := map[string]string{"up": "↑", "down": "↓", "left": "←", "right": "→", "pgdown": "pgdn"}
	var out []string
	for _, k := range keys {
		if s, ok := show[k]; ok {
			k = s
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return strings.Join(out, "/")
}
