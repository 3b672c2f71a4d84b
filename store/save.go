package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
)

// The rules of a save that need the record as it is, decided here, once, for every store:
// each store reads the record inside the save's transaction (under SQLite's write lock, or
// with the row locked on PostgreSQL) and asks PlanUpdate what to write. So a save that
// changes nothing, a stale base version, a counter that would overflow and a price that
// would go negative get the same answer, in the same words, whichever database runs it.

// SavePlan is what a save writes, decided from the current record by Registry.PlanUpdate.
type SavePlan struct {
	// Set holds the absolute changes whose value differs from the current one. A field set
	// to the value it has is not written and not reported as changed.
	Set Values
	// Add holds the relative changes that are not 0.
	Add map[string]int64
	// Unchanged is set when there is nothing to write: the base version is current (or the
	// update is relative), every value set equals the current one and every delta is 0. The
	// store writes nothing (no version, no history version, no change-log entry) and returns
	// the current record with UpdateResult.Unchanged.
	Unchanged bool
	// Stale is set when an absolute change was made from a version that is no longer the
	// current one: the store answers with a *ConflictError, also when the values happen to
	// equal the current ones (see PlanUpdate).
	Stale bool
	// Keys holds the key (SKUKey) of each unique field being written, by field: the value of
	// its UniqueKeyColumn. nil when the save writes no unique field.
	Keys map[string]string
	// Folds holds the folded columns to write next to Set, with their values (see Folds in
	// search.go): one for each field in Set that has one. nil when there are none.
	Folds map[string]string
}

// FieldNames returns the fields the plan writes, sorted.
func (p *SavePlan) FieldNames() []string {
	return Update{Set: p.Set, Add: p.Add}.FieldNames()
}

// PlanUpdate decides what the update u writes to cur, the record as it is inside the save's
// transaction: cur needs its Version and the current values of the fields u names (the
// other fields may be missing). u has passed CheckUpdate.
//
// An absolute change made from a stale base version is a conflict even when every value it
// sets equals the current one. Such a write would change nothing, but answering "no change"
// would tell a read-modify-write client (read stock 5, write 6 at that version) that its
// change went in when another writer's equal value stands in for it: the version check is
// what makes that pattern safe, so it comes first. (Measured: with "no change" for stale equal
// sets, tandem bench contention's optimistic writers lost 501 of 1,200 increments on
// PostgreSQL.) The conflict carries the current record, and a merge of base, mine and theirs
// then finds nothing left to save. Only a change made from the current version, whose values
// all equal the current ones, and relative changes of 0, are "no change".
//
// Counters are checked before anything is written: a sum outside int64 is EINVALID, and so is
// a money counter (price, when a registry makes it one) that would go below zero.
func (r *Registry) PlanUpdate(cur *Record, u Update) (*SavePlan, error) {
	p := &SavePlan{Set: Values{}, Add: map[string]int64{}}
	if !u.Relative() && u.BaseVersion != cur.Version {
		p.Stale = true
		return p, nil
	}
	for name, v := range u.Set {
		if !Equal(cur.Fields[name], v) {
			p.Set[name] = v
		}
	}
	for name, d := range u.Add {
		if d != 0 {
			p.Add[name] = d
		}
	}
	if len(p.Set) == 0 && len(p.Add) == 0 {
		p.Unchanged = true
		return p, nil
	}
	for _, name := range sortedNames(p.Add) {
		f, err := r.Field(cur.Kind, name)
		if err != nil {
			return nil, err
		}
		n, _ := cur.Fields[name].(int64)
		if _, err := CheckAdd(cur.Kind, f, n, p.Add[name]); err != nil {
			return nil, err
		}
	}
	for _, f := range r.UniqueFields(cur.Kind) {
		v, ok := p.Set[f.Name].(string)
		if !ok {
			continue
		}
		if err := CheckUniqueValue(f.Name, v); err != nil {
			return nil, err
		}
		if p.Keys == nil {
			p.Keys = map[string]string{}
		}
		p.Keys[f.Name] = SKUKey(v)
	}
	p.Folds = r.Folds(cur.Kind, p.Set)
	return p, nil
}

