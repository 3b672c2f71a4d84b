package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key binding of the TUI. It drives key matching, the footer of each screen
// and the help screen, so the three never disagree. The keys are a contract (issue 6): tests
// and docs/tui.md rely on them.
type KeyMap struct {
	// Global. Help (?) works wherever ? is not typed text; HelpAnywhere (f1) works
	// everywhere, also while typing into a field.
	Help         key.Binding
	HelpAnywhere key.Binding
	Quit         key.Binding
	ForceQuit    key.Binding // quits everywhere, also while typing
	Confirm      key.Binding // takes what was typed: the filter, a value in the merge view

	// List.
	Up          key.Binding
	Down        key.Binding
	PageUp      key.Binding
	PageDown    key.Binding
	Top         key.Binding // history: the newest entry
	Bottom      key.Binding // history: the oldest entry, loading what is not loaded yet
	SwitchKind  key.Binding
	Filter      key.Binding
	Open        key.Binding
	OpenLease   key.Binding
	New         key.Binding
	History     key.Binding
	Locks       key.Binding
	SortNext    key.Binding
	SortReverse key.Binding
	Fold        key.Binding
	Sync        key.Binding // a working copy: sync with its source

	// Editor.
	NextField    key.Binding
	PrevField    key.Binding
	Inc          key.Binding
	Dec          key.Binding
	Save         key.Binding
	Back         key.Binding
	ExtEditor    key.Binding
	RestoreDraft key.Binding
	UndoEdit     key.Binding // the focused field's last edit
	RedoEdit     key.Binding
	MoveDoc      key.Binding // a record of a tree: pick a new parent; a reference field: pick its record
	OpenConflict key.Binding // a working copy: open the conflict a sync left on the record
	// ArrowUp and ArrowDown move in a picker where letters are typed text (the ref picker).
	ArrowUp   key.Binding
	ArrowDown key.Binding

	// Yes/no questions (unsaved changes, a draft to restore).
	Yes key.Binding
	No  key.Binding

	// Conflict dialog.
	Reload key.Binding
	Retry  key.Binding
	Merge  key.Binding

	// Merge view.
	PickMine   key.Binding
	PickTheirs key.Binding
	PickBase   key.Binding
	PickBoth   key.Binding
	EditValue  key.Binding
	NextHunk   key.Binding
	PrevHunk   key.Binding
	AllMine    key.Binding
	AllTheirs  key.Binding
	Words      key.Binding // show a text hunk's word-level merge; Confirm takes it
	Undo       key.Binding

	// History.
	SwitchTab key.Binding
	Revert    key.Binding

	// Delete and restore (delete.go).
	Delete         key.Binding // list, and editor when not typing
	DeleteInEditor key.Binding // editor, also while typing
	Subtree        key.Binding // the delete confirmation of a document
	Restore        key.Binding // history (a deleted record), list (the last delete)

	// custom says a key map file rebound some keys: the help then names keys from the
	// bindings instead of its short hand-made labels (keyfile.go).
	custom bool
}

// moveHelp is what ctrl+o does in the editor of a tree kind's record.
const moveHelp = "move (parent)"

