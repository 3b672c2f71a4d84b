package store

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
)

// Version is one entry of a record's history: the record as an editor save left it.
// System writes and writes inside WithoutHistory add no version, only a Change.
type Version struct {
	Kind     Kind
	RecordID int64
	Version  int64
	Actor    string
	At       time.Time
	Fields   []string // the fields this save changed, sorted
	Snapshot Values   // every field after the save (rebuilt from a HistoryRow chain)
	// Event is EventDeleted for a tombstone (Snapshot: the record as it was deleted),
	// EventRestored for a restore, "" for every other write (create, save, move).
	Event Event
}

// History is stored as chains: a full snapshot, then deltas, each holding only what differs
// from the record's previous history version. How a save is stored and how a version is
// rebuilt are decided here, once, for every store; a store only writes and reads HistoryRows.
//
// What differs from the previous history version is more than the save's own fields: writes
// that keep no history (system writes, WithoutHistory) may have changed other fields in
// between, and their values were never stored. So before it writes a delta, a store reads the
// HistoryTail, which names the fields those writes touched, and the delta holds their values
// too. A rebuilt version is therefore exactly the record as the save left it.

// A chain ends, and the next version is stored as a snapshot, when its deltas together
// would outweigh a snapshot: rebuilding a version then never reads much more than twice a
// snapshot, and a chain costs at most twice what its deltas alone would. A record whose
// snapshot is small gets one every few versions; a long document whose title is edited gets
// one rarely, since repeating its unchanged body is what history must not do. MaxChain also
// bounds the number of rows a rebuild reads.
const MaxChain = 256

// PatchMinBytes is the length from which a changed text field may be stored as a line patch
// against its previous value instead of the value itself.
const PatchMinBytes = 4096

// HistoryRow is a history version as a store keeps it: a snapshot (Snapshot set, Base 0) or
// a delta (Delta set, Base the version of the snapshot its chain starts at).
type HistoryRow struct {
	Version  int64
	Actor    string
	At       time.Time
	Fields   []string // the fields the save wrote, sorted
	Base     int64
	Snapshot []byte // every field, EncodeSnapshot's form
	Delta    []byte // {"set": {field: value}, "patch": {field: text patch}}
	Event    Event  // EventDeleted, EventRestored, or "" (see Version.Event)
}

// IsSnapshot reports whether the row holds a full snapshot.
func (h HistoryRow) IsSnapshot() bool { return h.Delta == nil }

// ChainBase returns the version of the snapshot the row's chain starts at.
func (h HistoryRow) ChainBase() int64 {
	if h.IsSnapshot() {
		return h.Version
	}
	return h.Base
}

// HistoryTail is what a store reads, inside the save's transaction, before it writes a
// history version: the record's newest history version and what was written since.
type HistoryTail struct {
	Version    int64    // the newest history version; 0 when the record has none
	Base       int64    // the snapshot version of its chain
	Chain      int      // how many history versions that chain holds, its snapshot included
	ChainBytes int      // the size of the chain's deltas (as stored; an estimate will do)
	Written    []string // fields written after Version by writes that added no history version
}

// delta is the stored form of a delta row.
type delta struct {
	Set   map[string]any        `json:"set,omitempty"`
	Patch map[string]*textPatch `json:"patch,omitempty"`
}