// CheckAdd returns cur + delta for counter f, or EINVALID when the sum leaves the range of a
// 64-bit integer, or makes money negative. Both stores call it before they write, so an
// overflow is bad input with the same message everywhere, never a float in SQLite or a
// "bigint out of range" from PostgreSQL.
func CheckAdd(kind Kind, f *Field, cur, delta int64) (int64, error) {
	if delta > 0 && cur > math.MaxInt64-delta || delta < 0 && cur < math.MinInt64-delta {
		return 0, Errorf(EINVALID, "%s.%s: %s %s is out of range (a counter holds %s..%s)", kind, f.Name,
			f.Format(cur), signed(f, delta), f.Format(int64(math.MinInt64)), f.Format(int64(math.MaxInt64)))
	}
	sum := cur + delta
	if f.Type == TypeMoney && sum < 0 {
		return 0, Errorf(EINVALID, "%s.%s: %s %s would be %s, and an amount of money cannot be negative",
			kind, f.Name, f.Format(cur), signed(f, delta), f.Format(sum))
	}
	return sum, nil
}

// signed formats a delta as "+ 5" or "- 3.50", without the overflow of negating MinInt64.
func signed(f *Field, d int64) string {
	s := f.Format(d)
	if s[0] == '-' {
		return "- " + s[1:]
	}
	return "+ " + s
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// KeyResult is what a keyed save stores with its idempotency key, in the same form on every
// store, and what a retry with the same key is answered with.
type KeyResult struct {
	Kind      Kind  `json:"kind"`
	ID        int64 `json:"id"`
	Version   int64 `json:"version"`             // the version the save wrote, or found when Unchanged
	Unchanged bool  `json:"unchanged,omitempty"` // the save changed nothing

	// By and At say who applied the key and when: the key's owner and created_at, read
	// with the key for a replay (ReplayOf). They are not part of the stored result.
	By string    `json:"-"`
	At time.Time `json:"-"`
}

// Encode returns the stored form of k (JSON).
func (k KeyResult) Encode() []byte {
	b, err := json.Marshal(k)
	if err != nil {
		panic(err) // a struct of strings, numbers and a bool always encodes
	}
	return b
}

// DecodeKeyResult reads a stored KeyResult. EINTERNAL when it is not one.
func DecodeKeyResult(b []byte) (KeyResult, error) {
	var k KeyResult
	if err := json.Unmarshal(b, &k); err != nil {
		return k, Errorf(EINTERNAL, "stored idempotency result %q: %v", b, err)
	}
	return k, nil
}

// ReplayOf returns the result stored with the completed key k, to replay, with who applied
// it and when (By, At). EINTERNAL when the stored result is not one.
func ReplayOf(k KeyRecord) (KeyResult, error) {
	r, err := DecodeKeyResult(k.Result)
	if err != nil {
		return r, err
	}
	r.By, r.At = k.Owner, k.CreatedAt
	return r, nil
}

// ResultOf returns the KeyResult a save with result res stores.
func ResultOf(res *UpdateResult) KeyResult {
	return KeyResult{Kind: res.Record.Kind, ID: res.Record.ID, Version: res.Version, Unchanged: res.Unchanged}
}

// Replay returns the answer to a retried save whose key k has completed: the first result,
// marked Replayed, with the record as it is now (cur), which may have moved on since.
func (k KeyResult) Replay(cur *Record) *UpdateResult {
	return &UpdateResult{Record: cur, Replayed: true, Version: k.Version, Unchanged: k.Unchanged, AppliedBy: k.By, AppliedAt: k.At}
}

// Move is a tree move: where a document goes, and the leases the mover presents.
type Move struct {
	// Parent is the new parent; nil puts the document at the root.
	Parent *int64
	// LeaseToken presents the lease on the moved document's tree group (the group of
	// parent_id), needed when it is leased, also by the same user: the token binds, not the
	// name.
	LeaseToken string
	// ParentLeaseToken presents the lease on the new parent's tree group, needed when it is
	// leased: putting a document under a leased one is a write to the leased part of the tree.
	ParentLeaseToken string
}

// CreateOptions are the optional parts of a create.
type CreateOptions struct {
	// ParentLeaseToken presents the lease on the parent document's tree group (the group of
	// parent_id), needed to create a document under a leased one.
	ParentLeaseToken string
	// ID, when not 0, is the id the new record gets instead of the next free one (an import
	// restoring an export into a fresh store). Later creates get ids above it. EINVALID when
	// it is negative, above MaxID or a record of the kind already has it.
	ID int64
	// IdempotencyKey, when set, makes the create apply at most once, like
	// Update.IdempotencyKey: a second create with the same key and the same request writes
	// nothing and returns the record the first one created, as it is now; with another
	// request it fails (EINVALID). The key is stored in the create's transaction.
	IdempotencyKey string
}

// MaxID is the largest id a create may ask for (CreateOptions.ID): 2^53-1, the largest
// integer a JSON number holds exactly (JavaScript's Number.MAX_SAFE_INTEGER), so every id
// survives a JSON export read by any tool. The bound also keeps room above an imported id:
// later creates count on from it, and an id near the top of int64 would leave none (SQLite
// answers "database or disk is full" and PostgreSQL's sequence "reached maximum value" to
// every create after it, for good).
const MaxID = int64(1)<<53 - 1

// CreateOpts returns the one CreateOptions a create reads (the zero value when none was
// given), checked: EINVALID for a negative ID, an ID above MaxID or a bad key.
func CreateOpts(opts []CreateOptions) (CreateOptions, error) {
	var o CreateOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.ID < 0 {
		return o, Errorf(EINVALID, "id %d is not a record id", o.ID)
	}
	if o.ID > MaxID {
		return o, Errorf(EINVALID, "id %d is too large: a create may ask for an id up to %d (2^53-1, the largest a JSON number holds exactly)", o.ID, MaxID)
	}
	if o.IdempotencyKey != "" {
		if err := CheckKey(ScopeAPI, o.IdempotencyKey); err != nil {
			return o, err
		}
	}
	return o, nil
}

// CreateHash is the request hash a keyed create stores with its key (see RequestHash): the
// kind, the id asked for (0: the next free one) and the values.
func CreateHash(kind Kind, id int64, vals Values) string {
	return RequestHash(kind, id, Update{Set: vals})
}

// CreatedResult is what a keyed create stores with its key: the record it made, at version 1.
func CreatedResult(r *Record) KeyResult {
	return KeyResult{Kind: r.Kind, ID: r.ID, Version: r.Version}
}

// IDTakenError is the error of a create asking for an id a record of kind already has.
func IDTakenError(kind Kind, id int64) error {
	return Errorf(EINVALID, "%s %d already exists: a create with an id needs an id no %s has", kind, id, kind)
}

// CreateParent returns the parent a create of kind (a tree kind) with the checked values vals puts
// the new record under (0 for none), and the lease token opts present for it. EINVALID when a
// token is presented for a create without a parent: a token nobody needs is a mistake the
// caller should hear about.
func (r *Registry) CreateParent(kind Kind, vals Values, opts []CreateOptions) (parent int64, token string, err error) {
	if len(opts) > 0 {
		token = opts[0].ParentLeaseToken
	}
	if p, ok := vals[ParentField].(int64); ok && r.Tree(kind) {
		return p, token, nil
	}
	if token != "" {
		return 0, "", Errorf(EINVALID, "a parent lease token was given, but the new %s has no parent", kind)
	}
	return 0, "", nil
}

// CreatePlan is what a create writes, decided by Registry.PlanCreate before a store opens
// its transaction.
type CreatePlan struct {
	Actor Actor
	Kind  Kind
	// Values holds every field of the kind: the values given, checked, and the defaults.
	Values Values
	// Parent is the record the new record goes under (0 for none, and for kinds that are not
	// a tree); ParentToken is the lease token presented for it.
	Parent      int64
	ParentToken string
	// Unique holds the checked value of each unique field of the kind, by field.
	Unique map[string]string
	// ID is the id the caller asked for (0: the store picks one).
	ID int64
	// Key is the create's idempotency key ("" for none) and Hash its request hash.
	Key, Hash string
	// Written names the fields the caller gave, sorted: the fields of the change row and of
	// the history version.
	Written []string
	// Keep is set when the create keeps history (KeepsHistory).
	Keep bool
	// Extra holds the columns a store writes beside the registry fields, in a fixed order:
	// the unique fields' keys, then the folded search columns (see Folds).
	Extra []Column
}

// Column is a derived column a store writes beside the registry fields, with its value.
type Column struct {
	Name  string
	Value string
}

// createWhat names a create of kind in messages.
func createWhat(kind Kind) string { return fmt.Sprintf("the create of a %s", kind) }

// PlanCreate decides what a create of kind with vals writes, for the actor in ctx: the
// values checked and completed (CheckCreate), the parent and its token (CreateParent), the
// actor's permissions (a kind they may write, not at the root of a kind limited to subtrees), the
// sku checked (CheckSKU) and its key, the folded columns, and what the logs record. Every
// store calls it first, so they refuse and write exactly the same things.
func (r *Registry) PlanCreate(ctx context.Context, kind Kind, vals Values, opts []CreateOptions) (*CreatePlan, error) {
	actor, err := WriterFrom(ctx, createWhat(kind))
	if err != nil {
		return nil, err
	}
	full, err := r.CheckCreate(kind, actor.Role, vals)
	if err != nil {
		return nil, err
	}
	o, err := CreateOpts(opts)
	if err != nil {
		return nil, err
	}
	p := &CreatePlan{Actor: actor, Kind: kind, Values: full, Written: sortedNames(vals), Keep: KeepsHistory(ctx, actor),
		ID: o.ID, Key: o.IdempotencyKey}
	if p.Key != "" {
		p.Hash = CreateHash(kind, o.ID, vals)
	}
	if p.Parent, p.ParentToken, err = r.CreateParent(kind, full, opts); err != nil {
		return nil, err
	}
	if err := actor.CheckKind(createWhat(kind), kind); err != nil {
		return nil, err
	}
	if p.Parent == 0 && actor.LimitsPlace(kind) { // at the root: outside every subtree
		return nil, actor.forbidden(createWhat(kind))
	}
	if p.Unique, err = r.uniqueValues(kind, full); err != nil {
		return nil, err
	}
	p.Extra = r.ExtraColumns(kind, full)
	return p, nil
}

// uniqueValues returns the values of kind's unique fields in vals, checked (CheckUniqueValue).
func (r *Registry) uniqueValues(kind Kind, vals Values) (map[string]string, error) {
	var out map[string]string
	for _, f := range r.UniqueFields(kind) {
		v, _ := vals[f.Name].(string)
		if err := CheckUniqueValue(f.Name, v); err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]string{}
		}
		out[f.Name] = v
	}
	return out, nil
}

