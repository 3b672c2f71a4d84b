package store

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// recordSteps are ApplySteps that record what RunApply asks, in order.
type recordSteps struct {
	cur       *Registry
	calls     []string
	unapplied bool   // refuse every destructive change
	failAt    string // the call that fails
	deleted   map[Kind][]DeletedRecord
}

func (s *recordSteps) step(c string) error {
	s.calls = append(s.calls, c)
	if c == s.failAt {
		return Errorf(EBUSY, "%s failed", c)
	}
	return nil
}

func (s *recordSteps) Current() (*Registry, error) { return s.cur, s.step("current") }
func (s *recordSteps) CountAffected(d *SchemaDiff) error {
	for i, c := range d.Changes {
		if c.Class == ChangeDestructive {
			d.Changes[i].Affected, d.Changes[i].AffectedDesc = 2, AffectedText(c.Op, 2)
		}
	}
	return s.step("count")
}
func (s *recordSteps) Unapplied(d *SchemaDiff) []SchemaChange {
	if s.unapplied {
		return d.Of(ChangeDestructive)
	}
	return nil
}
func (s *recordSteps) DeletedRecords(k Kind, _ string) ([]DeletedRecord, error) {
	return s.deleted[k], nil
}
func (s *recordSteps) LockTables(*SchemaDiff) error { return s.step("lock") }
func (s *recordSteps) ExportLost(_ *SchemaDiff, w io.Writer) (int64, error) {
	fmt.Fprintln(w, "lost")
	return 1, s.step("export")
}
func (s *recordSteps) ChangeTables(_ *SchemaDiff, v int64, _ Actor) error {
	return s.step(fmt.Sprintf("tables v%d", v))
}
func (s *recordSteps) RenameInHistory(k Kind, from, to string) error {
	return s.step(fmt.Sprintf("history %s.%s>%s", k, from, to))
}
func (s *recordSteps) RetireKind(k Kind, retired string) error {
	return s.step(fmt.Sprintf("retire %s>%s", k, retired))
}
func (s *recordSteps) Record(next *Registry, v int64, ch Change) error {
	return s.step(fmt.Sprintf("record v%d %s %s", v, ch.Event, strings.Join(ch.Fields, ",")))
}

