package tui

import (
	"context"
	"maps"
	"time"

	tea "charm.land/bubbletea/v2"
)

// The editor's drafts: unsaved edits written to disk while typing, offered back on open,
// kept by a reload, deleted for good by a discard (see draftStore for the ordering).

// editorDrafts is the editor's part of drafts: the draft offered on open, the edits a
// reload kept, and when the form was last written.
type editorDrafts struct {
	offered *draft // modeOfferDraft: the draft found on open
	kept    *draft // after a reload: my version, to bring back with ctrl+r

	// extBack is the text $EDITOR gave back, from when it exits until Update takes it: a
	// program ended (SIGTERM, SIGHUP) while the editor ran never takes it, and shutdown
	// keeps it in the draft instead.
	extBack *extEditedMsg

	lastDraft  time.Time
	draftDirty bool
	discarded  bool // the person discarded the edits: nothing may write a draft again
}

// due reports whether unsaved edits wait for the draft writer at now.
func (d *editorDrafts) due(now time.Time) bool {
	return d.draftDirty && now.Sub(d.lastDraft) >= draftEvery
}

// draftEvery is how often unsaved edits are written to the draft file while typing.
const draftEvery = 3 * time.Second

func (e *editorModel) writeDraftCmd() tea.Cmd {
	if e.readOnly != "" || len(e.fields) == 0 || e.discarded {
		return nil
	}
	return e.saveDraftCmd(e.draftToKeep())
}

// draftToKeep is what the draft file holds: the form's edits and, until ctrl+r brings them
// back, the edits a reload kept, so that typing in the reloaded form, a save of it or a
// program that ends loses neither.
func (e *editorModel) draftToKeep() draft {
	d := e.currentDraft()
	if e.kept == nil {
		return d
	}
	return withKept(*e.kept, d)
}

// withKept is the kept draft k with the edits of the form's draft d on top: a field the form
// changed holds the form's text on the form's base (or, relative on both, the sum of both
// changes); every other field holds what k holds. Bringing it back applies both.
func withKept(k, d draft) draft {
	out := k
	out.Saved = d.Saved
	out.Values, out.Base, out.Deltas = maps.Clone(k.Values), maps.Clone(k.Base), maps.Clone(k.Deltas)
	if out.Values == nil {
		out.Values = map[string]string{}
	}
	if out.Base == nil {
		out.Base = map[string]string{}
	}
	if out.Deltas == nil {
		out.Deltas = map[string]int64{}
	}
	for name, v := range d.Values {
		dl, b := d.Deltas[name], d.Base[name]
		kRelative := k.Values[name] == k.Base[name]
		switch {
		case dl != 0 && kRelative && k.Base != nil:
			out.Deltas[name] += dl
		case dl != 0 || v != b:
			out.Values[name], out.Base[name] = v, b
			if dl != 0 {
				out.Deltas[name] = dl
			} else {
				delete(out.Deltas, name)
			}
		}
	}
	return out
}

// saveDraftCmd writes d. Its ticket is taken now, so a discard decided later wins even if
// this write reaches the disk after it.
func (e *editorModel) saveDraftCmd(d draft) tea.Cmd {
	e.lastDraft, e.draftDirty = e.c.opts.Now(), false
	ds := e.c.drafts
	t := ds.ticket()
	return func() tea.Msg {
		return draftErrMsg{ed: e, err: ds.Save(d, t)}
	}
}

// savedDraftCmd is what a save that leaves nothing unsaved in the form does to the draft:
// it deletes it, unless edits a reload kept still wait for ctrl+r; then it holds those.
func (e *editorModel) savedDraftCmd() tea.Cmd {
	if e.kept != nil && !e.discarded {
		return e.saveDraftCmd(*e.kept)
	}
	return e.deleteDraftCmd()
}

func (e *editorModel) deleteDraftCmd() tea.Cmd {
	ds, kind, id := e.c.drafts, e.kind, e.id
	e.draftDirty = false
	t := ds.ticket()
	return func() tea.Msg {
		return draftErrMsg{ed: e, err: ds.Delete(kind, id, t)}
	}
}

// deleteLegacyDraftCmd removes the draft from before drafts carried a store id, once its
// offer was answered.
func (e *editorModel) deleteLegacyDraftCmd() tea.Cmd {
	ds, kind, id := e.c.drafts, e.kind, e.id
	t := ds.ticket()
	return func() tea.Msg {
		return draftErrMsg{ed: e, err: ds.DeleteLegacy(kind, id, t)}
	}
}

// draftDiffers reports whether d holds edits that differ from the form.
func (e *editorModel) draftDiffers(d *draft) bool { return e.differs(d.Values, d.Deltas) }

// currentDraft captures the form as a draft.
func (e *editorModel) currentDraft() draft {
	d := draft{User: e.c.user, Kind: e.kind, ID: e.id, Saved: e.c.opts.Now()}
	d.Values, d.Deltas = e.edits()
	if e.rec != nil {
		d.BaseVersion = e.rec.Version
		d.Base = map[string]string{}
		for _, fi := range e.fields {
			if fi.readOnly == "" {
				d.Base[fi.f.Name] = fi.f.Format(e.rec.Fields[fi.f.Name])
			}
		}
	}
	return d
}

// applyDraft puts a draft's values into the form.
func (e *editorModel) applyDraft(d *draft) {
	e.setEdits(d.Values, d.Deltas)
	e.fieldChanged()
}

// restoreKept brings back the edits kept by a reload, on top of the version loaded since.
func (e *editorModel) restoreKept() tea.Cmd {
	if e.kept == nil {
		e.status.info("no kept draft to bring back")
		return nil
	}
	d := e.kept
	e.kept = nil
	return e.bringBack(d, "your edits are")
}

// shutdown keeps the editor's unsaved edits in the draft and releases its lease, at once,
// for a program that is ending without the quit key. It returns the first failure.
func (e *editorModel) shutdown() error {
	var err error
	switch {
	case e.discarded || len(e.fields) == 0:
	case e.extBack != nil:
		// $EDITOR gave its text back as the program ended: the draft is the form as it
		// was handed out with that text in its field, made on the version it was made on.
		d := e.extBack.start
		d.Values = maps.Clone(d.Values)
		if f := e.extBack.field; f < len(e.fields) {
			d.Values[e.fields[f].f.Name] = e.extBack.value
		}
		err = e.c.drafts.Save(d, e.c.drafts.ticket())
	case e.dirty():
		err = e.c.drafts.Save(e.draftToKeep(), e.c.drafts.ticket())
	}
	if e.held != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(e.c.ctx), 5*time.Second)
		defer cancel()
		if rerr := e.held.Release(ctx); rerr != nil && err == nil {
			err = rerr
		}
		e.held = nil
	}
	if e.leaseStop != nil {
		e.leaseStop()
	}
	return err
}
