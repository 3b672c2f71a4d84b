package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/store"
	sqlite3 "modernc.org/sqlite/lib"
)

// Writes by other programs (store/outside.go has what they get). Triggers in the file, in
// plain SQL (another program's connection has none of tandem's functions), one set per
// record table, made by OutsideTriggers and installed by every migration of a store that is
// not a working copy (installOutside).
//
// tandem's own connection is told apart by a database it attaches: the write connection of
// every tandem process (writeConn) attaches an empty in-memory database named writerMark,
// which pragma_database_list shows to that connection alone. An update trigger tests the
// version first (tandem's updates always raise it), so tandem's saves never read the mark;
// its creates and deletes read it (a list of three attached databases), and nothing else.
// An outside update that raises the version itself is taken as tandem's and logs nothing
// (it has told every stale save apart already).

// writerMark is the name of the database tandem's write connection attaches.
const writerMark = store.SQLiteWriterMark

// notTandem is true on every connection but tandem's write connection.
const notTandem = "NOT EXISTS (SELECT 1 FROM pragma_database_list WHERE name = '" + writerMark + "')"

// outsideNow is the time of an outside write, in formatTime's form.
const outsideNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

// outsideTriggerNames returns the names of the triggers of a table.
func outsideTriggerNames(table string) []string {
	return []string{table + "_outside_insert", table + "_outside_update", table + "_outside_delete"}
}

// OutsideTriggers returns the CREATE TRIGGER statements that make writes to t's table by
// other programs seen (store/outside.go), in plain SQL. installOutside runs them; a new
// kind's table gets its own by the same call.
func OutsideTriggers(t store.OutsideTable) []string {
	tbl, kind := quoteIdent(t.Table), quoteText(string(t.Kind))
	names := outsideTriggerNames(t.Table)
	all := quoteText(jsonNames(t.FieldNames()))
	actor := quoteText(store.OutsideActor)
	role := quoteText(string(store.RoleOutside))
	queue := "INSERT OR IGNORE INTO outside_refold (kind, record_id) VALUES (" + kind + ", NEW.id);\n"
	if len(t.Refold) == 0 {
		queue = ""
	}
	updateQueue := ""
	if len(t.Refold) > 0 {
		updateQueue = "INSERT OR IGNORE INTO outside_refold (kind, record_id) SELECT " + kind + ", NEW.id WHERE " + distinct(t.Refold) + ";\n"
	}
	insert := `CREATE TRIGGER ` + quoteIdent(names[0]) + ` AFTER INSERT ON ` + tbl + ` WHEN ` + notTandem + ` BEGIN
	UPDATE ` + tbl + ` SET version = (SELECT max(version) + 1 FROM history WHERE kind = ` + kind + ` AND record_id = NEW.id)
		WHERE id = NEW.id AND EXISTS (SELECT 1 FROM history WHERE kind = ` + kind + ` AND record_id = NEW.id AND version >= NEW.version);
	INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot, event)
		SELECT ` + kind + `, id, version, ` + actor + `, ` + outsideNow + `, ` + all + `, ` + snapshotExpr(t, "NEW") + `, ''
		FROM ` + tbl + ` WHERE id = NEW.id;
	INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, at)
		SELECT 'created', ` + kind + `, id, version, ` + actor + `, ` + role + `, ` + all + `, '{}', 1, ` + outsideNow + `
		FROM ` + tbl + ` WHERE id = NEW.id;
	` + queue + `END`
	changed := changedExpr(t)
	update := `CREATE TRIGGER ` + quoteIdent(names[1]) + ` AFTER UPDATE ON ` + tbl + ` WHEN NEW.version IS OLD.version AND ` + notTandem + ` AND (` + distinct(t.FieldNames()) + `) BEGIN
	UPDATE ` + tbl + ` SET version = OLD.version + 1, updated_at = ` + outsideNow + `,
		updated_by = CASE WHEN NEW.updated_by IS OLD.updated_by THEN ` + actor + ` ELSE NEW.updated_by END WHERE id = NEW.id;
	INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot, event)
		VALUES (` + kind + `, NEW.id, OLD.version + 1, ` + actor + `, ` + outsideNow + `, ` + changed + `, ` + snapshotExpr(t, "NEW") + `, '');
	INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, at)
		VALUES ('saved', ` + kind + `, NEW.id, OLD.version + 1, ` + actor + `, ` + role + `, ` + changed + `, '{}', 1, ` + outsideNow + `);
	` + updateQueue + `END`
	// A tombstone as tandem's own delete leaves (store.Registry.Tombstone): the next version,
	// no fields, every value as the delete found it.
	del := `CREATE TRIGGER ` + quoteIdent(names[2]) + ` AFTER DELETE ON ` + tbl + ` WHEN ` + notTandem + ` BEGIN
	INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot, event)
		VALUES (` + kind + `, OLD.id, OLD.version + 1, ` + actor + `, ` + outsideNow + `, '[]', ` + snapshotExpr(t, "OLD") + `, 'deleted');
	INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, at)
		VALUES ('deleted', ` + kind + `, OLD.id, OLD.version + 1, ` + actor + `, ` + role + `, '[]', '{}', 1, ` + outsideNow + `);
	DELETE FROM outside_refold WHERE kind = ` + kind + ` AND record_id = OLD.id;
END`
	return []string{insert, update, del}
}

