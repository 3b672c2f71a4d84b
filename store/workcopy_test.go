package store_test

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestCheckCopySave: a working copy takes an editor's saves and no system save; the refusal
// names the system-owned fields a save writes (a field is the system's by the registry in
// use, so a registry that makes checksum shared turns its refusal into the role's), or the
// role when it writes only shared ones, and always the source.
func TestCheckCopySave(t *testing.T) {
	cs := &store.CopyState{Source: "/data/team.db", Kinds: []store.Kind{store.KindProduct}}
	editor := store.Actor{Name: "alice", Role: store.RoleEditor}
	system := store.Actor{Name: "script", Role: store.RoleSystem}
	shared, err := store.ParseRegistry("shared.yaml", []byte(strings.Replace(defaultYAML(t),
		"{name: checksum,     type: string, owner: system,", "{name: checksum,     type: string, owner: shared,", 1)))
	if err != nil {
		t.Fatal(err)
	}
	set := func(vals store.Values) store.Update { return store.Update{BaseVersion: 1, Set: vals} }
	for _, tc := range []struct {
		name  string
		reg   *store.Registry
		actor store.Actor
		u     store.Update
		want  string // "" for no refusal
	}{
		{"editor", store.DefaultRegistry(), editor, set(store.Values{"name": "x", "stock": int64(3)}), ""},
		{"system field", store.DefaultRegistry(), system, set(store.Values{"checksum": "abc"}), "product.checksum: a working copy writes only editor and shared fields"},
		{"system fields among shared", store.DefaultRegistry(), system, set(store.Values{"availability": "backorder", "thumbnail": "t", "checksum": "c"}),
			"product.checksum, product.thumbnail: a working copy writes only editor"},
		{"shared counter", store.DefaultRegistry(), system, store.Update{Add: map[string]int64{"stock": -3}}, "product.stock written as system: a working copy takes no system writes"},
		{"field made shared", shared, system, set(store.Values{"checksum": "abc"}), "product.checksum written as system"},
		{"editor, field made shared", shared, editor, set(store.Values{"checksum": "abc"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.reg.CheckCopySave(cs, store.KindProduct, tc.actor, tc.u)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if store.ErrorCode(err) != store.EFORBIDDEN || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "the source, /data/team.db") {
				t.Errorf("got %v, want EFORBIDDEN with %q naming the source", err, tc.want)
			}
		})
	}
	if err := store.CheckCopyWriter(cs, editor); err != nil {
		t.Errorf("CheckCopyWriter(editor) = %v, want nil", err)
	}
	if err := store.CheckCopyWriter(cs, system); store.ErrorCode(err) != store.EFORBIDDEN || !strings.Contains(err.Error(), "the source, /data/team.db") {
		t.Errorf("CheckCopyWriter(system) = %v, want EFORBIDDEN naming the source", err)
	}
}

// TestRepushFields_Tree: a custom tree kind's parent is compared on a repush as a
// document's is.
func TestRepushFields_Tree(t *testing.T) {
	r, err := store.LoadRegistry("testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := store.Values{"name": "a", store.ParentField: int64(1)}
	mine := store.Values{"name": "a", store.ParentField: int64(2)}
	changed, conflict := r.RepushFields("area", base, mine, base)
	if len(changed) != 1 || changed[0] != store.ParentField || len(conflict) != 0 {
		t.Errorf("repush of a moved area = changed %v, conflict %v; want parent_id changed", changed, conflict)
	}
}
