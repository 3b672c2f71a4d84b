package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// Writes by other programs (store/outside.go has what they get). Two trigger functions per
// record table, made by OutsideTriggers and installed by every migration (installOutside):
// one run BEFORE an insert or an update that changes a field, which gives the row its next
// version (and, on an insert, the updated_at and updated_by it lacks), one run AFTER an
// insert, such an update or a delete, which writes the history version (a snapshot; a
// tombstone for a delete), the change, the refold queue entry and a NOTIFY for the feed's
// subscribers. Their functions are SECURITY DEFINER with
// the store's schema as their search_path, so a role that may only write a record table still logs its
// writes; the actor is session_user, the role that logged in.
//
// tandem's own connections are told apart by a setting every one of them starts with
// (writerSetting, a startup parameter of the pool): the triggers' WHEN is false for them, so
// tandem's writes queue no trigger call at all.
//
// The change row takes its id from the column's default, next_change_id(), which takes the
// change log's writer lock (migration 0011) in the outside transaction, after the row it
// logs is written and locked (an AFTER ROW trigger), and holds it to the transaction's end:
// exactly what the feed's horizon needs of every writer (feed.go). An outside transaction
// that stays open holds the feed back as an open write of tandem's would.

// writerSetting is the setting tandem's connections start with, and its value.
const (
	writerSetting = store.PostgresWriterSetting
	writerValue   = "on"
)

// notTandem is true on every connection but tandem's.
const notTandem = "current_setting('" + writerSetting + "', true) IS DISTINCT FROM '" + writerValue + "'"

// outsideTrigger is one trigger of a record table: its name's suffix, when it fires, its
// condition beside notTandem, and whether it runs the BEFORE function or the AFTER one.
type outsideTrigger struct {
	suffix, timing, when string
	before               bool
}

// outsideTriggers lists a table's triggers; changed is the condition that an update changed
// a field.
func outsideTriggers(changed string) []outsideTrigger {
	return []outsideTrigger{
		{"_outside_before_insert", "BEFORE INSERT", "", true},
		{"_outside_before_update", "BEFORE UPDATE", "(" + changed + ") OR NEW.version < OLD.version", true},
		{"_outside_after_insert", "AFTER INSERT", "", false},
		{"_outside_after_update", "AFTER UPDATE", changed, false},
		{"_outside_after_delete", "AFTER DELETE", "", false},
	}
}