// DefaultKeyMap returns tandem's keys.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		Help:         b([]string{"?", "f1"}, "?", "help"),
		HelpAnywhere: b([]string{"f1"}, "f1", "help"),
		Quit:         b([]string{"q", "ctrl+c"}, "q", "quit"),
		ForceQuit:    b([]string{"ctrl+c"}, "ctrl+c", "quit"),
		Confirm:      b([]string{"enter"}, "enter", "apply"),

		Up:          b([]string{"k", "up"}, "k/↑", "up"),
		Down:        b([]string{"j", "down"}, "j/↓", "down"),
		PageUp:      b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown:    b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Top:         b([]string{"home", "g"}, "home/g", "newest"),
		Bottom:      b([]string{"end", "G"}, "end/G", "oldest"),
		SwitchKind:  b([]string{"tab"}, "tab", "products/documents"),
		Filter:      b([]string{"/"}, "/", "filter"),
		Open:        b([]string{"enter"}, "enter", "edit"),
		OpenLease:   b([]string{"e"}, "e", "edit with lease"),
		New:         b([]string{"n"}, "n", "new"),
		History:     b([]string{"h"}, "h", "history"),
		Locks:       b([]string{"L"}, "L", "locks"),
		SortNext:    b([]string{"s"}, "s", "sort column"),
		SortReverse: b([]string{"o"}, "o", "reverse order"),
		Fold:        b([]string{"f"}, "f", "fold/unfold"),
		Sync:        b([]string{"S"}, "S", "sync (working copy)"),

		NextField:    b([]string{"tab"}, "tab", "next field"),
		PrevField:    b([]string{"shift+tab"}, "shift+tab", "prev field"),
		Inc:          b([]string{"+"}, "+/-", "counter ±1"),
		Dec:          b([]string{"-"}, "-", "stock -1"),
		Save:         b([]string{"ctrl+s"}, "ctrl+s", "save"),
		Back:         b([]string{"esc"}, "esc", "back"),
		ExtEditor:    b([]string{"ctrl+e"}, "ctrl+e", "$EDITOR"),
		RestoreDraft: b([]string{"ctrl+r"}, "ctrl+r", "bring back my draft"),
		UndoEdit:     b([]string{"ctrl+z"}, "ctrl+z", "undo"),
		RedoEdit:     b([]string{"ctrl+y"}, "ctrl+y", "redo"),
		MoveDoc:      b([]string{"ctrl+o"}, "ctrl+o", moveHelp),
		OpenConflict: b([]string{"ctrl+g"}, "ctrl+g", "open conflict"),
		ArrowUp:      b([]string{"up"}, "↑", "up"),
		ArrowDown:    b([]string{"down"}, "↓", "down"),

		Yes: b([]string{"y"}, "y", "yes"),
		No:  b([]string{"n", "esc"}, "n", "no"),

		Reload: b([]string{"r"}, "r", "reload theirs"),
		Retry:  b([]string{"a"}, "a", "retry"),
		Merge:  b([]string{"m"}, "m", "merge"),

		PickMine:   b([]string{"1"}, "1", "mine"),
		PickTheirs: b([]string{"2"}, "2", "theirs"),
		PickBase:   b([]string{"3"}, "3", "base"),
		PickBoth:   b([]string{"b"}, "b", "both"),
		EditValue:  b([]string{"enter"}, "enter", "edit value"),
		NextHunk:   b([]string{"n"}, "n/p", "next/prev hunk"),
		PrevHunk:   b([]string{"p"}, "p", "prev hunk"),
		AllMine:    b([]string{"M"}, "M/T", "all mine/theirs"),
		AllTheirs:  b([]string{"T"}, "T", "all theirs"),
		Words:      b([]string{"w"}, "w", "word merge"),
		Undo:       b([]string{"u"}, "u", "undo"),

		SwitchTab: b([]string{"tab"}, "tab", "versions/op log"),
		Revert:    b([]string{"r"}, "r", "revert to it"),

		Delete:         b([]string{"d"}, "d", "delete"),
		DeleteInEditor: b([]string{"ctrl+x"}, "ctrl+x", "delete record"),
		Subtree:        b([]string{"s"}, "s", "subtree"),
		Restore:        b([]string{"R"}, "R", "restore"),
	}
}

// ListKeys are the list's keys, in footer order.
func (k KeyMap) ListKeys() []key.Binding {
	return []key.Binding{k.Open, k.OpenLease, k.New, k.Filter, k.SwitchKind, k.SortNext, k.Fold, k.History, k.Locks, k.Delete, k.Up, k.Down, k.Help, k.Quit}
}

// EditorKeys are the editor's keys, in footer order.
func (k KeyMap) EditorKeys() []key.Binding {
	return []key.Binding{k.Save, k.HelpAnywhere, k.NextField, k.PrevField, k.Inc, k.UndoEdit, k.MoveDoc, k.ExtEditor, k.RestoreDraft, k.DeleteInEditor, k.Back}
}

// MoveKeys are the move picker's keys.
func (k KeyMap) MoveKeys() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.pair(k.Confirm, k.Confirm, "enter", "move here"), k.Back}
}

// RefPickKeys are the reference picker's keys.
func (k KeyMap) RefPickKeys() []key.Binding {
	return []key.Binding{k.pair(k.ArrowUp, k.ArrowDown, "↑/↓", "choose"), k.pair(k.Confirm, k.Confirm, "enter", "pick"), k.Back}
}

// ConflictKeys are the conflict dialog's keys.
func (k KeyMap) ConflictKeys() []key.Binding {
	return []key.Binding{k.Reload, k.Retry, k.Merge, k.Back}
}

// MergeKeys are the merge view's keys.
func (k KeyMap) MergeKeys() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PickMine, k.PickTheirs, k.PickBase, k.PickBoth, k.EditValue, k.NextHunk, k.AllMine, k.Words, k.Undo, k.Save, k.Back}
}

// CopyDeleteKeys are the keys of a working copy's delete conflict (workcopy_delete.go): the
// merge view's mine and theirs, for the whole record. mine is left out when it is not
// offered (the source refused the delete as it is, and would refuse it again).
func (k KeyMap) CopyDeleteKeys(mine bool) []key.Binding {
	out := make([]key.Binding, 0, 4)
	if mine {
		out = append(out, k.pair(k.PickMine, k.PickMine, k.PickMine.Help().Key, "mine: delete there too"))
	}
	return append(out, k.pair(k.PickTheirs, k.PickTheirs, k.PickTheirs.Help().Key, "theirs: keep it"), k.Back, k.Help)
}

