package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// raceRounds is how many times each two-sided race below is run, each on records of its own.
const raceRounds = 10

// testSchemaRelativeRace: relative changes of a custom kind's counter (rating) from many
// goroutines, editors and workers, are all applied exactly once: none is lost, none is
// applied twice, one version each.
func testSchemaRelativeRace(t *testing.T, open Opener) {
	s := freshParts(t, open)
	acme := mustSupplier(t, s, "ACME", "Acme")
	const goroutines, each = 8, 25
	hammer(t, goroutines, each, func(g, i int) error {
		a := actAlice
		if g%2 == 1 {
			a = actWorker
		}
		u := store.Update{Add: map[string]int64{"rating": int64(g + 1)}, IdempotencyKey: fmt.Sprintf("rate-%d-%d", g, i)}
		for range 2 { // sent twice: applied once
			if _, err := s.UpdateRecord(actx(t, a), kindSupplier, acme.ID, u); err != nil {
				return err
			}
		}
		return nil
	})
	got := mustFind(t, s, kindSupplier, acme.ID)
	want := int64(each * goroutines * (goroutines + 1) / 2)
	if got.Fields["rating"] != want || got.Version != 1+goroutines*each {
		t.Errorf("rating = %v v%d, want %d v%d", got.Fields["rating"], got.Version, want, 1+goroutines*each)
	}
	if got.Fields["name"] != "Acme" || got.Fields["code"] != "ACME" {
		t.Errorf("other fields = %v, want them untouched", got.Fields)
	}
}

// testSchemaUniqueRace: two creates of codes with one key ("ACME-n" and " acme-n ") at the
// same moment: exactly one wins, the other is refused (EINVALID) naming the field and the
// winner. Two saves that give two suppliers one code race the same way.
func testSchemaUniqueRace(t *testing.T, open Opener) {
	s := freshParts(t, open)
	for round := range raceRounds {
		codes := []string{fmt.Sprintf("ACME-%d", round), fmt.Sprintf(" acme-%d ", round)}
		var made [2]*store.Record
		errs := startTogether(
			func() (err error) {
				made[0], err = s.CreateRecord(actx(t, actAlice), kindSupplier, store.Values{"code": codes[0], "name": "Alice's"})
				return err
			},
			func() (err error) {
				made[1], err = s.CreateRecord(actx(t, actBob), kindSupplier, store.Values{"code": codes[1], "name": "Bob's"})
				return err
			})
		requireOneWinner(t, fmt.Sprintf("round %d: creates of %q and %q", round, codes[0], codes[1]), errs, func(w int) string {
			return fmt.Sprintf("supplier %d", made[w].ID)
		}, "code")
	}
	if n, err := s.CountRecords(t.Context(), kindSupplier); err != nil || n != raceRounds {
		t.Errorf("suppliers = %d, %v; want %d, one per round", n, err, raceRounds)
	}
	// A save to a taken code is refused naming the holder; a record may respell its own.
	other := mustSupplier(t, s, "OTHER", "Other")
	mustSave(t, s, actx(t, actAlice), kindSupplier, other.ID, store.Update{BaseVersion: 1, Set: store.Values{"code": " other"}})
	mustSave(t, s, actx(t, actAlice), kindSupplier, other.ID, store.Update{BaseVersion: 2, Set: store.Values{"code": "OTHER"}})
	_, err := s.UpdateRecord(actx(t, actAlice), kindSupplier, other.ID, store.Update{BaseVersion: 3, Set: store.Values{"code": "Acme-0"}})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, "code", "supplier 1")
	for round := range raceRounds {
		a := mustSupplier(t, s, fmt.Sprintf("A-%d", round), "a")
		b := mustSupplier(t, s, fmt.Sprintf("B-%d", round), "b")
		code := fmt.Sprintf("SAME-%d", round)
		errs := startTogether(
			func() error {
				_, err := s.UpdateRecord(actx(t, actAlice), kindSupplier, a.ID, store.Update{BaseVersion: 1, Set: store.Values{"code": code}})
				return err
			},
			func() error {
				_, err := s.UpdateRecord(actx(t, actBob), kindSupplier, b.ID, store.Update{BaseVersion: 1, Set: store.Values{"code": strings.ToLower(code)}})
				return err
			})
		requireOneWinner(t, fmt.Sprintf("round %d: saves of %s", round, code), errs, func(w int) string {
			return fmt.Sprintf("supplier %d", []int64{a.ID, b.ID}[w])
		}, "code")
	}
}