// TestRunApply: the sequence every store runs. A refused change (another base version,
// destructive without leave, one the store cannot make) writes nothing; a dry run stops after
// counting; an apply locks before it exports, changes the tables, renames history (renames,
// then retired fields and kinds) and records the version with its change; an attempt after
// one that exported and failed is refused rather than exporting again.
func TestRunApply(t *testing.T) {
	parts := mustPartsYAML(t)
	cur := mustParse(t, parts).WithVersion(3)
	text := edit(t, parts, "      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n", "")
	text = edit(t, text, "{name: rating,", "{name: score, rename_from: rating,")
	next := mustParse(t, edit(t, text, "  area:\n    tree: true\n", "  bin:\n")) // area dropped, bin added
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	actor := Actor{Name: "alice", Role: RoleEditor}
	run := func(o ApplyOptions, s *recordSteps, exported *bool) (*ApplyResult, error) {
		s.cur = cur
		if exported == nil {
			exported = new(bool)
		}
		return RunApply(next, o, actor, at, s, exported)
	}
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			o     ApplyOptions
			s     recordSteps
			code  string
			words string
		}{
			{"OtherBase", ApplyOptions{BaseVersion: 2}, recordSteps{}, ECONFLICT, "version 3 now, not version 2"},
			{"Destructive", ApplyOptions{}, recordSteps{}, EINVALID, "drop field supplier.notes: destructive: 2 records hold a value"},
			{"Unapplied", ApplyOptions{AllowDestructive: true}, recordSteps{unapplied: true}, EINVALID, "does not apply these destructive changes yet"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := run(tc.o, &tc.s, nil)
				if ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.words) || res == nil || res.Applied {
					t.Fatalf("RunApply = %+v, %v; want %s saying %q", res, err, tc.code, tc.words)
				}
				if slices.ContainsFunc(tc.s.calls, func(c string) bool { return c != "current" && c != "count" }) {
					t.Errorf("a refused apply asked %q", tc.s.calls)
				}
			})
		}
	})
	t.Run("DryRun", func(t *testing.T) {
		var s recordSteps
		res, err := run(ApplyOptions{DryRun: true}, &s, nil)
		if err != nil || res.Applied || res.Diff == nil || !slices.Equal(s.calls, []string{"current", "count"}) {
			t.Errorf("dry run = %+v, %v, calls %q", res, err, s.calls)
		}
	})
	t.Run("Applied", func(t *testing.T) {
		var (
			s   recordSteps
			out bytes.Buffer
		)
		res, err := run(ApplyOptions{BaseVersion: 3, AllowDestructive: true, ExportTo: &out}, &s, nil)
		if err != nil || !res.Applied || res.FromVersion != 3 || res.ToVersion != 4 || res.Exported != 1 || out.String() != "lost\n" {
			t.Fatalf("apply = %+v, %v, export %q", res, err, out.String())
		}
		want := []string{"current", "count", "lock", "export", "tables v4",
			"history supplier.rating>score", "history supplier.notes>notes~v3", "retire area>area~v3",
			"record v4 schema_changed area,bin,supplier"}
		if !slices.Equal(s.calls, want) {
			t.Errorf("calls\n%q\nwant\n%q", s.calls, want)
		}
	})
	t.Run("DeletedRecords", func(t *testing.T) {
		// A deleted supplier's tombstone holds notes, the field the change drops: counted,
		// said, and exported after the records' values, marked deleted. One with empty
		// notes and one of a kind the change leaves alone are not.
		s := recordSteps{deleted: map[Kind][]DeletedRecord{
			"supplier": {{ID: 7, Snapshot: []byte(`{"code":"A","notes":"kept in history"}`)}, {ID: 8, Snapshot: []byte(`{"code":"B","notes":""}`)}},
			"part":     {{ID: 9, Snapshot: []byte(`{"label":"x"}`)}},
		}}
		_, err := run(ApplyOptions{}, &s, nil)
		const said = "drop field supplier.notes: destructive: 2 records hold a value, and so does 1 deleted record (restored, it comes back without it)"
		if ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), said) {
			t.Fatalf("refused apply = %v; want it to say %q", err, said)
		}
		var out bytes.Buffer
		s.calls = nil
		res, err := run(ApplyOptions{AllowDestructive: true, ExportTo: &out}, &s, nil)
		want := "lost\n" + `{"kind":"supplier","id":7,"field":"notes","value":"kept in history","deleted":true}` + "\n"
		if err != nil || res.Exported != 2 || out.String() != want {
			t.Fatalf("apply = %+v, %v, export %q; want 2 exported: %q", res, err, out.String(), want)
		}
		for _, c := range res.Diff.Changes {
			if c.Field == "notes" && c.AffectedDeleted != 1 {
				t.Errorf("notes: AffectedDeleted %d, want 1", c.AffectedDeleted)
			}
		}
	})
	t.Run("RetryAfterExport", func(t *testing.T) {
		var out bytes.Buffer
		exported := false
		s := recordSteps{failAt: "tables v4"}
		if _, err := run(ApplyOptions{AllowDestructive: true, ExportTo: &out}, &s, &exported); ErrorCode(err) != EBUSY {
			t.Fatalf("first attempt: %v", err)
		}
		s = recordSteps{}
		_, err := run(ApplyOptions{AllowDestructive: true, ExportTo: &out}, &s, &exported)
		if ErrorCode(err) != EBUSY || !strings.Contains(err.Error(), "were exported but the change was not applied") || out.String() != "lost\n" {
			t.Errorf("second attempt = %v, export %q; want EBUSY and the values written once", err, out.String())
		}
	})
	t.Run("Same", func(t *testing.T) {
		var s recordSteps
		s.cur = cur
		res, err := RunApply(cur, ApplyOptions{}, actor, at, &s, new(bool))
		if err != nil || res.Applied || res.ToVersion != 3 || !slices.Equal(s.calls, []string{"current", "count"}) {
			t.Errorf("apply of the same schema = %+v, %v, calls %q", res, err, s.calls)
		}
	})
}
