package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// draft is a person's unsaved edits of one record, kept on disk so that a crash loses at
// most a few seconds of typing.
type draft struct {
	User        string            `json:"user"`
	Kind        store.Kind        `json:"kind"`
	ID          int64             `json:"id"`
	BaseVersion int64             `json:"base_version"`
	Saved       time.Time         `json:"saved"`
	Values      map[string]string `json:"values"` // every editable field's text, as typed
	Deltas      map[string]int64  `json:"deltas,omitempty"`
}

// draftStore keeps drafts under dir/<user>/<kind>-<id>.json, written atomically with mode 0600.
type draftStore struct {
	dir  string
	user string
}

func (s *draftStore) path(kind store.Kind, id int64) string {
	name := fmt.Sprintf("%s-%d.json", kind, id)
	if id == 0 {
		name = fmt.Sprintf("%s-new.json", kind)
	}
	return filepath.Join(s.dir, url.PathEscape(s.user), name)
}

// Save writes d atomically: a temporary file in the same directory, synced, then renamed.
func (s *draftStore) Save(d draft) error {
	p := s.path(d.Kind, d.ID)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".draft-*")
	if err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("save draft: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("save draft: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save draft: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	return nil
}

// Load returns the draft of a record, or nil when there is none.
func (s *draftStore) Load(kind store.Kind, id int64) (*draft, error) {
	data, err := os.ReadFile(s.path(kind, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read draft: %w", err)
	}
	var d draft
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("read draft %s: %w", s.path(kind, id), err)
	}
	return &d, nil
}

// Delete removes a record's draft; a missing draft is not an error.
func (s *draftStore) Delete(kind store.Kind, id int64) error {
	err := os.Remove(s.path(kind, id))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete draft: %w", err)
	}
	return nil
}
