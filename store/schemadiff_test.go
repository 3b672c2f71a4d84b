package store

import (
	"os"
	"strings"
	"testing"
)

func mustPartsYAML(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustParse(t *testing.T, s string) *Registry {
	t.Helper()
	r, err := ParseRegistry("test", []byte(s))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, s)
	}
	return r
}

// edit returns parts.yaml with old replaced by new (which must be there).
func edit(t *testing.T, base, old, new string) string {
	t.Helper()
	if !strings.Contains(base, old) {
		t.Fatalf("%q not in the schema", old)
	}
	return strings.Replace(base, old, new, 1)
}

// TestDiffSchema_Classes: each kind of change is listed once with its class, operation and
// line.
func TestDiffSchema_Classes(t *testing.T) {
	parts := mustPartsYAML(t)
	cur := mustParse(t, parts)
	statusLine := "      - {name: status,   type: enum, values: [draft, active, retired], owner: shared, rule: scalar, default: draft}\n"
	for _, tc := range []struct {
		name  string
		next  string
		class ChangeClass
		op    ChangeOp
		desc  string
	}{
		{"new field", edit(t, parts, "  part:\n", "  part:\n")[:0] + strings.Replace(parts,
			"      - {name: notes,", "      - {name: country, type: string, owner: editor, rule: scalar, default: DE}\n      - {name: notes,", 1),
			ChangeAdditive, OpAddField, `add field supplier.country (string, default "DE")`},
		{"new kind", parts + "  bin:\n    fields:\n      - {name: code, type: string, owner: editor, rule: scalar}\n",
			ChangeAdditive, OpAddKind, "add kind bin (table bins, 1 fields)"},
		{"drop field", edit(t, parts, statusLine, ""), ChangeDestructive, OpDropField, "drop field part.status"},
		{"drop kind", edit(t, parts, "  area:\n    tree: true\n    title: name\n    fields:\n      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n", ""),
			ChangeDestructive, OpDropKind, "drop kind area (table areas)"},
		{"retype", edit(t, parts, "{name: notes,  type: text,   owner: editor, rule: text, search: true}", "{name: notes, type: int, owner: editor, rule: scalar}"),
			ChangeDestructive, OpRetypeField, "change the type of supplier.notes from text to int (its values are dropped)"},
		{"narrow", edit(t, parts, "max_chars: 32", "max_chars: 8"), ChangeDestructive, OpNarrowLimit, "narrow supplier.code max_chars 32→8"},
		{"widen", edit(t, parts, "max_chars: 32", "max_chars: 64"), ChangeAdditive, OpWidenLimit, "widen supplier.code max_chars 32→64"},
		{"unlimit", edit(t, parts, ", max_chars: 32", ""), ChangeAdditive, OpWidenLimit, "widen supplier.code max_chars 32→none"},
		{"new limit", edit(t, parts, "{name: label,    type: string,", "{name: label, max_bytes: 100, type: string,"),
			ChangeDestructive, OpNarrowLimit, "narrow part.label max_bytes none→100"},
		{"enum value added", edit(t, parts, "[draft, active, retired]", "[draft, active, retired, lost]"), ChangeAdditive, OpAddValues, "add enum value lost to part.status"},
		{"enum value removed", edit(t, parts, "[draft, active, retired]", "[draft, active]"), ChangeDestructive, OpRemoveValues,
			`remove enum value retired from part.status (its records get "draft")`},
		{"rename", edit(t, parts, "{name: status,   type: enum,", "{name: state, rename_from: status, type: enum,"),
			ChangeAdditive, OpRenameField, "rename field part.status to state"},
		{"search on", edit(t, parts, "{name: code,   type: string, owner: editor,", "{name: code, search: true, type: string, owner: editor,"),
			ChangeAdditive, OpSearchOn, "search supplier.code"},
		{"sort on", edit(t, parts, "{name: rating, type: int,", "{name: rating, sort: true, type: int,"), ChangeAdditive, OpSortOn, "sort by supplier.rating"},
		{"label", edit(t, parts, "{name: rating, type: int,", "{name: rating, label: Stars, type: int,"), ChangeAdditive, OpDescribe,
			`supplier.rating: label "rating"→"Stars"`},
		{"title", edit(t, parts, "    title: label\n", "    title: label\n")[:0] + strings.Replace(parts, "  supplier:\n    title: name\n", "  supplier:\n    title: code\n", 1),
			ChangeAdditive, OpDescribe, "kind supplier: title name becomes code"},
		{"default", edit(t, parts, "default: draft", "default: active"), ChangeAdditive, OpDefault, `default of part.status "draft" becomes "active" (for new records)`},
		{"unique on", edit(t, parts, "{name: name,   type: string, owner: editor, rule: scalar, required: true, search: true}",
			"{name: name, type: string, owner: editor, rule: scalar, required: true, search: true, unique: true}"),
			ChangeUnsupported, OpUnsupported, "supplier.name: unique false becomes true (cannot be changed yet)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DiffSchema(cur, mustParse(t, tc.next))
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Changes) != 1 {
				t.Fatalf("changes = %d, want 1:\n%s", len(d.Changes), d)
			}
			c := d.Changes[0]
			if c.Class != tc.class || c.Op != tc.op || c.Desc != tc.desc {
				t.Errorf("change = %s %s %q, want %s %s %q", c.Class, c.Op, c.Desc, tc.class, tc.op, tc.desc)
			}
		})
	}
}

