package bodyedit

import "charm.land/bubbles/v2/key"

// KeyMap is the set of keys the body editor answers to. A binding can be switched off with
// SetEnabled(false) when the surrounding screen needs its key (for example InsertTab when tab
// moves between fields). Printable keys and pastes are always text.
type KeyMap struct {
	CharacterForward        key.Binding
	CharacterBackward       key.Binding
	WordForward             key.Binding
	WordBackward            key.Binding
	LineNext                key.Binding
	LinePrevious            key.Binding
	LineStart               key.Binding
	LineEnd                 key.Binding
	PageUp                  key.Binding
	PageDown                key.Binding
	InputBegin              key.Binding
	InputEnd                key.Binding
	InsertNewline           key.Binding
	InsertTab               key.Binding
	DeleteCharacterBackward key.Binding
	DeleteCharacterForward  key.Binding
	DeleteWordBackward      key.Binding
	DeleteAfterCursor       key.Binding
	DeleteBeforeCursor      key.Binding
	Undo                    key.Binding
	Redo                    key.Binding
}

// DefaultKeyMap returns the editor's default keys. It leaves ctrl+e (open in $EDITOR), ctrl+s
// (save), esc and shift+tab to the screen around the editor.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		CharacterForward:        key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "character forward")),
		CharacterBackward:       key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "character backward")),
		WordForward:             key.NewBinding(key.WithKeys("ctrl+right", "alt+right", "alt+f"), key.WithHelp("ctrl+→", "word forward")),
		WordBackward:            key.NewBinding(key.WithKeys("ctrl+left", "alt+left", "alt+b"), key.WithHelp("ctrl+←", "word backward")),
		LineNext:                key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "next line")),
		LinePrevious:            key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "previous line")),
		LineStart:               key.NewBinding(key.WithKeys("home", "ctrl+a"), key.WithHelp("home", "line start")),
		LineEnd:                 key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "line end")),
		PageUp:                  key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown:                key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdown", "page down")),
		InputBegin:              key.NewBinding(key.WithKeys("ctrl+home", "alt+<"), key.WithHelp("ctrl+home", "start of text")),
		InputEnd:                key.NewBinding(key.WithKeys("ctrl+end", "alt+>"), key.WithHelp("ctrl+end", "end of text")),
		InsertNewline:           key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "new line")),
		InsertTab:               key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "indent")),
		DeleteCharacterBackward: key.NewBinding(key.WithKeys("backspace"), key.WithHelp("backspace", "delete back")),
		DeleteCharacterForward:  key.NewBinding(key.WithKeys("delete"), key.WithHelp("delete", "delete forward")),
		DeleteWordBackward:      key.NewBinding(key.WithKeys("alt+backspace", "ctrl+backspace"), key.WithHelp("alt+backspace", "delete word back")),
		DeleteAfterCursor:       key.NewBinding(key.WithKeys("ctrl+k"), key.WithHelp("ctrl+k", "delete to line end")),
		DeleteBeforeCursor:      key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "delete to line start")),
		Undo:                    key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "undo")),
		Redo:                    key.NewBinding(key.WithKeys("ctrl+y"), key.WithHelp("ctrl+y", "redo")),
	}
}

// ShortHelp returns the keys worth showing in a footer.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.PageUp, k.PageDown, k.InputBegin, k.InputEnd}
}

// FullHelp returns all of the editor's keys in groups, for a help screen.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.CharacterForward, k.CharacterBackward, k.WordForward, k.WordBackward, k.LineNext, k.LinePrevious},
		{k.LineStart, k.LineEnd, k.PageUp, k.PageDown, k.InputBegin, k.InputEnd},
		{k.InsertNewline, k.InsertTab, k.DeleteCharacterBackward, k.DeleteCharacterForward, k.DeleteWordBackward, k.DeleteAfterCursor, k.DeleteBeforeCursor, k.Undo, k.Redo},
	}
}