// CopyCreateKeys are the keys of a working copy's refused create (workcopy_conflicts.go);
// field says the refusal names a field, which takes a new value or is tried again.
func (k KeyMap) CopyCreateKeys(field bool) []key.Binding {
	out := make([]key.Binding, 0, 5)
	if field {
		out = append(out, k.pair(k.EditValue, k.EditValue, k.EditValue.Help().Key, "new value"),
			k.pair(k.PickMine, k.PickMine, k.PickMine.Help().Key, "try again"))
	}
	return append(out, k.pair(k.Delete, k.Delete, k.Delete.Help().Key, "drop it"), k.Back, k.Help)
}

// HistoryKeys are the history screen's keys.
func (k KeyMap) HistoryKeys() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Revert, k.SwitchTab, k.Restore, k.Back}
}

// LocksKeys are the locks overview's keys.
func (k KeyMap) LocksKeys() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Open, k.Back}
}

// helpGroup is one screen's keys on the help screen.
type helpGroup struct {
	title string
	keys  []key.Binding
}

// pair shows two bindings as one help line ("j/k move"), to keep the help on one screen.
func pair(a, b key.Binding, keys, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(append(a.Keys(), b.Keys()...)...), key.WithHelp(keys, desc))
}

// pair is pair with the label keys while the keys are tandem's, and the keys as bound
// when a key map file rebound some ("]/[" for a rebound k/j).
func (k KeyMap) pair(a, b key.Binding, keys, desc string) key.Binding {
	if k.custom && keys != "" {
		keys = keyLabel(append(a.Keys(), b.Keys()...))
	}
	return pair(a, b, keys, desc)
}

// Titles of the help screen's groups. helpEverywhere holds the keys every screen shares, so
// the other groups need not repeat them.
const (
	helpEverywhere = "everywhere"
	helpList       = "list"
	helpEditor     = "editor"
	helpConflict   = "conflict dialog"
	helpMerge      = "merge view"
	helpHistory    = "history"
	helpLocks      = "locks"
	helpMove       = "move picker"
	helpQuestions  = "questions"
)

// helpGroups returns every key by screen, for the help screen, in columns of groups. The
// three columns fit 80x24 (tested): keys that belong together share a line, and help-only
// descriptions are shorter than the footers' where a column would be too wide.
func (k KeyMap) helpGroups() [][]helpGroup {
	move := k.pair(k.Up, k.Down, "k/j ↑/↓", "move")
	page := k.pair(k.PageUp, k.PageDown, "pgup/dn", "page up/down")
	return [][]helpGroup{
		{
			{helpList, []key.Binding{k.pair(k.Open, k.OpenLease, "enter/e", "edit / with lease"), k.New, k.Filter, k.SwitchKind,
				k.pair(k.SortNext, k.SortReverse, "s/o", "sort col/reverse"), k.Fold, k.pair(k.History, k.Locks, "h/L", "history/locks"),
				k.pair(k.Sync, k.Sync, "S", "sync work copy"), k.Delete, k.pair(k.Restore, k.Restore, "R", "undo a delete"), move, page, k.Quit}},
			{helpHistory, []key.Binding{move, page, k.pair(k.Top, k.Bottom, "g/G", "newest/oldest"), k.Revert, k.SwitchTab, k.Restore}},
		},
		{
			{helpEditor, []key.Binding{k.Save, k.NextField, k.PrevField, k.pair(k.Inc, k.Dec, "+/-", "counter ±1"),
				k.pair(k.UndoEdit, k.RedoEdit, "ctrl+z/y", "undo/redo"), k.MoveDoc, k.ExtEditor, k.RestoreDraft, k.DeleteInEditor, k.OpenConflict}},
			{helpMerge, []key.Binding{move, k.pair(k.pair(k.PickMine, k.PickTheirs, "1/2", ""), k.PickBase, "1/2/3", "mine/theirs/base"), k.PickBoth,
				k.EditValue, k.pair(k.NextHunk, k.PrevHunk, "n/p", "next/prev hunk"), k.pair(k.AllMine, k.AllTheirs, "M/T", "all mine/theirs"),
				k.pair(k.Words, k.Words, "w", "word-level merge"), k.Undo, k.Save}},
		},
		{
			{helpEverywhere, []key.Binding{k.pair(k.Help, k.HelpAnywhere, "?/f1", "help"), k.Back, k.ForceQuit}},
			{helpConflict, []key.Binding{k.Reload, k.Retry, k.Merge}},
			{helpLocks, []key.Binding{move, k.pair(k.Open, k.Open, "enter", "open record")}},
			{helpMove, []key.Binding{move, page, k.pair(k.Confirm, k.Confirm, "enter", "move here")}},
			{helpQuestions, []key.Binding{k.pair(k.Yes, k.No, "y/n", "yes/no"), k.pair(k.Subtree, k.Subtree, "s", "delete subtree")}},
		},
	}
}

// keyName is the key b is pressed with, as bound (a key map file may rebind it): what a
// message or a banner tells the person to press.
func keyName(b key.Binding) string {
	if ks := b.Keys(); len(ks) > 0 {
		return keyLabel(ks[:1])
	}
	return b.Help().Key
}