// ExtraColumns returns the columns a store writes beside the registry fields of a record of
// kind with the values vals, in a fixed order: each unique field's key (UniqueKeyColumn),
// then the folded search columns (see Folds). A create and a restore write the same ones.
func (r *Registry) ExtraColumns(kind Kind, vals Values) []Column {
	var out []Column
	for _, f := range r.UniqueFields(kind) {
		v, _ := vals[f.Name].(string)
		out = append(out, Column{Name: UniqueKeyColumn(f.Name), Value: SKUKey(v)})
	}
	folds := r.Folds(kind, vals)
	for _, col := range sortedNames(folds) {
		out = append(out, Column{Name: col, Value: folds[col]})
	}
	return out
}

// CreateSteps are the reads and writes a store's create offers RunCreate, each inside the
// create's one transaction (or under the in-memory store's lock), for records of the kind
// being created.
type CreateSteps interface {
	ParentSteps
	// CheckFreeID refuses (IDTakenError) an id a record of the kind already has.
	CheckFreeID(id int64) error
	// CheckUnique refuses (DuplicateKeyError) a value of the unique field whose key
	// (SKUKey) another record of the kind has.
	CheckUnique(field, value string) error
	// RecordExists reports whether a record of kind with id exists (for a ref's target).
	RecordExists(kind Kind, id int64) (bool, error)
	// Insert writes the record p describes at version 1, its history version (p.Keep) and
	// its EventCreated change, and returns it.
	Insert(p *CreatePlan) (*Record, error)
}