// snapshotExpr is the JSON snapshot (store.Registry.EncodeSnapshot's form, money as cents,
// which DecodeSnapshot reads too) of the row row (NEW or OLD). json() refuses a set column
// that holds no JSON, and with it the outside write. json_object takes a bounded number of
// arguments, so a wide kind's object is patched together from pieces.
func snapshotExpr(t store.OutsideTable, row string) string {
	const perPiece = 50
	var pieces []string
	for i := 0; i < len(t.Fields); i += perPiece {
		var args []string
		for _, f := range t.Fields[i:min(i+perPiece, len(t.Fields))] {
			v := row + "." + quoteIdent(f.Name)
			if f.Type == store.TypeSet {
				v = "json(coalesce(" + v + ", '[]'))"
			}
			args = append(args, quoteText(f.Name), v)
		}
		pieces = append(pieces, "json_object("+strings.Join(args, ", ")+")")
	}
	if len(pieces) == 0 {
		return "'{}'"
	}
	out := pieces[0]
	for _, p := range pieces[1:] {
		out = "json_patch(" + out + ", " + p + ")"
	}
	return out
}

// changedExpr is the JSON array of the fields whose values an update changed, sorted.
func changedExpr(t store.OutsideTable) string {
	var parts []string
	for _, name := range t.FieldNames() {
		parts = append(parts, "CASE WHEN OLD."+quoteIdent(name)+" IS NOT NEW."+quoteIdent(name)+
			" THEN "+quoteText(strconv.Quote(name)+",")+" ELSE '' END")
	}
	if len(parts) == 0 {
		return "'[]'"
	}
	return "'[' || rtrim(" + strings.Join(parts, " || ") + ", ',') || ']'"
}

// distinct is true when an update changed one of the fields names.
func distinct(names []string) string {
	if len(names) == 0 {
		return "0"
	}
	var conds []string
	for _, n := range names {
		conds = append(conds, "OLD."+quoteIdent(n)+" IS NOT NEW."+quoteIdent(n))
	}
	return strings.Join(conds, " OR ")
}

// jsonNames is names as a JSON array.
func jsonNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteText(s string) string  { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// dropOutside removes the outside-write triggers of every record table of reg, so that a
// migration's own writes to the records do not fire them.
func dropOutside(ctx context.Context, q execer, reg *store.Registry) error {
	ts, err := reg.OutsideTables(table)
	if err != nil {
		return err
	}
	for _, t := range ts {
		for _, name := range outsideTriggerNames(t.Table) {
			if _, err := q.ExecContext(ctx, "DROP TRIGGER IF EXISTS "+quoteIdent(name)); err != nil {
				return fmt.Errorf("drop trigger %s: %w", name, err)
			}
		}
	}
	return nil
}

// installOutside (re)makes the outside-write triggers of every record table of reg. It may
// run any number of times.
func installOutside(ctx context.Context, q execer, reg *store.Registry) error {
	if err := dropOutside(ctx, q, reg); err != nil {
		return err
	}
	ts, err := reg.OutsideTables(table)
	if err != nil {
		return err
	}
	for _, t := range ts {
		for _, ddl := range OutsideTriggers(t) {
			if _, err := q.ExecContext(ctx, ddl); err != nil {
				return fmt.Errorf("outside-write triggers of %s: %w", t.Table, err)
			}
		}
	}
	return nil
}

// refoldOutside writes again, for the records outside writes queued in outside_refold, the
// columns only tandem computes (store.RefoldColumns: the sku key, the search text), and
// empties the queue. A search runs it first, so it finds what other programs wrote. A
// read-only store leaves the queue as it is.
func (db *DB) refoldOutside(ctx context.Context) error {
	if db.readOnly != "" {
		return nil
	}
	var queued bool
	if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM outside_refold)`).Scan(&queued); err != nil || !queued {
		return mapErr("read the records other programs wrote", err)
	}
	return db.inTx(ctx, "search text of the records other programs wrote", func(t *tx) error {
		type entry struct {
			kind store.Kind
			id   int64
		}
		rows, err := t.QueryContext(ctx, `SELECT kind, record_id FROM outside_refold`)
		if err != nil {
			return err
		}
		var queue []entry
		for rows.Next() {
			var e entry
			if err := rows.Scan(&e.kind, &e.id); err != nil {
				rows.Close()
				return err
			}
			queue = append(queue, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, e := range queue {
			if err := db.refold(ctx, t, e.kind, e.id); err != nil {
				return err
			}
			if _, err := t.ExecContext(ctx, `DELETE FROM outside_refold WHERE kind = ? AND record_id = ?`, string(e.kind), e.id); err != nil {
				return err
			}
		}
		return nil
	})
}

// refold writes the derived columns of one record from its fields as they are.
func (db *DB) refold(ctx context.Context, t *tx, kind store.Kind, id int64) error {
	rec, err := db.findRecord(ctx, t, kind, id)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	tbl, err := table(kind)
	if err != nil {
		return err
	}
	row, folds := splitFolds(kind, store.RefoldColumns(kind, rec.Fields))
	if err := writeFolds(ctx, t, kind, id, folds); err != nil {
		return err
	}
	for _, c := range row {
		q := "UPDATE " + tbl + " SET " + quoteIdent(c.Name) + " = ? WHERE id = ?"
		_, err := t.ExecContext(ctx, q, c.Value, id)
		if code, ok := sqliteCode(err); ok && code == sqlite3.SQLITE_CONSTRAINT_UNIQUE && c.Name == "sku_key" {
			// Another product's sku has this key: the outside write made a collision,
			// which keeps the record apart as fillSKUKeys does.
			_, err = t.ExecContext(ctx, q, c.Value+store.SKUKeySeparator+strconv.FormatInt(id, 10), id)
		}
		if err != nil {
			return fmt.Errorf("write %s of %s %d: %w", c.Name, kind, id, err)
		}
	}
	return nil
}
