package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// A schema change another client made (`tandem schema apply`) reaches the TUI as an
// EventSchemaChanged on the feed. The TUI reloads the store's schema (store.SchemaReloader)
// and shows it without a restart: new kinds get tabs, new fields list columns and places
// in the form. The open editor keeps the person's unsaved edits of the fields that still
// exist (with the same type) and says that the schema changed. A form busy with a save, the
// conflict dialog or the merge view is rebuilt once it is back to plain editing; a save
// sent against the older schema meanwhile applies (additive changes) or fails with the
// store's message, which says why.

// schemaReloadedMsg is the store's schema read again after an EventSchemaChanged.
type schemaReloadedMsg struct {
	reg *store.Registry
	err error
}

// editorSchemaMsg is the open record read again under a new schema: the values of its
// new fields.
type editorSchemaMsg struct {
	ed  *editorModel
	reg *store.Registry
	rec *store.Record // nil for a record not yet created, or when it could not be read
	err error
}

// onSchemaChange starts reloading the schema when ch is a schema change; nil otherwise.
func (a *App) onSchemaChange(ch store.Change) tea.Cmd {
	if ch.Event != store.EventSchemaChanged {
		return nil
	}
	sr, ok := a.c.st.(store.SchemaReloader)
	if !ok {
		return nil
	}
	ctx := a.c.ctx
	return func() tea.Msg {
		reg, err := sr.ReloadSchema(ctx)
		return schemaReloadedMsg{reg: reg, err: err}
	}
}

// onSchemaReloaded makes reg the schema the list and keys follow, and has the open editor
// read its record again under it.
func (a *App) onSchemaReloaded(msg schemaReloadedMsg) tea.Cmd {
	if msg.err != nil {
		failed := errMsg{op: "reload the schema", err: msg.err}
		return tea.Batch(a.deliver(scrList, failed), a.deliver(scrEditor, failed))
	}
	if msg.reg == nil || msg.reg == a.c.reg || msg.reg.Version() < a.c.reg.Version() {
		return nil // nothing new, or an answer overtaken by a newer one
	}
	a.c.reg = msg.reg
	a.c.keys = schemaKeys(a.c.baseKeys, msg.reg)
	note := fmt.Sprintf("the schema changed (version %d)", msg.reg.Version())
	cmds := []tea.Cmd{a.list.onSchema(note)}
	if e := a.editor; e != nil {
		cmds = append(cmds, e.onSchema(msg.reg, note))
	}
	return tea.Batch(cmds...)
}

// onSchema shows the list under the new schema: the kind shown, or the first one when the
// change dropped it; an order by a field that is gone falls back to the id.
func (l *listModel) onSchema(note string) tea.Cmd {
	reg := l.c.reg
	if !reg.Has(l.kind) {
		if ks := reg.Kinds(); len(ks) > 0 {
			l.kind = ks[0]
		}
		l.sort, l.desc, l.folded = "", false, map[int64]bool{}
		l.rows, l.all, l.cursor, l.offset, l.loaded = nil, nil, 0, 0, false
	}
	if _, err := reg.Field(l.kind, l.sort); l.sort != "" && err != nil {
		l.sort, l.desc = "", false
	}
	for k, v := range l.views {
		if _, err := reg.Field(k, v.sort); !reg.Has(k) || (v.sort != "" && err != nil) {
			delete(l.views, k) // the tab shows by id again
		}
	}
	l.status.info(note)
	if l.loaded {
		return l.reload()
	}
	return tea.Batch(l.load(), l.loadLeases())
}

// onSchema reads the open record again under reg, for the values of its new fields.
func (e *editorModel) onSchema(reg *store.Registry, note string) tea.Cmd {
	if !reg.Has(e.kind) {
		e.status.warn(note + ": this record's kind is gone; saving it fails")
		return nil
	}
	e.status.info(note)
	c, kind, id := e.c, e.kind, e.id
	return func() tea.Msg {
		if id == 0 {
			return editorSchemaMsg{ed: e, reg: reg}
		}
		rec, err := c.st.FindRecord(c.ctx, kind, id)
		return editorSchemaMsg{ed: e, reg: reg, rec: rec, err: err}
	}
}