// RunCreate creates the record p describes, after the store answered a replayed key: it
// checks the id asked for is free, the sku unique, and, for a record with a parent, the
// parent (CheckParent), then inserts it. Every store calls it, so they check and refuse in
// the same order.
func (r *Registry) RunCreate(p *CreatePlan, s CreateSteps) (*Record, error) {
	if err := r.checkFresh(p.Kind, 0, s, func(n *Registry) error { return checkCreateIn(n, p) }); err != nil {
		return nil, err
	}
	if p.ID != 0 {
		if err := s.CheckFreeID(p.ID); err != nil {
			return nil, err
		}
	}
	for _, name := range sortedNames(p.Unique) {
		if err := s.CheckUnique(name, p.Unique[name]); err != nil {
			return nil, err
		}
	}
	if err := r.CheckRefs(p.Kind, p.Values, s.RecordExists); err != nil {
		return nil, err
	}
	if p.Parent != 0 {
		if err := r.CheckParent(s, p.Actor, p.Kind, p.Parent, p.ParentToken); err != nil {
			return nil, err
		}
	}
	return s.Insert(p)
}

// CheckRefs refuses (EINVALID) a write of vals to a record of kind whose ref fields (a tree's
// parent aside, which the tree checks cover) point to a record that does not exist, asking
// exists inside the write's transaction. Stores call it for creates (RunCreate) and saves.
func (r *Registry) CheckRefs(kind Kind, vals Values, exists func(Kind, int64) (bool, error)) error {
	for _, f := range r.kinds[kind] {
		if f.Type != TypeRef || (f.Name == ParentField && r.Tree(kind)) {
			continue
		}
		id, ok := vals[f.Name].(int64)
		if !ok {
			continue
		}
		found, err := exists(f.To, id)
		if err != nil {
			return err
		}
		if !found {
			return Errorf(EINVALID, "%s.%s: %s %d does not exist", kind, f.Name, f.To, id)
		}
	}
	return nil
}

// SaveChecks are the reads of other records a save's checks make, inside its transaction:
// a store hands them to CheckSave.
type SaveChecks interface {
	// CheckUnique refuses (DuplicateKeyError) a value of the unique field whose key another
	// record of the kind than the one saved has.
	CheckUnique(field, value string) error
	// RecordExists reports whether a record of kind with id exists (for a ref's target).
	RecordExists(kind Kind, id int64) (bool, error)
}

// CheckSave runs the checks of the save plan p of a record of kind that read other records,
// in a fixed order: each unique value it writes is free (in field order), then each ref it
// writes names a record that exists (CheckRefs). Every store calls it before its write, so
// they refuse the same saves in the same words.
func (r *Registry) CheckSave(kind Kind, p *SavePlan, s SaveChecks) error {
	for _, field := range sortedNames(p.Keys) {
		v, _ := p.Set[field].(string)
		if err := s.CheckUnique(field, v); err != nil {
			return err
		}
	}
	return r.CheckRefs(kind, p.Set, s.RecordExists)
}
