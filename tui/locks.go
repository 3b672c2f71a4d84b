package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// locksModel is the locks overview: every live lease (and those ended in the last minutes),
// who holds it, since when and for how long still.
type locksModel struct {
	c      *common
	leases []store.Lease
	dbNow  time.Time
	loaded bool
	cursor int
	top    int // the first lease shown: the rows scroll to keep the cursor on the screen
	status statusLine
}

type locksMsg struct {
	m      *locksModel
	leases []store.Lease
	dbNow  time.Time
	sent   time.Time // the local clock when the query started
	err    error
}

func newLocks(c *common) *locksModel { return &locksModel{c: c} }

// typing is false: the locks screen takes no text.
func (m *locksModel) typing() bool { return false }

// Init loads the leases.
func (m *locksModel) Init() tea.Cmd {
	c := m.c
	return func() tea.Msg {
		sent := c.opts.Now()
		ls, now, err := c.findLeases(store.LeaseFilter{Expired: 10 * time.Minute})
		return locksMsg{m: m, leases: ls, dbNow: now, sent: sent, err: err}
	}
}

// Update handles keys, the loaded leases and lease events from the feed.
func (m *locksModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case returnedMsg:
		m.status = statusLine{}
		if msg.status != "" {
			m.status.ok(msg.status)
		}
		return m.Init()
	case locksMsg:
		if msg.m != m {
			return nil
		}
		m.loaded = true
		if msg.err != nil {
			m.status.fail("read leases", msg.err)
			return nil
		}
		m.c.learnClock(msg.dbNow, msg.sent)
		m.leases, m.dbNow = msg.leases, msg.dbNow
		m.cursor = min(m.cursor, max(len(m.leases)-1, 0))
	case changeMsg:
		switch msg.c.Event {
		case store.EventLeaseGranted, store.EventLeaseReleased, store.EventLeaseExpired:
			return m.Init()
		}
	case tea.KeyPressMsg:
		return m.onKey(msg)
	}
	return nil
}

// onKey moves the cursor, opens the selected lease's record, or leaves.
func (m *locksModel) onKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Back), key.Matches(msg, k.Quit):
		return func() tea.Msg { return backMsg{} }
	case key.Matches(msg, k.Down):
		m.cursor = min(m.cursor+1, max(len(m.leases)-1, 0))
		m.top = m.first()
	case key.Matches(msg, k.Up):
		m.cursor = max(m.cursor-1, 0)
		m.top = m.first()
	case key.Matches(msg, k.Open):
		if m.cursor < len(m.leases) {
			l := m.leases[m.cursor]
			return func() tea.Msg { return openEditorMsg{kind: l.Kind, id: l.RecordID, from: scrLocks} }
		}
	}
	return nil
}

// first is the first lease to show: top, moved just enough to keep the cursor among the
// rows the screen has (title, header, status and footer take four).
func (m *locksModel) first() int {
	rows := max(m.c.height-4, 1)
	return max(min(max(m.top, m.cursor-rows+1), m.cursor), 0)
}

// View draws the leases.
func (m *locksModel) View() string {
	c, st := m.c, m.c.styles
	var b strings.Builder
	live := 0
	for _, l := range m.leases {
		if l.Live(c.dbNow()) {
			live++
		}
	}
	count := plural(live, "live lease", "live leases")
	if ended := len(m.leases) - live; ended > 0 {
		count += fmt.Sprintf(" · %d ended lately", ended)
	}
	b.WriteString(st.Title.Render("tandem") + " " + st.Header.Render("locks") + "  " + st.Dim.Render(count))
	b.WriteString("\n")
	hw := 12 // the holder column fits the longest holder shown (a worker's name is long)
	for _, l := range m.leases {
		hw = min(max(hw, len([]rune(safe.Line(l.Holder)))), 40)
	}
	b.WriteString(st.Header.Render(fmt.Sprintf("  %-9s %7s %-8s %-*s %-6s %s", "kind", "id", "group", hw, "holder", "fence", "state")))
	b.WriteString("\n")
	now := c.dbNow()
	n := 2
	status := c.statusLines(m.status, safe.Line(m.status.text))
	limit := c.height - 2 - (len(status) - 1) // a status that wraps takes its lines from the rows
	start := m.first()
	if m.cursor >= start+limit-2 {
		start = max(m.cursor-(limit-2)+1, 0) // the status's extra lines must not hide the cursor
	}
	for i, l := range m.leases {
		if i < start {
			continue
		}
		if n >= limit {
			break
		}
		ind, _ := lockIndicator(l, c.user, now)
		if l.Live(now) && l.Holder != c.user {
			ind += fmt.Sprintf(", %s left", l.ExpiresAt.Sub(now).Round(time.Second))
		}
		row := fmt.Sprintf("  %-9s %7d %-8s %-*s %-6d %s", l.Kind, l.RecordID, safe.Line(l.Group), hw, safe.Line(l.Holder), l.Fence, ind)
		if i == m.cursor {
			row = st.Selected.Render(padRight(c.clip(selectedMark(row)), c.width))
		}
		b.WriteString(c.clip(row) + "\n")
		n++
	}
	if len(m.leases) == 0 && m.loaded {
		b.WriteString(st.Dim.Render("  nobody holds a lease") + "\n")
		n++
	}
	for ; n < limit; n++ {
		b.WriteByte('\n')
	}
	b.WriteString(strings.Join(status, "\n"))
	b.WriteByte('\n')
	b.WriteString(c.footer(c.keys.LocksKeys()))
	return b.String()
}
