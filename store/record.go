package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Record is one product or document: its identity, the metadata only the store writes, and
// the values of every registry field.
type Record struct {
	Kind      Kind
	ID        int64
	Version   int64 // incremented by one per committed write, only by the store
	UpdatedBy string
	UpdatedAt time.Time
	Fields    Values
}

// Clone returns a deep copy of r.
func (r *Record) Clone() *Record {
	c := *r
	c.Fields = r.Fields.Clone()
	return &c
}

// Title returns the record's name (products) or title (documents).
func (r *Record) Title() string {
	for _, f := range []string{"name", "title"} {
		if s, ok := r.Fields[f].(string); ok {
			return s
		}
	}
	return ""
}

// Update is a save: the changed fields only, the version they were edited from, and what
// makes it safe to send twice. Fields not named are never written.
type Update struct {
	// BaseVersion is the version the edit started from. The store writes only if the record
	// is still at this version, else it returns a *ConflictError. It may be 0 only for an
	// update made of relative changes alone, which applies to whatever version is current.
	BaseVersion int64
	// Set holds absolute new values of changed fields.
	Set Values
	// Add holds relative changes of counter fields (stock += d): operations, not values.
	Add map[string]int64
	// IdempotencyKey, when set, makes the update apply at most once: a second update with the
	// same key and the same request replays the first result; with another request it fails.
	IdempotencyKey string
	// LeaseToken presents a lease; the store checks it, its expiry and its fencing number in
	// the same transaction as the write.
	LeaseToken string
}

// Relative reports whether the update is made of relative changes only (safe to retry
// automatically on a conflict).
func (u Update) Relative() bool { return len(u.Set) == 0 && len(u.Add) > 0 }

