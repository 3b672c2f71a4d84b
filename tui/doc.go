// Package tui is tandem's terminal user interface: the record list, the editor with its
// conflict dialog and three-way merge view, history, the locks overview and help. It talks to
// the database only through store.Store, and only inside tea.Cmds; the live change feed
// arrives as messages from a command that waits on the feed channel and is re-armed.
//
// # Imports
//
// Of tandem's own packages tui imports only these (TestDoc_ImportGraph keeps the list true):
//
//	tui ──▶ store, store/resave   records, the schema, errors; the bound of merge-and-save-again
//	    ──▶ merge                 the three-way field merge the conflict dialog and merge view show
//	    ──▶ locks                 the editor's lease and its heartbeat (editor_lease.go)
//	    ──▶ sync, sync/live       a working copy's sync and its background syncer (live.go)
//	    ──▶ internal/safe         database text made safe for the terminal
//	    ──▶ tui/bodyedit          the editor of long text fields (body.go)
//
// Never a concrete store: the tests drive it on store/memory. internal/cli, internal/serve
// and bench import tui.
//
// # Components
//
// The root, App (app.go), routes: it owns the window size, the feed, the tick and the global
// keys, keeps the open screens by id and two overlays, and gives each screen its messages.
// Every other model is a component that owns its Update, View, size and footer keys:
//
//	listModel          list*.go         the records of a kind: columns, sort, filter, folding
//	editorModel        editor*.go       one record, and the parts it owns: form (form.go), lease
//	                                    (editorLease), drafts (editorDrafts), saving and its conflict
//	                                    policy (editorSaving, editor_conflict.go), view
//	                                    (editor_view.go)
//	conflictModel      conflict.go      the editor's dialog when a save meets a newer version
//	mergeModel         mergeview.go     the field-by-field merge, in the editor or a copy's screen
//	theirChangesModel  theirchanges.go  what a reload of their version changed, over the form
//	historyModel       history.go       a record's versions and operation log
//	locksModel         locks.go         the live leases
//	helpModel          help.go          the help overlay
//	confirmModel       delete.go        the delete confirmation overlay
//	workCopy           workcopy*.go     a working copy's header, sync and conflicts, with the
//	                                    screens copyMerge, copyDelete and copyCreate
//
// # Messages
//
// Components talk only by messages, never by each other's fields: a command returns one, or
// common.send hands one to the root, which routes it as soon as the sender's Update returns.
//
//	screens ──▶ root              openEditorMsg (list, locks, history's revert), openHistoryMsg,
//	                              openLocksMsg (list), askDeleteMsg (list, editor),
//	                              backMsg (the root answers the screen shown again: returnedMsg)
//	overlays ──▶ root             closeHelpMsg, closeConfirmMsg; the delete's answers deletedMsg
//	                              and restoredMsg go to every screen, naming the one that reports
//	conflictModel ──▶ editor      conflictChoiceMsg (reload, retry, merge, back)
//	mergeModel ──▶ opener         mergeDoneMsg (values to save, or cancel)
//	theirChangesModel ──▶ editor  theirChangesDoneMsg (back, or bring my edits back)
//	workCopy ──▶ screens          statusMsg, reloadListMsg (list), copyConflictsMsg (all),
//	                              copyCheckMsg, copyGoneMsg (editor)
//	workCopy ──▶ root             openScreenMsg, closeScreenMsg, layoutMsg
//	copy screens ──▶ workCopy     copyMergeClosedMsg, copyResolvedMsg
//	editor ──▶ workCopy           openCopyConflictMsg
//	root ──▶ every screen         tea.WindowSizeMsg, tickMsg, changeMsg (the feed)
//
// Answers to a command (recordLoadedMsg, savedMsg, pageMsg, historyMsg, locksMsg, …) go back
// to the component that asked; an editor's answers carry the editor, so a late one for an
// editor since closed is dropped.
package tui