// applySchema rebuilds the form under msg.reg when the editor is plain editing, keeping
// what the person typed in the fields that still exist; otherwise it keeps msg until then
// (retrySchema).
func (e *editorModel) applySchema(msg editorSchemaMsg) tea.Cmd {
	if msg.reg != e.c.reg || e.fields == nil {
		e.schemaWait = nil // a newer schema came meanwhile, or the record never loaded
		return nil
	}
	if e.mode != modeEdit || e.saving {
		e.schemaWait = &msg
		return nil
	}
	e.schemaWait = nil
	base := e.rec
	if base != nil {
		base = schemaBase(msg.reg, e.kind, base, msg.rec)
	}
	vals, deltas := e.edits()
	changed := map[string]bool{}
	oldTypes := map[string]store.Type{}
	for _, fi := range e.fields {
		oldTypes[fi.f.Name] = fi.f.Type
		if fi.readOnly == "" && (fi.delta != 0 || e.rec == nil || fi.text() != fi.f.Format(e.rec.Fields[fi.f.Name])) {
			changed[fi.f.Name] = true
		}
	}
	focused := ""
	if e.focus >= 0 && e.focus < len(e.fields) {
		focused = e.fields[e.focus].f.Name
	}
	titles, old := e.titles, e.fields
	e.buildForm(base)
	e.titles = titles
	kv, kd := map[string]string{}, map[string]int64{}
	for _, fi := range e.fields {
		if t, ok := oldTypes[fi.f.Name]; ok && t == fi.f.Type && changed[fi.f.Name] && fi.readOnly == "" {
			kv[fi.f.Name], kd[fi.f.Name] = vals[fi.f.Name], deltas[fi.f.Name]
		}
	}
	e.setEditsOnly(kv, kd)
	var lost []string
	for _, fi := range old {
		if changed[fi.f.Name] {
			if _, kept := kv[fi.f.Name]; !kept {
				lost = append(lost, fi.f.Name)
			}
		}
	}
	if len(lost) > 0 {
		e.status.warn(fmt.Sprintf("the schema changed (version %d): your edits of %s are not kept (the field is gone, retyped or read-only now)",
			msg.reg.Version(), safe.Line(strings.Join(lost, ", "))))
	}
	for i, fi := range e.fields {
		if fi.f.Name == focused && (fi.readOnly == "" || fi.viewable()) {
			e.focus = i
		}
	}
	e.layout()
	return e.focusCmd()
}

// retrySchema rebuilds the form under a schema that came while it was busy, once it is
// plain editing again.
func (e *editorModel) retrySchema() tea.Cmd {
	if w := e.schemaWait; w != nil && e.mode == modeEdit && !e.saving {
		return e.applySchema(*w)
	}
	return nil
}

// schemaBase is the base version of the form under reg: fresh, the record read again, when
// it is still the version the form was based on; otherwise the old base with the values
// fresh has of the fields the old base lacks (the fields the change added), so that the
// version a save checks stays the one the person edited.
func schemaBase(reg *store.Registry, kind store.Kind, old, fresh *store.Record) *store.Record {
	if fresh == nil {
		return old
	}
	if fresh.Version == old.Version {
		return fresh
	}
	cp := *old
	cp.Fields = store.Values{}
	for k, v := range old.Fields {
		cp.Fields[k] = v
	}
	for _, f := range reg.Fields(kind) {
		if _, ok := cp.Fields[f.Name]; !ok {
			cp.Fields[f.Name] = fresh.Fields[f.Name]
		}
	}
	return &cp
}

// setEditsOnly puts texts and relative changes into the editable fields they name, leaving
// the others as filled.
func (f *form) setEditsOnly(vals map[string]string, deltas map[string]int64) {
	for _, fi := range f.fields {
		s, ok := vals[fi.f.Name]
		if fi.readOnly != "" || !ok {
			continue
		}
		fi.setText(s)
		fi.delta = deltas[fi.f.Name]
	}
}