// FieldNames returns the fields the update writes, sorted.
func (u Update) FieldNames() []string {
	out := make([]string, 0, len(u.Set)+len(u.Add))
	for f := range u.Set {
		out = append(out, f)
	}
	for f := range u.Add {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// RequestHash is a stable digest of what an update asks for, stored with its idempotency key
// so that reusing a key for a different request is detected.
func RequestHash(kind Kind, id int64, u Update) string {
	b, ok := relativeRequestJSON(kind, id, u)
	if !ok {
		// encoding/json sorts map keys, so equal requests hash equally.
		b, _ = json.Marshal(struct {
			Kind Kind             `json:"k"`
			ID   int64            `json:"i"`
			Base int64            `json:"b"`
			Set  Values           `json:"s"`
			Add  map[string]int64 `json:"a"`
		}{kind, id, u.BaseVersion, u.Set, u.Add})
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// relativeRequestJSON returns what RequestHash hashes for an update that sets no field (the
// keyed relative save, the commonest keyed write), byte for byte what encoding/json writes,
// without reflection; ok is false for any other update, or when a name needs escaping.
func relativeRequestJSON(kind Kind, id int64, u Update) (b []byte, ok bool) {
	if len(u.Set) > 0 || !plainJSON(string(kind)) {
		return nil, false
	}
	var arr [8]string
	keys := arr[:0]
	for k := range u.Add {
		if !plainJSON(k) {
			return nil, false
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = make([]byte, 0, 64+len(kind)+24*len(keys))
	b = append(b, `{"k":"`...)
	b = append(b, kind...)
	b = append(b, `","i":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"b":`...)
	b = strconv.AppendInt(b, u.BaseVersion, 10)
	if u.Set == nil {
		b = append(b, `,"s":null`...)
	} else {
		b = append(b, `,"s":{}`...)
	}
	if u.Add == nil {
		return append(b, `,"a":null}`...), true
	}
	b = append(b, `,"a":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, u.Add[k], 10)
	}
	return append(b, '}', '}'), true
}

// plainJSON reports whether s is printable ASCII without a character that encoding/json
// escapes, so that it is its own JSON string between quotes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// UpdateResult is what a save (or a move) returns.
type UpdateResult struct {
	Record *Record // the record after the save
	// Version is the version the save wrote; the current version when it was Unchanged; for
	// a replay, the version the first application wrote (Record may have moved on since).
	Version int64
	// Replayed is set when the idempotency key had already been applied: nothing was written
	// this time, Version and Unchanged are the first application's, and Record is the
	// record as it is now. A replay is answered before the lease, version and counter checks:
	// the first application passed them, and a retry must learn that it was applied even
	// when the lease it used has since been released or taken over.
	Replayed bool
	// Unchanged is set when the save asked for nothing the record did not already hold
	// (made from the current version with every value equal to the current one, every delta
	// 0, a move to the current parent; a stale base is a conflict, see PlanUpdate):
	// nothing was written, no version, no history version, no change-log entry; Record is
	// the current record. A keyed save that changed nothing still records its key, so a
	// retry is answered the same way.
	Unchanged bool
	// AppliedBy and AppliedAt, set on a replay, say who applied the key and when (the
	// key's owner, the actor's name, and its time): keys are shared by everyone writing
	// to the store, so the key may be someone else's.
	AppliedBy string
	AppliedAt time.Time
}

// Unchanged returns the answer to a write that changed nothing: the current record, at its
// version, marked Unchanged.
func Unchanged(cur *Record) *UpdateResult {
	return &UpdateResult{Record: cur, Version: cur.Version, Unchanged: true}
}

// CheckUpdate validates an update against the registry before any SQL runs: known fields,
// right types and limits, ownership for role, counters only for relative changes, and a base
// version for absolute changes. Both stores call it so they refuse exactly the same things.
func (r *Registry) CheckUpdate(kind Kind, role Role, u Update) error {
	if len(u.Set) == 0 && len(u.Add) == 0 {
		return Errorf(EINVALID, "nothing to change")
	}
	if len(u.Set) > 0 && u.BaseVersion <= 0 {
		return Errorf(EINVALID, "an absolute change needs the version it was made from").With(WayExpectVersion)
	}
	if u.BaseVersion < 0 {
		return Errorf(EINVALID, "version %d is not a version", u.BaseVersion)
	}
	for name, v := range u.Set {
		f, err := r.writable(kind, role, name)
		if err != nil {
			return err
		}
		if err := f.Check(v); err != nil {
			return err
		}
	}
	for name := range u.Add {
		f, err := r.writable(kind, role, name)
		if err != nil {
			return err
		}
		if f.Rule != RuleCounter {
			return Errorf(EINVALID, "%s.%s is not a counter: relative changes work only on counters", kind, name)
		}
		if _, both := u.Set[name]; both {
			return Errorf(EINVALID, "%s.%s is both set and adjusted in one update", kind, name)
		}
	}
	if u.IdempotencyKey != "" {
		if err := CheckKey(ScopeAPI, u.IdempotencyKey); err != nil {
			return err
		}
	}
	return nil
}

// CheckCreate validates the values of a new record: known, writable by role, well typed,
// required fields present. It returns the values with defaults for missing fields.
func (r *Registry) CheckCreate(kind Kind, role Role, vals Values) (Values, error) {
	if _, ok := r.kinds[kind]; !ok {
		return nil, r.unknownKind(kind)
	}
	out := make(Values, len(r.kinds[kind]))
	for name, v := range vals {
		f, err := r.Field(kind, name)
		if err != nil {
			return nil, err
		}
		if !f.Writable(role) {
			return nil, &OwnershipError{Kind: kind, Field: name, Owner: f.Owner, Role: role}
		}
		if err := f.Check(v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	for _, f := range r.kinds[kind] {
		if _, ok := out[f.Name]; ok {
			continue
		}
		if f.Required {
			return nil, Errorf(EINVALID, "%s.%s is required", kind, f.Name)
		}
		out[f.Name] = f.Zero()
	}
	return out, nil
}

// Zero returns the value a field has when nothing was written to it: its default, else its
// type's zero value.
func (f *Field) Zero() any {
	if f.def != nil {
		return f.def
	}
	switch f.Type {
	case TypeString, TypeText:
		return ""
	case TypeEnum:
		return f.Values[0]
	case TypeInt, TypeMoney:
		return int64(0)
	case TypeSet:
		return []string{}
	}
	return nil
}

func (r *Registry) writable(kind Kind, role Role, name string) (*Field, error) {
	f, err := r.Field(kind, name)
	if err != nil {
		return nil, err
	}
	if f.ReadOnly {
		return nil, &OwnershipError{Kind: kind, Field: name, Owner: f.Owner, Role: role, ReadOnly: true}
	}
	if !f.Writable(role) {
		return nil, &OwnershipError{Kind: kind, Field: name, Owner: f.Owner, Role: role}
	}
	return f, nil
}

// UpdateGroups returns the lease groups an update touches, sorted.
func (r *Registry) UpdateGroups(kind Kind, u Update) []string {
	var gs []string
	for _, name := range u.FieldNames() {
		if f, err := r.Field(kind, name); err == nil && !slices.Contains(gs, f.Group) {
			gs = append(gs, f.Group)
		}
	}
	slices.Sort(gs)
	return gs
}

// Filter selects records for FindRecords.
type Filter struct {
	Kind    Kind
	Search  string  // substring of a searched field, compared after SearchFold (search.go); "" for all
	IDs     []int64 // only these ids, when non-empty
	AfterID int64   // keyset paging: only ids greater than this (with Sort: see AfterValue)
	Limit   int     // at most this many, 0 for no limit
	// Sort orders by this field, then by id (Registry.SortFields: fields with an index);
	// "" orders by id. Strings compare byte by byte on every store.
	Sort string
	// Desc reverses the order of Sort, ties by id descending too, so one index serves both.
	Desc bool
	// AfterValue continues a sorted listing after the row with this value of Sort and id
	// AfterID (keyset paging); nil starts at the beginning, whatever AfterID says. Ignored
	// without Sort.
	AfterValue any
}