// PreImageFields returns the text fields an update sets to a value long enough to be stored
// as a patch. Before its UPDATE, a store that keeps history reads their values at the
// update's base version (PreImage) and hands them to NewHistoryRow.
func (r *Registry) PreImageFields(kind Kind, u Update) []string {
	var out []string
	for name, v := range u.Set {
		f, err := r.Field(kind, name)
		if s, ok := v.(string); ok && err == nil && f.Type == TypeText && len(s) >= PatchMinBytes {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// PreImage returns the values before a save of the fields PreImageFields names for u, taken
// from cur, the record as the save's transaction read it (the store reads the fields a save
// names before it plans the write, so the pre-image costs no extra read); nil when the save
// keeps no history or needs no pre-image.
func (r *Registry) PreImage(kind Kind, u Update, cur *Record, keep bool) Values {
	names := r.PreImageFields(kind, u)
	if !keep || len(names) == 0 {
		return nil
	}
	out := make(Values, len(names))
	for _, name := range names {
		if v, ok := cur.Fields[name]; ok {
			out[name] = v
		}
	}
	return out
}

// NewHistoryRow decides how the history version a save adds is stored. rec is the record
// after the save, fields the fields the save wrote, tail what the store read before writing,
// and pre the values before the save of the fields PreImageFields named (nil if none).
//
// A snapshot is written for a record's first history version and when the chain is full
// (MaxChain versions, or deltas that with this one would outweigh a snapshot). Otherwise the
// delta holds every field written since the previous history version, text fields as a patch
// when one is much smaller. A patch is made against pre only for fields no write without history touched
// since the previous history version: only then is pre the value that version holds.
func (r *Registry) NewHistoryRow(rec *Record, actor string, at time.Time, fields []string, tail HistoryTail, pre Values) (HistoryRow, error) {
	row := HistoryRow{Version: rec.Version, Actor: actor, At: at, Fields: slices.Clone(fields)}
	if row.Fields == nil {
		row.Fields = []string{}
	}
	snapshot := func() (HistoryRow, error) {
		var err error
		row.Snapshot, err = r.EncodeSnapshot(rec.Kind, rec.Fields)
		return row, err
	}
	if tail.Version <= 0 || tail.Chain >= MaxChain {
		return snapshot()
	}
	d := delta{Set: map[string]any{}}
	changed := append(slices.Clone(fields), tail.Written...)
	slices.Sort(changed)
	for _, name := range slices.Compact(changed) {
		f, err := r.Field(rec.Kind, name)
		if err != nil {
			return row, err
		}
		v := rec.Fields[name]
		if s, ok := v.(string); ok && f.Type == TypeText && len(s) >= PatchMinBytes && !slices.Contains(tail.Written, name) {
			if old, ok := pre[name].(string); ok {
				if p, ok := makePatch(old, s); ok {
					if d.Patch == nil {
						d.Patch = map[string]*textPatch{}
					}
					d.Patch[name] = p
					continue
				}
			}
		}
		d.Set[name] = f.Export(v)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return row, fmt.Errorf("encode history delta: %w", err)
	}
	if tail.ChainBytes+len(b) >= snapshotSize(r, rec) {
		return snapshot()
	}
	row.Base, row.Delta = tail.Base, b
	return row, nil
}

// snapshotSize estimates the length of rec's snapshot without encoding it (the body may be
// megabytes): the text of string values plus a little per field.
func snapshotSize(r *Registry, rec *Record) int {
	n := 2
	for _, f := range r.Fields(rec.Kind) {
		n += len(f.Name) + 8
		switch v := rec.Fields[f.Name].(type) {
		case string:
			n += len(v)
		case []string:
			for _, s := range v {
				n += len(s) + 3
			}
		default:
			n += 24
		}
	}
	return n
}

// RebuildHistory turns stored rows of one record, ascending by version and starting at a
// snapshot, into the versions they stand for, oldest first. EINTERNAL when the rows do not
// form chains (a delta without its snapshot) or a patch does not fit its base.
func (r *Registry) RebuildHistory(kind Kind, id int64, rows []HistoryRow) ([]Version, error) {
	out := make([]Version, 0, len(rows))
	var cur Values
	var chain int64
	for _, h := range rows {
		next, err := r.applyRow(kind, cur, chain, h)
		if err != nil {
			return nil, Errorf(EINTERNAL, "history of %s %d, version %d: %v", kind, id, h.Version, err)
		}
		cur, chain = next, h.ChainBase()
		out = append(out, Version{Kind: kind, RecordID: id, Version: h.Version, Actor: h.Actor, At: h.At,
			Fields: slices.Clone(h.Fields), Snapshot: cur.Clone(), Event: h.Event})
	}
	return out, nil
}

// applyRow returns the values after row h, given the values cur of the previous history
// version and the snapshot version chain its chain started at.
func (r *Registry) applyRow(kind Kind, cur Values, chain int64, h HistoryRow) (Values, error) {
	if h.IsSnapshot() {
		return r.DecodeSnapshot(kind, h.Snapshot)
	}
	if cur == nil || h.Base != chain {
		return nil, fmt.Errorf("delta on snapshot version %d, which does not precede it", h.Base)
	}
	var d struct {
		Set   map[string]any       `json:"set"`
		Patch map[string]textPatch `json:"patch"`
	}
	if err := unmarshalNumbers(h.Delta, &d); err != nil {
		return nil, fmt.Errorf("decode delta: %w", err)
	}
	next := cur.Clone()
	for name, x := range d.Set {
		if retired(name) {
			continue // a field a schema change dropped or retyped (RetiredName), as DecodeSnapshot
		}
		f, err := r.Field(kind, name)
		if err != nil {
			return nil, err
		}
		if next[name], err = f.decodeStored(x); err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
	}
	for name, p := range d.Patch {
		if retired(name) {
			continue
		}
		base, ok := cur[name].(string)
		if !ok {
			return nil, fmt.Errorf("patch of %s, which holds no text", name)
		}
		s, err := p.apply(base)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		next[name] = s
	}
	return next, nil
}

// Event names what a Change records.
type Event string

// Change events. Record events carry Version and Fields; lease events carry Group.
const (
	EventCreated       Event = "created"
	EventSaved         Event = "saved"
	EventMoved         Event = "moved"
	EventLeaseGranted  Event = "lease_granted"
	EventLeaseRenewed  Event = "lease_renewed"
	EventLeaseReleased Event = "lease_released"
	EventLeaseExpired  Event = "lease_expired"
	// EventPulled: a working copy took the record as its source has it (a sync or a clone);
	// Version, Actor and At are the source's. Not a write of the copy's own: history and
	// the operation log leave it out.
	EventPulled Event = "pulled"
)

// Change is one entry of the change log: every committed write and every lease event, in
// commit order. The change log is the operation log of system writes, the source of the live
// feed, and the truth a subscriber catches up from after a reconnect (by ID, its cursor).
// Commit order is exact where it means something: a write of a record or lease always has a
// higher ID than the writes of it that committed before it. A store hands out an ID only once
// no lower ID can still commit, so a cursor never passes a change.
type Change struct {
	ID       int64 // increasing in commit order; a subscriber's cursor (there may be gaps)
	Event    Event
	Kind     Kind
	RecordID int64
	Version  int64 // the record's version after the write (record events)
	Actor    string
	Role     Role
	Fields   []string         // fields written, sorted
	Deltas   map[string]int64 // relative changes applied, by field
	History  bool             // an editor save with a history version
	Group    string           // lease events: the lease's group
	Fence    int64            // lease events: the lease's fencing number
	At       time.Time
}

// RebuildVersion returns version v from the rows of its chain (ascending, from the chain's
// snapshot up to v). ENOTFOUND when v is not among them: the record has no such history
// version (a write without history, or a version it never reached).
func (r *Registry) RebuildVersion(kind Kind, id, v int64, rows []HistoryRow) (*Version, error) {
	if len(rows) == 0 || rows[len(rows)-1].Version != v {
		return nil, Errorf(ENOTFOUND, "%s %d has no history version %d (history keeps editor saves; see tandem history)", kind, id, v)
	}
	vs, err := r.RebuildHistory(kind, id, rows)
	if err != nil {
		return nil, err
	}
	return &vs[len(vs)-1], nil
}

// HistoryQuery selects a page of a record's history: the versions (or operation-log
// entries) above Since and below Before, newest first, at most Limit of them. A reader
// pages back by asking again with Before set to the oldest version it got.
type HistoryQuery struct {
	Before int64 // only versions below Before; 0 for no upper bound
	Since  int64 // only versions above Since; 0 for no lower bound
	Limit  int   // at most Limit entries; 0 for all of them (memory then grows with the history)
	// Snapshots asks for every version's Snapshot, rebuilt from its chain. Without it
	// Snapshot is nil and no snapshot or delta is read.
	Snapshots bool
}

// Check returns EINVALID for a query that makes no sense: a negative bound or limit, or
// Since not below Before. A range that merely holds no version (a reader that paged to the
// end asks for the versions below 1) is valid and empty.
func (q HistoryQuery) Check() error {
	switch {
	case q.Before < 0:
		return Errorf(EINVALID, "versions before %d: versions start at 1", q.Before)
	case q.Since < 0:
		return Errorf(EINVALID, "versions since %d: versions start at 1", q.Since)
	case q.Limit < 0:
		return Errorf(EINVALID, "a history page of %d versions: a page holds at least one", q.Limit)
	case q.Before > 0 && q.Since >= q.Before:
		return Errorf(EINVALID, "versions above %d and below %d: the range is reversed", q.Since, q.Before)
	}
	return nil
}

// Upper returns the version the query reads below: Before, or no bound when Before is 0.
func (q HistoryQuery) Upper() int64 {
	if q.Before == 0 {
		return math.MaxInt64
	}
	return q.Before
}

// HistoryHead is a history row without its snapshot or delta: what a page lists.
type HistoryHead struct {
	Version int64
	Actor   string
	At      time.Time
	Fields  []string
	Base    int64 // the snapshot version of the row's chain; 0 for a snapshot row
	Event   Event
}

// ReadHistoryPage reads the page of history q selects, as every store does. heads returns
// the page's rows without snapshot or delta, newest first, as q bounds them (Since, Upper,
// Limit). Only when q.Snapshots does it call rows, for the stored rows of one record with
// from <= version <= to, ascending: from the snapshot that starts the chain of the page's
// oldest version up to its newest. So a page holds its own versions and at most one
// chain before them (MaxChain rows, about two snapshots' worth), whatever the history's
// length. EINVALID for a bad query; heads' and rows' errors are returned as they are.
func (r *Registry) ReadHistoryPage(kind Kind, id int64, q HistoryQuery,
	heads func(HistoryQuery) ([]HistoryHead, error), rows func(from, to int64) ([]HistoryRow, error)) ([]Version, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	hs, err := heads(q)
	if err != nil || len(hs) == 0 {
		return nil, err
	}
	if !q.Snapshots {
		out := make([]Version, len(hs))
		for i, h := range hs {
			out[i] = Version{Kind: kind, RecordID: id, Version: h.Version, Actor: h.Actor, At: h.At,
				Fields: slices.Clone(h.Fields), Event: h.Event}
		}
		return out, nil
	}
	oldest, newest := hs[len(hs)-1], hs[0].Version
	from := oldest.Version
	if oldest.Base > 0 {
		from = oldest.Base
	}
	rs, err := rows(from, newest)
	if err != nil {
		return nil, err
	}
	out := make([]Version, 0, len(hs))
	var cur Values
	var chain int64
	for _, h := range rs {
		next, err := r.applyRow(kind, cur, chain, h)
		if err != nil {
			return nil, Errorf(EINTERNAL, "history of %s %d, version %d: %v", kind, id, h.Version, err)
		}
		cur, chain = next, h.ChainBase()
		if h.Version < oldest.Version || h.Version <= q.Since || h.Version >= q.Upper() {
			continue
		}
		out = append(out, Version{Kind: kind, RecordID: id, Version: h.Version, Actor: h.Actor, At: h.At,
			Fields: slices.Clone(h.Fields), Snapshot: cur.Clone(), Event: h.Event})
	}
	slices.Reverse(out)
	return out, nil
}