// TestDiffSchema_Same: a schema diffed against itself, or against itself with a rename
// already applied (rename_from still in the file), has no changes.
func TestDiffSchema_Same(t *testing.T) {
	parts := mustPartsYAML(t)
	cur := mustParse(t, parts)
	if d, err := DiffSchema(cur, mustParse(t, parts)); err != nil || !d.Empty() {
		t.Fatalf("same schema: %v\n%s", err, d)
	}
	renamed := mustParse(t, edit(t, parts, "{name: status,   type: enum,", "{name: state, rename_from: status, type: enum,"))
	if d, err := DiffSchema(renamed, renamed); err != nil || !d.Empty() {
		t.Fatalf("rename applied: %v\n%s", err, d)
	}
}

// TestDiffSchema_RenameOnlyWhenDeclared: a field that disappears while another appears is a
// drop and an add unless rename_from says so; a rename_from naming a field the schema still
// has is refused.
func TestDiffSchema_RenameOnlyWhenDeclared(t *testing.T) {
	parts := mustPartsYAML(t)
	cur := mustParse(t, parts)
	d, err := DiffSchema(cur, mustParse(t, edit(t, parts, "{name: status,   type: enum,", "{name: state, type: enum,")))
	if err != nil {
		t.Fatal(err)
	}
	var ops []ChangeOp
	for _, c := range d.Changes {
		ops = append(ops, c.Op)
	}
	if len(ops) != 2 || ops[0] != OpAddField || ops[1] != OpDropField {
		t.Fatalf("ops = %v, want add then drop:\n%s", ops, d)
	}
	_, err = DiffSchema(cur, mustParse(t, edit(t, parts, "{name: status,   type: enum,", "{name: status, rename_from: label, type: enum,")))
	if ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), "still has") {
		t.Fatalf("err = %v, want EINVALID about a field the schema still has", err)
	}
	// A rename with a type change: a rename, then the retype under the new name.
	d, err = DiffSchema(cur, mustParse(t, edit(t, parts, "{name: rating, type: int,", "{name: score, rename_from: rating, type: money,")))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 2 || d.Changes[0].Op != OpRenameField || d.Changes[1].Op != OpRetypeField || d.Changes[1].Field != "score" {
		t.Fatalf("changes:\n%s", d)
	}
	if err := RefuseDestructive(d); ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), "supplier.score from int to money") {
		t.Fatalf("refusal = %v", err)
	}
}
