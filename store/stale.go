package store

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// A write made by a client that read the store's schema before a schema change: the client
// checked it against the registry it holds, which may allow what the store's schema no
// longer does (a limit narrowed, an enum value removed, a field dropped or renamed). So
// every write learns, inside its transaction, the version of the schema the store keeps
// (cheaply: a column of a read the write makes anyway, or a condition of its one
// statement); when it is newer than the registry's, RunUpdate, RunCreate, RunDelete and
// RunMove read the store's schema and check the write against it too: a write it still
// allows goes ahead, any other is refused with SchemaChangedError, having written nothing.
// The client keeps running its registry: it learns the new one by opening the store again.

// SchemaReader is the step a store's write offers to read the schema the store keeps now,
// inside the write's transaction.
type SchemaReader interface {
	// SchemaVersion returns the version of the schema the store keeps now (0: the store
	// has no version to compare, and the write is checked against the registry alone).
	SchemaVersion() (int64, error)
	// StoredSchema returns the schema the store keeps now, at its version, which the write
	// read as v (a store may answer from a SchemaCache).
	StoredSchema(v int64) (*Registry, error)
}

// SchemaChangedError is the refusal (EINVALID) of a write of kind id made with a registry
// at version from that the store's schema at version to does not allow, for the reason
// cause: the client must open the store again.
func SchemaChangedError(kind Kind, id int64, from, to int64, cause error) *Error {
	what := string(kind)
	if id != 0 {
		what = fmt.Sprintf("%s %d", kind, id)
	}
	return Errorf(EINVALID, "%s: the store's schema changed since this client opened it (version %d, now %d: %v); open the store again",
		what, from, to, cause)
}

// storedIfNewer returns the store's schema when v, the version read in the write's
// transaction, is newer than r's; nil when it is not, or the store offers no SchemaReader.
func (r *Registry) storedIfNewer(v int64, s any) (*Registry, error) {
	rd, ok := s.(SchemaReader)
	if !ok || v == 0 || v <= r.version || r.version == 0 {
		return nil, nil
	}
	n, err := rd.StoredSchema(v)
	if err != nil {
		return nil, fmt.Errorf("read the store's schema: %w", err)
	}
	if n.Version() <= r.version {
		return nil, nil
	}
	return n, nil
}

// checkFresh asks s (when it is a SchemaReader) for the store's schema version and, when it
// is newer than r's, checks the write of kind id against the store's schema with check:
// SchemaChangedError when it refuses.
func (r *Registry) checkFresh(kind Kind, id int64, s any, check func(n *Registry) error) error {
	rd, ok := s.(SchemaReader)
	if !ok || r.version == 0 {
		return nil
	}
	v, err := rd.SchemaVersion()
	if err != nil {
		return fmt.Errorf("read the store's schema version: %w", err)
	}
	return r.checkAgainst(kind, id, v, s, check)
}

// checkAgainst is checkFresh with the version v already read.
func (r *Registry) checkAgainst(kind Kind, id int64, v int64, s any, check func(n *Registry) error) error {
	n, err := r.storedIfNewer(v, s)
	if err != nil || n == nil {
		return err
	}
	if err := r.sameColumns(n, kind); err != nil {
		return SchemaChangedError(kind, id, r.version, n.Version(), err)
	}
	if check != nil {
		if err := check(n); err != nil {
			return SchemaChangedError(kind, id, r.version, n.Version(), err)
		}
	}
	return nil
}

// sameColumns refuses a write of kind when n, the store's newer schema, lacks a field of
// r's kind or gives it another type or target: the write reads or writes the record's
// columns as r has them. Fields n adds are not written by r's writes, which is allowed.
func (r *Registry) sameColumns(n *Registry, kind Kind) error {
	if _, ok := n.kinds[kind]; !ok {
		return fmt.Errorf("kind %s is gone", kind)
	}
	for _, f := range r.kinds[kind] {
		nf, err := n.Field(kind, f.Name)
		if err != nil {
			return fmt.Errorf("field %s.%s is gone", kind, f.Name)
		}
		if nf.Type != f.Type || nf.To != f.To {
			return fmt.Errorf("field %s.%s is now of type %s", kind, f.Name, nf.Type)
		}
	}
	return nil
}

// checkUpdateIn is the check of the save p against the store's newer schema n.
func checkUpdateIn(n *Registry, p *UpdateRequest) error {
	return n.CheckUpdate(p.Kind, p.Actor.Role, p.Update)
}

// checkCreateIn is the check of the create p against the store's newer schema n: the values
// given as CheckCreate checks them, the defaults r filled in as values of n's fields.
func checkCreateIn(n *Registry, p *CreatePlan) error {
	given := make(Values, len(p.Written))
	for _, name := range p.Written {
		given[name] = p.Values[name]
	}
	if _, err := n.CheckCreate(p.Kind, p.Actor.Role, given); err != nil {
		return err
	}
	for _, name := range sortedNames(p.Values) {
		if _, ok := given[name]; ok {
			continue
		}
		f, err := n.Field(p.Kind, name)
		if err != nil {
			return err
		}
		if err := f.Check(p.Values[name]); err != nil {
			return err
		}
	}
	return nil
}

// checkRefsIn refuses a delete of kind when n, the store's newer schema, has refs to kind
// that r does not know of: r's delete would not look for their referrers.
func (r *Registry) checkRefsIn(n *Registry, kind Kind) error {
	mine := r.Refs(kind)
	for _, ref := range n.Refs(kind) {
		if !slices.ContainsFunc(mine, func(m FieldOf) bool { return m.Kind == ref.Kind && m.Field.Name == ref.Field.Name }) {
			return fmt.Errorf("%s.%s now refers to %s", ref.Kind, ref.Field.Name, kind)
		}
	}
	return nil
}

// CheckFresh refuses (SchemaChangedError) a write of kind id that a store makes outside
// RunUpdate, RunCreate, RunDelete and RunMove (a restore) when s, read inside the write's
// transaction, says the store's schema is newer than r and the write reads or writes columns
// the store's schema no longer has as r has them.
func (r *Registry) CheckFresh(kind Kind, id int64, s SchemaReader) error {
	return r.checkFresh(kind, id, s, nil)
}

// SchemaCache keeps the newest schema a store's writes read (SchemaReader.StoredSchema), so
// that each write of a client opened before a change does not parse it again.
type SchemaCache struct{ p atomic.Pointer[Registry] }

// Get returns the cached schema at version v, or load's (then cached).
func (c *SchemaCache) Get(v int64, load func() (*Registry, error)) (*Registry, error) {
	if n := c.p.Load(); n != nil && n.Version() == v {
		return n, nil
	}
	n, err := load()
	if err != nil {
		return nil, err
	}
	c.p.Store(n)
	return n, nil
}

// StoreSchemaNewer reports whether the schema the store keeps now (read through s, in a
// write's transaction) is newer than r's: a bulk create (BulkCreator) then leaves its
// records to CreateRecord, whose checks decide them against the store's schema. Errors are
// the read's.
func (r *Registry) StoreSchemaNewer(s SchemaReader) (bool, error) {
	if r.version == 0 {
		return false, nil
	}
	v, err := s.SchemaVersion()
	if err != nil {
		return false, fmt.Errorf("read the store's schema version: %w", err)
	}
	return v > r.version, nil
}