// OutsideTriggers returns the statements that make writes to t's table by other programs
// seen (store/outside.go): its two trigger functions and its two triggers. channel is the
// schema the store's schema, channel its notification channel. Each statement may run again:
// installOutside runs them all.
func OutsideTriggers(t store.OutsideTable, schema, channel string) []string {
	tbl, kind := ident(t.Table), quoteText(string(t.Kind))
	// Names within 63 bytes (objName): PostgreSQL would cut a long table's trigger names
	// to one name, each trigger replacing the one before.
	before, after := objName(t.Table, "outside", "before"), objName(t.Table, "outside", "after")
	var changed []string
	for _, name := range t.FieldNames() {
		changed = append(changed, "CASE WHEN OLD."+ident(name)+" IS DISTINCT FROM NEW."+ident(name)+" THEN "+quoteText(name)+" END")
	}
	queue := "INSERT INTO outside_refold (kind, record_id) VALUES (" + kind + ", NEW.id) ON CONFLICT DO NOTHING;"
	if len(t.Refold) == 0 {
		queue = ""
	} else {
		queue = "IF TG_OP = 'INSERT' OR " + distinct(t.Refold) + " THEN\n\t\t\t" + queue + "\n\t\tEND IF;"
	}
	all := "'{}'::text[]"
	changedExpr := all
	if names := t.FieldNames(); len(names) > 0 {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = quoteText(n)
		}
		all = "ARRAY[" + strings.Join(q, ", ") + "]::text[]"
		changedExpr = "array_remove(ARRAY[" + strings.Join(changed, ", ") + "]::text[], NULL)"
	}
	cycle := ""
	if t.Tree {
		// Under the lock of tandem's moves, so that two writers cannot each make half of a
		// cycle; the query after it reads what was committed before the lock was granted.
		p := ident(store.ParentField)
		cycle = `
		IF NEW.` + p + ` IS DISTINCT FROM OLD.` + p + ` AND NEW.` + p + ` IS NOT NULL THEN
			PERFORM pg_advisory_xact_lock(` + strconv.FormatInt(lockKey(treeLockPurpose+schema), 10) + `);
			IF NEW.id IN (WITH RECURSIVE up(id) AS (SELECT NEW.` + p + ` UNION SELECT t.` + p + ` FROM ` + tbl + ` t
					JOIN up ON t.id = up.id WHERE t.` + p + ` IS NOT NULL) SELECT id FROM up) THEN
				RAISE EXCEPTION '%', ` + quoteText(store.OutsideCycleMessage(t.Kind)) + `;
			END IF;
		END IF;`
	}
	fn := func(name, body string) string {
		return `CREATE OR REPLACE FUNCTION ` + ident(name) + `() RETURNS trigger LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = ` + ident(schema) + ` AS $tandem$
` + body + `
$tandem$`
	}
	beforeFn := fn(before, `BEGIN
	IF TG_OP = 'UPDATE' THEN
		-- A lower version would let a save that read the record before, and expects
		-- that older version, pass and overwrite what was written since.
		IF NEW.version < OLD.version THEN
			RAISE EXCEPTION 'tandem: a record''s version only rises; leave it to tandem';
		END IF;
		NEW.version := OLD.version + 1;`+cycle+`
		NEW.updated_at := clock_timestamp();
		IF NEW.updated_by IS NOT DISTINCT FROM OLD.updated_by THEN
			NEW.updated_by := session_user;
		END IF;
	ELSE
		NEW.updated_at := coalesce(NEW.updated_at, clock_timestamp());
		NEW.updated_by := coalesce(NEW.updated_by, session_user);
		-- An id that had records before (a tombstone, say) continues their versions.
		NEW.version := greatest(coalesce(NEW.version, 1),
			(SELECT max(version) + 1 FROM history WHERE kind = `+kind+` AND record_id = NEW.id));
	END IF;
	RETURN NEW;
END`)
	afterFn := fn(after, `DECLARE
	at timestamptz := clock_timestamp();
BEGIN
	IF TG_OP = 'DELETE' THEN
		-- A tombstone as tandem's own delete leaves: the next version, no fields.
		INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot, event)
			VALUES (`+kind+`, OLD.id, OLD.version + 1, session_user, at, '{}', `+snapshotExpr(t, "OLD")+`, 'deleted');
		INSERT INTO changes (event, kind, record_id, version, actor, role, fields, history, at)
			VALUES ('deleted', `+kind+`, OLD.id, OLD.version + 1, session_user, `+quoteText(string(store.RoleOutside))+`, '{}', true, at);
		DELETE FROM outside_refold WHERE kind = `+kind+` AND record_id = OLD.id;
	ELSE
		INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot, event)
			VALUES (`+kind+`, NEW.id, NEW.version, session_user, at,
				CASE TG_OP WHEN 'INSERT' THEN `+all+` ELSE `+changedExpr+` END, `+snapshotExpr(t, "NEW")+`, '');
		INSERT INTO changes (event, kind, record_id, version, actor, role, fields, history, at)
			VALUES (CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'saved' END, `+kind+`, NEW.id, NEW.version, session_user,
				`+quoteText(string(store.RoleOutside))+`,
				CASE TG_OP WHEN 'INSERT' THEN `+all+` ELSE `+changedExpr+` END, true, at);
		`+queue+`
	END IF;
	PERFORM pg_notify(`+quoteText(channel)+`, '');
	RETURN NULL;
END`)
	out := []string{beforeFn, afterFn}
	for _, tr := range outsideTriggers(distinct(t.FieldNames())) {
		name, fn, when := ident(objName(t.Table+tr.suffix)), ident(after), notTandem
		if tr.before {
			fn = ident(before)
		}
		if tr.when != "" {
			when += " AND (" + tr.when + ")"
		}
		if cut := t.Table + tr.suffix; len(cut) > maxIdentifierLength {
			// The name PostgreSQL cut it to before the names were kept within 63 bytes.
			out = append(out, `DROP TRIGGER IF EXISTS `+ident(cut[:maxIdentifierLength])+` ON `+tbl)
		}
		out = append(out, `DROP TRIGGER IF EXISTS `+name+` ON `+tbl,
			`CREATE TRIGGER `+name+` `+tr.timing+` ON `+tbl+` FOR EACH ROW WHEN (`+when+`) EXECUTE FUNCTION `+fn+`()`)
	}
	return out
}

// distinct is true when an update changed one of the fields names.
func distinct(names []string) string {
	if len(names) == 0 {
		return "false"
	}
	var conds []string
	for _, n := range names {
		conds = append(conds, "OLD."+ident(n)+" IS DISTINCT FROM NEW."+ident(n))
	}
	return strings.Join(conds, " OR ")
}