// requireOneWinner fails unless exactly one of two racing calls succeeded and the other was
// refused (EINVALID) with a message holding parts and naming the winner (winner(i) for the
// call i that won).
func requireOneWinner(t *testing.T, what string, errs []error, winner func(int) string, parts ...string) {
	t.Helper()
	switch {
	case errs[0] == nil && errs[1] == nil:
		t.Errorf("%s: both won", what)
	case errs[0] != nil && errs[1] != nil:
		t.Errorf("%s: both lost: %v; %v", what, errs[0], errs[1])
	default:
		w := 0
		if errs[0] != nil {
			w = 1
		}
		err := errs[1-w]
		if store.ErrorCode(err) != store.EINVALID {
			t.Errorf("%s: the loser got %v (%q), want EINVALID", what, err, store.ErrorCode(err))
			return
		}
		for _, p := range append(parts, winner(w)) {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s: the loser's error %q does not name %q", what, err, p)
			}
		}
	}
}

// testSchemaRefs: a ref must point to an existing record of its target kind, on create and
// on save; a record that others refer to cannot be deleted (the message names them) until
// they go or point elsewhere; a restore does not bring back a ref to a record that is gone.
func testSchemaRefs(t *testing.T, open Opener) {
	s := freshParts(t, open)
	ctx := actx(t, actAlice)
	acme := mustSupplier(t, s, "ACME", "Acme")
	zen := mustSupplier(t, s, "ZEN", "Zenith")
	// An area whose id no supplier has: a ref is checked against its own kind's records.
	var area *store.Record
	for area == nil || area.ID <= zen.ID {
		area = mustArea(t, s, "an area", nil)
	}
	for _, id := range []int64{999, area.ID} {
		_, err := s.CreateRecord(ctx, kindPart, store.Values{"label": "Bolt", "supplier": id})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, fmt.Sprintf("part.supplier: supplier %d does not exist", id))
	}
	bolt := mustCreate(t, s, actAlice, kindPart, store.Values{"label": "Bolt", "supplier": acme.ID})
	nut := mustCreate(t, s, actBob, kindPart, store.Values{"label": "Nut", "supplier": acme.ID})
	_, err := s.UpdateRecord(ctx, kindPart, bolt.ID, store.Update{BaseVersion: 1, Set: store.Values{"supplier": int64(999)}})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, "supplier 999 does not exist")
	if got := mustFind(t, s, kindPart, bolt.ID); got.Version != 1 || got.Fields["supplier"] != acme.ID {
		t.Errorf("after a refused save: bolt = %v v%d", got.Fields, got.Version)
	}

	_, err = s.DeleteRecord(ctx, kindSupplier, acme.ID, store.Delete{ExpectVersion: 1})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, fmt.Sprintf("part %d (supplier)", bolt.ID), fmt.Sprintf("part %d (supplier)", nut.ID))
	mustFind(t, s, kindSupplier, acme.ID)

	// Pointing one elsewhere and deleting the other lets the supplier go.
	mustSave(t, s, ctx, kindPart, bolt.ID, store.Update{BaseVersion: 1, Set: store.Values{"supplier": zen.ID}})
	_, err = s.DeleteRecord(ctx, kindSupplier, acme.ID, store.Delete{ExpectVersion: 1})
	requireMessage(t, err, fmt.Sprintf("part %d (supplier)", nut.ID))
	if strings.Contains(err.Error(), fmt.Sprintf("part %d ", bolt.ID)) {
		t.Errorf("error %q names part %d, which points elsewhere now", err, bolt.ID)
	}
	mustDelete(t, s, actAlice, kindPart, nut.ID, store.Delete{ExpectVersion: 1})
	mustDelete(t, s, actAlice, kindSupplier, acme.ID, store.Delete{ExpectVersion: 1})
	requireGone(t, s, kindSupplier, acme.ID)

	// The nut's tombstone names the deleted supplier: restoring it would bring back a ref
	// to nothing, so it is refused until the supplier is back.
	_, err = s.RestoreRecord(ctx, kindPart, nut.ID, store.Restore{})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, fmt.Sprintf("supplier %d does not exist", acme.ID))
	requireGone(t, s, kindPart, nut.ID)
	mustRestore(t, s, actAlice, kindSupplier, acme.ID)
	if got := mustRestore(t, s, actAlice, kindPart, nut.ID).Record; got.Fields["supplier"] != acme.ID {
		t.Errorf("restored nut = %v, want supplier %d", got.Fields, acme.ID)
	}
}

