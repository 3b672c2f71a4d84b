package store_test

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestParseRegistry_Worker: a field names the worker that keeps it (worker: checksum,
// thumbnail or wordcount); the word survives the canonical form, a field of the wrong type,
// an editor-owned one or an unknown task is refused, and the sample schema and a file of
// the form before schemas mark the sample's fields.
func TestParseRegistry_Worker(t *testing.T) {
	const base = `kinds:
  claim:
    fields:
      - {name: subject, type: string, owner: editor, rule: scalar}
      - {name: sha,     type: string, owner: system, rule: scalar, worker: checksum}
`
	r, err := store.ParseRegistry("w.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if f, err := r.Field("claim", "sha"); err != nil || f.Worker != "checksum" {
		t.Fatalf("claim.sha = %+v, %v; want worker checksum", f, err)
	}
	again, err := store.ParseRegistry("again.yaml", r.YAML())
	if err != nil || !again.Same(r) {
		t.Fatalf("canonical form reparsed: %v (same %v)\n%s", err, err == nil && again.Same(r), r.YAML())
	}
	for _, tc := range []struct{ field, want string }{
		{"{name: sha, type: string, owner: system, rule: scalar, worker: crc}", `claim.sha: worker "crc" (want checksum, thumbnail or wordcount)`},
		{"{name: sha, type: int,    owner: system, rule: scalar, worker: checksum}", "claim.sha: worker checksum keeps a field of type string, not int"},
		{"{name: sha, type: string, owner: system, rule: scalar, worker: wordcount}", "claim.sha: worker wordcount keeps a field of type int, not string"},
		{"{name: sha, type: string, owner: editor, rule: scalar, worker: checksum}", "must be owned by system or shared"},
	} {
		text := strings.Replace(base, "{name: sha,     type: string, owner: system, rule: scalar, worker: checksum}", tc.field, 1)
		_, err := store.ParseRegistry("w.yaml", []byte(text))
		if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "w.yaml:5:") {
			t.Errorf("%s: %v, want EINVALID at w.yaml:5 saying %q", tc.field, err, tc.want)
		}
	}
	legacy, err := store.LoadRegistry("testdata/legacy_fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, reg := range []*store.Registry{store.DefaultRegistry(), legacy} {
		for _, kf := range []struct {
			kind          store.Kind
			field, worker string
		}{
			{store.KindProduct, "checksum", "checksum"}, {store.KindProduct, "thumbnail", "thumbnail"},
			{store.KindDocument, "checksum", "checksum"}, {store.KindDocument, "word_count", "wordcount"},
			{store.KindProduct, "search_index", ""},
		} {
			if f, err := reg.Field(kf.kind, kf.field); err != nil || f.Worker != kf.worker {
				t.Errorf("legacy %v: %s.%s worker = %+v, %v; want %q", reg.Legacy(), kf.kind, kf.field, f, err, kf.worker)
			}
		}
	}
}