// snapshotExpr is the jsonb snapshot (store.Registry.EncodeSnapshot's form, money as cents,
// which DecodeSnapshot reads too) of the row row (NEW or OLD). jsonb_build_object takes at
// most 100 arguments, so a wide kind's object is joined from pieces.
func snapshotExpr(t store.OutsideTable, row string) string {
	const perPiece = 50
	var pieces []string
	for i := 0; i < len(t.Fields); i += perPiece {
		var args []string
		for _, f := range t.Fields[i:min(i+perPiece, len(t.Fields))] {
			args = append(args, quoteText(f.Name), row+"."+ident(f.Name))
		}
		pieces = append(pieces, "jsonb_build_object("+strings.Join(args, ", ")+")")
	}
	if len(pieces) == 0 {
		return "'{}'::jsonb"
	}
	return strings.Join(pieces, " || ")
}

func quoteText(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// installOutside (re)makes the outside-write triggers of every record table of reg. It may
// run any number of times.
func installOutside(ctx context.Context, q querier, reg *store.Registry, schema, channel string) error {
	ts, err := reg.OutsideTables(reg.Table)
	if err != nil {
		return err
	}
	for _, t := range ts {
		for _, ddl := range OutsideTriggers(t, schema, channel) {
			if _, err := q.Exec(ctx, ddl); err != nil {
				return fmt.Errorf("outside-write triggers of %s: %w", t.Table, err)
			}
		}
	}
	return nil
}

// refoldOutside writes again, for the records outside writes queued in outside_refold, the
// columns only tandem computes (store.RefoldColumns: the sku key, the folded search text),
// and empties the queue. A search runs it first, so it finds what other programs wrote.
// A role that may not write leaves the queue as it is.
func (db *DB) refoldOutside(ctx context.Context) error {
	denied := false
	deny := func(err error) error {
		if code := pgCode(err); code == sqlstateInsufficientPriv || code == sqlstateReadOnlyTx {
			denied = true
		}
		return err
	}
	var queued bool
	err := db.read(ctx, "read the records other programs wrote", func(q querier) error {
		return deny(q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM outside_refold)`).Scan(&queued))
	})
	if denied || err != nil || !queued {
		if denied {
			return nil // a role that may not read the queue searches as before
		}
		return err
	}
	err = db.inTx(ctx, "search text of the records other programs wrote", false, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM outside_refold RETURNING kind, record_id`)
		if err != nil {
			return deny(err)
		}
		type entry struct {
			kind store.Kind
			id   int64
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
			return deny(err)
		}
		for _, e := range queue {
			if err := db.refold(ctx, tx, e.kind, e.id); err != nil {
				return deny(err)
			}
		}
		return nil
	})
	if denied {
		// A role that may only read searches the text as it was folded last; a writer's
		// next search refolds it.
		return nil
	}
	return err
}

// SQLSTATEs of a role that may not write.
const (
	sqlstateReadOnlyTx = "25006"
)

// refoldKind does refoldOutside's work for the records of kind alone, in tx: a unique
// check runs it first, so that a unique value another program wrote is taken at once, not
// only after the next search.
func (db *DB) refoldKind(ctx context.Context, tx pgx.Tx, kind store.Kind) error {
	rows, err := tx.Query(ctx, `DELETE FROM outside_refold WHERE kind = $1 RETURNING record_id`, string(kind))
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := db.refold(ctx, tx, kind, id); err != nil {
			return err
		}
	}
	return nil
}

// refold writes the derived columns of one record from its fields as they are.
func (db *DB) refold(ctx context.Context, tx pgx.Tx, kind store.Kind, id int64) error {
	rec, err := db.findRecord(ctx, tx, kind, id, true)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	t, err := db.table(kind)
	if err != nil {
		return err
	}
	cols := db.Registry().RefoldColumns(kind, rec.Fields)
	if len(cols) == 0 {
		return nil
	}
	var sets []string
	var args []any
	for _, c := range cols {
		v := c.Value
		if db.Registry().IsKeyColumn(kind, c.Name) {
			var taken bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+" WHERE "+ident(c.Name)+" = $1 AND id <> $2)", v, id).Scan(&taken); err != nil {
				return err
			}
			if taken {
				// Another record's unique value has this key: the outside write made a collision,
				// which keeps the record apart as fillSKUKeys does.
				v += store.SKUKeySeparator + strconv.FormatInt(id, 10)
			}
		}
		args = append(args, v)
		sets = append(sets, ident(c.Name)+" = $"+strconv.Itoa(len(args)))
	}
	args = append(args, id)
	if _, err := tx.Exec(ctx, "UPDATE "+t+" SET "+strings.Join(sets, ", ")+" WHERE id = $"+strconv.Itoa(len(args)), args...); err != nil {
		return fmt.Errorf("write the derived columns of %s %d: %w", kind, id, err)
	}
	return nil
}