// testSchemaRefsRace: a delete of a supplier and a create of a part that refers to it, at
// the same moment: exactly one wins, and no part is left referring to a supplier that is
// gone.
func testSchemaRefsRace(t *testing.T, open Opener) {
	s := freshParts(t, open)
	for round := range raceRounds {
		sp := mustSupplier(t, s, fmt.Sprintf("R-%d", round), "racing")
		var part *store.Record
		errs := startTogether(
			func() error {
				_, err := s.DeleteRecord(actx(t, actAlice), kindSupplier, sp.ID, store.Delete{ExpectVersion: 1})
				return err
			},
			func() (err error) {
				part, err = s.CreateRecord(actx(t, actBob), kindPart, store.Values{"label": "racing part", "supplier": sp.ID})
				return err
			})
		switch {
		case errs[0] == nil && errs[1] == nil:
			t.Errorf("round %d: the supplier was deleted and part %d made referring to it", round, part.ID)
		case errs[0] != nil && errs[1] != nil:
			t.Errorf("round %d: both lost: %v; %v", round, errs[0], errs[1])
		case errs[0] != nil:
			requireCode(t, errs[0], store.EINVALID)
			requireMessage(t, errs[0], fmt.Sprintf("part %d (supplier)", part.ID))
			mustFind(t, s, kindSupplier, sp.ID)
		default:
			requireCode(t, errs[1], store.EINVALID)
			requireMessage(t, errs[1], fmt.Sprintf("supplier %d does not exist", sp.ID))
		}
	}
}

// testSchemaTreeMoves: a custom tree kind moves as documents do: cycles refused naming the
// path, a missing parent is ENOTFOUND, parent_id is written only by a move, a kind that is
// not a tree cannot move, and a parent with children is deleted only with its subtree.
func testSchemaTreeMoves(t *testing.T, open Opener) {
	s := freshParts(t, open)
	ctx := actx(t, actAlice)
	top := mustArea(t, s, "Top", nil)
	mid := mustArea(t, s, "Mid", &top.ID)
	low := mustArea(t, s, "Low", &mid.ID)
	_, err := s.MoveRecord(ctx, kindArea, top.ID, store.Move{Parent: &low.ID})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, fmt.Sprintf("moving %d under %d would create a cycle: %d → %d → %d", top.ID, low.ID, low.ID, mid.ID, top.ID))
	_, err = s.MoveRecord(ctx, kindArea, mid.ID, store.Move{Parent: ptr(int64(999))})
	requireCode(t, err, store.ENOTFOUND)
	_, err = s.CreateRecord(ctx, kindArea, store.Values{"name": "orphan", store.ParentField: int64(999)})
	requireCode(t, err, store.ENOTFOUND)
	_, err = s.UpdateRecord(ctx, kindArea, low.ID, store.Update{BaseVersion: 1, Set: store.Values{store.ParentField: top.ID}})
	requireCode(t, err, store.EFORBIDDEN)
	requireMessage(t, err, "area.parent_id cannot be set directly", "move")
	part := mustCreate(t, s, actAlice, kindPart, store.Values{"label": "Bolt"})
	_, err = s.MoveRecord(ctx, kindPart, part.ID, store.Move{})
	requireCode(t, err, store.EINVALID)
	res, err := s.MoveRecord(actx(t, actBob), kindArea, low.ID, store.Move{Parent: &top.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Record; got.Fields[store.ParentField] != top.ID || got.Version != 2 || got.UpdatedBy != "bob" || got.Kind != kindArea {
		t.Errorf("moved = %v v%d by %s, want under %d at v2 by bob", got.Fields, got.Version, got.UpdatedBy, top.ID)
	}
	_, err = s.DeleteRecord(ctx, kindArea, top.ID, store.Delete{ExpectVersion: 1})
	requireCode(t, err, store.EINVALID)
	del := mustDelete(t, s, actAlice, kindArea, top.ID, store.Delete{ExpectVersion: 1, Subtree: true})
	if got := len(del.Deleted); got != 3 || del.Deleted[0].ID != top.ID || del.Deleted[0].Title != "Top" || del.Deleted[0].Kind != kindArea {
		t.Errorf("subtree delete = %+v, want Top first and its two children", del.Deleted)
	}
	if n, err := s.CountRecords(ctx, kindArea); err != nil || n != 0 {
		t.Errorf("areas after the subtree delete = %d, %v; want 0", n, err)
	}
	// What the subtree delete took with it is known, parents first, to restore it whole.
	ts, found, err := store.TreeDeletedWith(t.Context(), s, kindArea, top.ID)
	if err != nil || !found || len(ts) != 2 || ts[0].ID != mid.ID || ts[0].Kind != kindArea || ts[0].Title != "Mid" || ts[1].ID != low.ID {
		t.Errorf("deleted with Top = %+v, found %v, %v; want Mid, then Low (under Top since its move, a later id)", ts, found, err)
	}
}

// testSchemaTreeMoveRace: two moves that together would make a cycle (a under b, b under a)
// at the same moment: exactly one wins, the other is refused as a cycle; with three (a
// under b, b under c, c under a) no cycle is left either.
func testSchemaTreeMoveRace(t *testing.T, open Opener) {
	s := freshParts(t, open)
	for round := range raceRounds {
		a := mustArea(t, s, fmt.Sprintf("a%d", round), nil)
		b := mustArea(t, s, fmt.Sprintf("b%d", round), nil)
		move := func(id, under int64, who store.Actor) func() error {
			return func() error {
				_, err := s.MoveRecord(actx(t, who), kindArea, id, store.Move{Parent: &under})
				return err
			}
		}
		errs := startTogether(move(a.ID, b.ID, actAlice), move(b.ID, a.ID, actBob))
		requireOneWinner(t, fmt.Sprintf("round %d: %d under %d and %d under %d", round, a.ID, b.ID, b.ID, a.ID), errs, func(int) string { return "cycle" })
		requireNoCycle(t, s, a.ID, b.ID)

		c := mustArea(t, s, fmt.Sprintf("c%d", round), nil)
		d := mustArea(t, s, fmt.Sprintf("d%d", round), nil)
		e := mustArea(t, s, fmt.Sprintf("e%d", round), nil)
		errs = startTogether(move(c.ID, d.ID, actAlice), move(d.ID, e.ID, actBob), move(e.ID, c.ID, actAlice))
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "cycle") {
				t.Errorf("round %d: a refused move of three: %v, want a cycle refusal", round, err)
			}
		}
		if won != 2 {
			t.Errorf("round %d: %d of three moves won, want 2 (any two make a chain, the third a cycle)", round, won)
		}
		requireNoCycle(t, s, c.ID, d.ID, e.ID)
	}
}

