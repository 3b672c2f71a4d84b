package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// draft is a person's unsaved edits of one record, kept on disk so that a crash loses at
// most a few seconds of typing.
type draft struct {
	StoreID     string            `json:"store_id"` // the store the edits were made on
	User        string            `json:"user"`
	Kind        store.Kind        `json:"kind"`
	ID          int64             `json:"id"`
	BaseVersion int64             `json:"base_version"`
	Saved       time.Time         `json:"saved"`
	Values      map[string]string `json:"values"` // every editable field's text, as typed
	// Base is every editable field's text in the version the edits were made on
	// (BaseVersion), so that bringing the edits back applies only what they changed.
	// Nil in drafts from before it was kept.
	Base   map[string]string `json:"base,omitempty"`
	Deltas map[string]int64  `json:"deltas,omitempty"`

	// legacy: read from where tandem kept drafts before they carried a store id, so
	// nobody knows which store it was made on (see draftStore).
	legacy bool
}

// draftStore keeps drafts under dir/stores/<store id>/<user>/<kind>-<id>.json, written
// atomically with mode 0600, so a draft is offered only on the store it was made on: the
// same id of the same kind on another store is another record.
//
// Drafts written before drafts carried a store id live in dir/<user>/. Nobody knows which
// store they belong to, so they are neither dropped (that would lose someone's work) nor
// offered as if they belonged here: the editor offers one with a warning to check it, on
// whichever store the record is opened first, and deletes it once the person has answered.
//
// Writes are asynchronous (tea.Cmds), so a draft write made before a discard could land
// after it and bring the draft back. Every operation takes a ticket when it is decided (in
// Update, in order) and the store applies an operation on a file only if no later ticket
// was applied to that file: a stale write arriving after a delete is dropped.
type draftStore struct {
	dir     string
	user    string
	storeID string

	mu     sync.Mutex
	issued uint64
	last   map[string]uint64 // per file: the newest ticket applied
}

func newDraftStore(dir, user, storeID string) *draftStore {
	return &draftStore{dir: dir, user: user, storeID: storeID, last: map[string]uint64{}}
}

// ticket returns the next operation's place in line. Take it when the operation is decided.
func (s *draftStore) ticket() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issued++
	return s.issued
}

func draftName(kind store.Kind, id int64) string {
	if id == 0 {
		return fmt.Sprintf("%s-new.json", kind)
	}
	return fmt.Sprintf("%s-%d.json", kind, id)
}

// path is where this store's draft of a record is kept. An empty store id (a caller that
// does not know its store) is a store of its own.
func (s *draftStore) path(kind store.Kind, id int64) string {
	sid := s.storeID
	if sid == "" {
		sid = "_"
	}
	return filepath.Join(s.dir, "stores", url.PathEscape(sid), url.PathEscape(s.user), draftName(kind, id))
}

// legacyPath is where drafts were kept before they carried a store id.
func (s *draftStore) legacyPath(kind store.Kind, id int64) string {
	return filepath.Join(s.dir, url.PathEscape(s.user), draftName(kind, id))
}

// apply runs op on file p unless an operation with a later ticket already ran on it.
func (s *draftStore) apply(p string, t uint64, op func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t < s.last[p] {
		return nil // decided before an operation that already ran: it is out of date
	}
	s.last[p] = t
	return op()
}

// Save writes d, marked as made on this store, atomically (a temporary file in the same
// directory, synced, then renamed), unless a later operation on the same draft already ran.
func (s *draftStore) Save(d draft, t uint64) error {
	d.StoreID = s.storeID
	p := s.path(d.Kind, d.ID)
	return s.apply(p, t, func() error {
		if err := writeDraft(p, d); err != nil {
			return fmt.Errorf("save draft: %w", err)
		}
		return nil
	})
}

func writeDraft(p string, d draft) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".draft-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// Load returns this store's draft of a record; failing that, a draft from before drafts
// carried a store id (marked legacy); or nil when there is none.
func (s *draftStore) Load(kind store.Kind, id int64) (*draft, error) {
	d, err := readDraft(s.path(kind, id))
	if err != nil || d != nil {
		if d != nil && d.StoreID != s.storeID {
			return nil, nil // copied in from another store's directory: not ours
		}
		return d, err
	}
	d, err = readDraft(s.legacyPath(kind, id))
	if d != nil {
		d.legacy = true
	}
	return d, err
}

func readDraft(p string) (*draft, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read draft: %w", err)
	}
	var d draft
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("read draft %s: %w", p, err)
	}
	return &d, nil
}

// Delete removes this store's draft of a record, unless a later operation on it already
// ran; a missing draft is not an error.
func (s *draftStore) Delete(kind store.Kind, id int64, t uint64) error {
	p := s.path(kind, id)
	return s.apply(p, t, func() error { return removeDraft(p) })
}

// DeleteLegacy removes a record's draft from before drafts carried a store id, once the
// person has answered its offer.
func (s *draftStore) DeleteLegacy(kind store.Kind, id int64, t uint64) error {
	p := s.legacyPath(kind, id)
	return s.apply(p, t, func() error { return removeDraft(p) })
}

func removeDraft(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete draft: %w", err)
	}
	return nil
}
