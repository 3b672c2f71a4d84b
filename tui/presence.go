package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Live presence: who has a record open in an editor right now. The app announces the record
// its editor has open (store.Presences), refreshes it every presenceRefreshTicks ticks while
// the editor stays open, and leaves when it closes; a killed TUI's presence expires with its
// TTL. Every presencePollTicks ticks it reads the presence of the list's kind (and of the
// editor's record), and the list rows and the editor header say "bob editing". Presence
// never blocks anything and its errors are not shown: it is a hint, not a lock.

// Presence timing, in one-second ticks: refreshed at a third of store.DefaultPresenceTTL.
const (
	presenceRefreshTicks = 5
	presencePollTicks    = 2
)

// presenceKey is a record an editor has open.
type presenceKey struct {
	kind store.Kind
	id   int64
}

// presenceState is the app's side of presence.
type presenceState struct {
	session string       // this TUI's editor session
	mine    *presenceKey // what it announces now
	ticks   int
	others  map[store.Kind]map[int64][]store.Presence // the last poll, without this session
}

// presenceMsg is the answer to a presence poll.
type presenceMsg struct {
	kind store.Kind
	id   int64 // 0: the whole kind
	ps   []store.Presence
	err  error
}

func newPresenceState() *presenceState {
	return &presenceState{session: store.NewPresenceSession(), others: map[store.Kind]map[int64][]store.Presence{}}
}

// presenceCmd keeps the announced record in step with the open editor, refreshes it, and
// polls, after msg was handled.
func (a *App) presenceCmd(msg tea.Msg) tea.Cmd {
	p, c := a.c.presence, a.c
	var want *presenceKey
	if a.editor != nil && a.editor.id != 0 && !a.quitting {
		want = &presenceKey{a.editor.kind, a.editor.id}
	}
	var cmds []tea.Cmd
	if (want == nil) != (p.mine == nil) || want != nil && *want != *p.mine {
		if p.mine != nil {
			cmds = append(cmds, leavePresence(c, p.session))
		}
		p.mine = want
		if want != nil {
			cmds = append(cmds, announce(c, p.session, *want), pollPresence(c, want.kind, want.id))
		}
	}
	if _, ok := msg.(tickMsg); ok {
		p.ticks++
		if p.mine != nil && p.ticks%presenceRefreshTicks == 0 {
			cmds = append(cmds, announce(c, p.session, *p.mine))
		}
		if p.ticks%presencePollTicks == 0 {
			cmds = append(cmds, pollPresence(c, a.list.kind, 0))
			if p.mine != nil && p.mine.kind != a.list.kind {
				cmds = append(cmds, pollPresence(c, p.mine.kind, p.mine.id))
			}
		}
	}
	return tea.Batch(cmds...)
}

func announce(c *common, session string, k presenceKey) tea.Cmd {
	return func() tea.Msg {
		_ = c.st.Announce(c.ctx, store.PresenceRequest{Kind: k.kind, RecordID: k.id, Session: session, TTL: store.DefaultPresenceTTL})
		return nil
	}
}

func leavePresence(c *common, session string) tea.Cmd {
	return func() tea.Msg {
		_ = c.st.Leave(c.ctx, session)
		return nil
	}
}

func pollPresence(c *common, kind store.Kind, id int64) tea.Cmd {
	return func() tea.Msg {
		ps, err := c.st.FindPresence(c.ctx, store.PresenceFilter{Kind: kind, RecordID: id})
		return presenceMsg{kind: kind, id: id, ps: ps, err: err}
	}
}

// onPresence keeps a poll's answer (a failed poll keeps the last one).
func (p *presenceState) onPresence(msg presenceMsg) {
	if msg.err != nil {
		return
	}
	byID := map[int64][]store.Presence{}
	for _, x := range msg.ps {
		if x.Session != p.session {
			byID[x.RecordID] = append(byID[x.RecordID], x)
		}
	}
	if msg.id == 0 {
		p.others[msg.kind] = byID
		return
	}
	if p.others[msg.kind] == nil {
		p.others[msg.kind] = map[int64][]store.Presence{}
	}
	p.others[msg.kind][msg.id] = byID[msg.id]
}

// editing says who else has a record open: "bob", "bob and carol", "bob, carol and 2 more";
// the user's own other terminals count as "you (another terminal)". "" for nobody.
func (c *common) editing(kind store.Kind, id int64) string {
	var names []string
	for _, x := range c.presence.others[kind][id] {
		n := safe.Line(x.User)
		if x.User == c.user {
			n = "you (another terminal)"
		}
		if !containsName(names, n) {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return fmt.Sprintf("%s, %s and %d more", names[0], names[1], len(names)-2)
}

func containsName(ns []string, n string) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// presenceNote is the list row's presence note, after the lock indicator.
func (l *listModel) presenceNote(id int64) string {
	if who := l.c.editing(l.kind, id); who != "" {
		return " · " + who + " editing"
	}
	return ""
}

// presenceLine is the editor header's presence note, after the lock line.
func (e *editorModel) presenceLine() string {
	if e.id == 0 {
		return ""
	}
	who := e.c.editing(e.kind, e.id)
	if who == "" {
		return ""
	}
	verb := " is editing"
	if strings.Contains(who, " and ") || strings.HasPrefix(who, "you ") {
		verb = " are editing"
	}
	return e.c.styles.Warn.Render(" · " + who + verb)
}