// requireNoCycle fails when walking up from any of ids does not reach the root.
func requireNoCycle(t *testing.T, s store.Store, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		seen := map[int64]bool{}
		for cur := id; ; {
			if seen[cur] {
				t.Errorf("area %d sits on a cycle through %d", id, cur)
				return
			}
			seen[cur] = true
			p, ok := mustFind(t, s, kindArea, cur).Fields[store.ParentField].(int64)
			if !ok {
				break
			}
			cur = p
		}
	}
}

// testSchemaDeleteRestore: a custom record is deleted at the version its deleter saw,
// leaving a tombstone; its unique code is free for another record meanwhile, and a restore
// is refused while that record holds it (naming it), then brings the record back whole.
func testSchemaDeleteRestore(t *testing.T, open Opener) {
	s := freshParts(t, open)
	ctx := actx(t, actAlice)
	acme := mustSupplier(t, s, "ACME", "Acme")
	mustSave(t, s, actx(t, actBob), kindSupplier, acme.ID, store.Update{BaseVersion: 1, Set: store.Values{"notes": "kept\n"}})
	_, err := s.DeleteRecord(ctx, kindSupplier, acme.ID, store.Delete{ExpectVersion: 1})
	requireCode(t, err, store.ECONFLICT)
	from := mustLastChangeID(t, s)
	res := mustDelete(t, s, actAlice, kindSupplier, acme.ID, store.Delete{ExpectVersion: 2})
	if got := res.Deleted; len(got) != 1 || got[0].Kind != kindSupplier || got[0].ID != acme.ID || got[0].Version != 3 || got[0].Title != "Acme" {
		t.Errorf("deleted = %+v, want supplier %d v3 titled Acme", got, acme.ID)
	}
	requireGone(t, s, kindSupplier, acme.ID)
	if vs := mustHistory(t, s, kindSupplier, acme.ID); len(vs) != 3 || vs[0].Event != store.EventDeleted || vs[0].Snapshot["notes"] != "kept\n" {
		t.Errorf("history after delete = %+v, want a tombstone holding the notes", vs)
	}
	_, err = s.RestoreRecord(ctx, kindSupplier, 999, store.Restore{})
	requireCode(t, err, store.ENOTFOUND)

	taker := mustSupplier(t, s, " acme ", "Taker")
	_, err = s.RestoreRecord(ctx, kindSupplier, acme.ID, store.Restore{})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, "code", fmt.Sprintf("supplier %d", taker.ID))
	requireGone(t, s, kindSupplier, acme.ID)
	mustDelete(t, s, actAlice, kindSupplier, taker.ID, store.Delete{ExpectVersion: 1})

	back := mustRestore(t, s, actBob, kindSupplier, acme.ID).Record
	want := store.Values{"code": "ACME", "name": "Acme", "rating": int64(0), "notes": "kept\n"}
	if back.Version != 4 || back.Kind != kindSupplier || back.UpdatedBy != "bob" || fmt.Sprint(back.Fields) != fmt.Sprint(want) {
		t.Errorf("restored = %v v%d by %s, want %v v4 by bob", back.Fields, back.Version, back.UpdatedBy, want)
	}
	if got := mustFind(t, s, kindSupplier, acme.ID); got.Version != 4 || fmt.Sprint(got.Fields) != fmt.Sprint(want) {
		t.Errorf("found after restore = %v v%d", got.Fields, got.Version)
	}
	_, err = s.RestoreRecord(ctx, kindSupplier, acme.ID, store.Restore{})
	requireCode(t, err, store.EINVALID)
	// The restored code is unique again: a new " acme " is refused naming it.
	_, err = s.CreateRecord(ctx, kindSupplier, store.Values{"code": "acme", "name": "Again"})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, fmt.Sprintf("supplier %d", acme.ID))
	var events []string
	for _, c := range mustChanges(t, s, from) {
		if c.Kind == kindSupplier && c.RecordID == acme.ID {
			events = append(events, fmt.Sprintf("%s v%d", c.Event, c.Version))
		}
	}
	if got, want := strings.Join(events, ", "), "deleted v3, restored v4"; got != want {
		t.Errorf("changes of supplier %d = %s, want %s", acme.ID, got, want)
	}
	var ce *store.ConflictError
	if _, err := s.DeleteRecord(ctx, kindSupplier, acme.ID, store.Delete{ExpectVersion: 3}); !errors.As(err, &ce) || ce.Current.Version != 4 {
		t.Errorf("delete at the tombstone's version = %v, want a conflict with v4", err)
	}
}

// testSchemaDeletedValues: a schema change that drops a field is refused saying how many
// deleted records' tombstones hold a value of it, and allowed, it exports those values
// after the records' own, marked deleted; a record restored after it comes back without
// the field.
func testSchemaDeletedValues(t *testing.T, open Opener) {
	s := freshParts(t, open)
	ap, ok := s.(store.SchemaApplier)
	if !ok {
		t.Skip("the store applies no schema")
	}
	ctx := actx(t, actAlice)
	gone := mustSupplier(t, s, "GONE", "Gone")
	mustSave(t, s, ctx, kindSupplier, gone.ID, store.Update{BaseVersion: 1, Set: store.Values{"notes": "only in history\n"}})
	mustDelete(t, s, actAlice, kindSupplier, gone.ID, store.Delete{ExpectVersion: 2})
	empty := mustSupplier(t, s, "EMPTY", "Empty") // deleted with no notes: nothing to lose
	mustDelete(t, s, actAlice, kindSupplier, empty.ID, store.Delete{ExpectVersion: 1})
	next := partsWith(t, "      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n", "")

	_, err := ap.ApplySchema(ctx, next, store.ApplyOptions{})
	requireCode(t, err, store.EINVALID)
	requireMessage(t, err, "drop field supplier.notes", "but 1 deleted record does (restored, it comes back without it)")

	var out bytes.Buffer
	res, err := ap.ApplySchema(ctx, next, store.ApplyOptions{AllowDestructive: true, ExportTo: &out})
	if err != nil || !res.Applied || res.Exported != 1 {
		t.Fatalf("allowed apply = %+v, %v; want 1 value exported", res, err)
	}
	want := fmt.Sprintf(`{"kind":"supplier","id":%d,"field":"notes","value":"only in history\n","deleted":true}`+"\n", gone.ID)
	if out.String() != want {
		t.Errorf("export = %q, want %q", out.String(), want)
	}
	back := mustRestore(t, s, actAlice, kindSupplier, gone.ID).Record
	if _, has := back.Fields["notes"]; has || back.Fields["name"] != "Gone" {
		t.Errorf("restored after the drop = %v, want it without notes", back.Fields)
	}
}
