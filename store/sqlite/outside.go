package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/store"
	modernc "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Writes by other programs (store/outside.go has what they get). Triggers in the file, in
// plain SQL (another program's connection has none of tandem's functions), three per record
// table (an insert, an update, a delete), made by OutsideTriggers and installed by every
// migration of a store that is not a working copy (installOutside).
//
// tandem's own connection is told apart by a database it attaches: the write connection of
// every tandem process (writeConn) attaches an empty in-memory database named writerMark,
// which pragma_database_list shows to that connection alone. tandem's creates and deletes
// read the mark (a list of three attached databases); its saves, whose version rises and
// whose time is new and its own, end at the update trigger's cheaper tests (OutsideTriggers).
// An outside update that raises the version itself while it changes a field (and keeps the
// time, or writes one tandem does not) is still an outside write, logged at the next
// version (as on PostgreSQL): taken for tandem's, it left a gap in history that the next
// save's history version (only the fields it wrote) filled with the old values. One that
// changes no field (updated_by alone, or a field set to the value it has) is no write.
//
// The same triggers refuse (RAISE) what PostgreSQL's column types and foreign keys refuse
// another program there, which SQLite's columns and the sqlite3 shell (foreign keys off)
// let through: a value of the wrong type (handValues) and a ref to nothing or a delete of
// a record others refer to (refChecks, refUpdateTriggers).
//
// Every trigger of a table is parsed by every connection that opens the file, tandem's and
// other programs' alike, so a table has as few as can do the work, and what every kind's
// do alike is written once (outside_values, migrations 0018 and 0020): a schema of 50 kinds
// of 40 fields had 2,000 triggers of one field each, and opening it took 0.35 s; then three
// triggers a kind with a statement per field, 1.4 MB of SQL; then half of that, and SQLite
// held 6.5 MB of parsed schema; now the checks, the history, the change and the snapshot
// are the shared triggers' (4.8 MB).

// writerMark is the name of the database tandem's write connection attaches.
const writerMark = store.SQLiteWriterMark

// notTandem is true on every connection but tandem's write connection.
const notTandem = "NOT EXISTS (SELECT 1 FROM pragma_database_list WHERE name = '" + writerMark + "')"

// The mark costs a read of pragma_database_list, which SQLite prepares anew at each read,
// and the update trigger reads it for every save that keeps the record's time: most saves
// of one record within a millisecond, as a burst of relative saves makes (most of bench
// contention's). So each of a table's three triggers begins with a gate, its row's id read
// (gate), and tandem's write connection has an authorizer (writerGate) that makes SQLite
// compile that read, in those three triggers alone, as NULL: on that connection the
// triggers end at their first test, and the mark is read only by other connections that
// carry it (bench contention's raw baseline). On every other connection the id of a row is
// never NULL, and the gate is true.

// gate is the first test of the WHEN of a table's insert, update and delete triggers, on
// row (NEW, or OLD for the delete).
func gate(row string) string { return row + ".id IS NOT NULL" }

// writerGate is the authorizer of tandem's write connection (writeConn): it has SQLite
// compile a read of a record table's id inside that table's insert, update or delete
// outside-write trigger as NULL, which ends the trigger at its gate. Everything else is
// allowed as it is.
func writerGate(action modernc.AuthorizerActionCode, table, column, _, trigger string) modernc.AuthorizerReturnCode {
	if action == modernc.AuthRead && column == "id" && strings.HasPrefix(trigger, table) {
		switch strings.TrimPrefix(trigger, table) {
		case "_outside_insert", "_outside_update", "_outside_delete":
			return modernc.AuthorizerIgnore
		}
	}
	return modernc.AuthorizerOK
}

// outsideNow is the time of an outside write, in formatTime's form.
const outsideNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

// OutsideTriggers returns the statements that make writes to t's table by other programs
// seen (store/outside.go): three triggers in plain SQL, whose names start with the table's
// name and "_outside_". installOutside runs them; a new kind's table gets its own by the
// same call.
//
// A kind's trigger says only what it alone can: its refusals (refs, versions, times), its
// fields' values, and its own table's updates. It hands the row to valuesTable, whose
// shared triggers (migration 0020_outside_values_positional) check the values, write the
// history version (with the row's snapshot, made from the values), its change, and the
// record's place in outside_refold: what every kind's triggers did alike is parsed once.
//
// An update is seen by one AFTER UPDATE trigger, whose condition is cheap and false for
// every save of tandem's (the version rises, the time is formatTime's and new), so that a
// save runs one trigger program that ends at once; an update that keeps the version or the
// time (an outside one that raises the version itself too) reads the mark. The fields an
// outside update wrote are those whose value it changed (OLD against NEW, as on
// PostgreSQL: outside_values_written); the trigger names every field's old value, which
// SQLite loads for every update of the table, tandem's too, next to the new row it loads
// anyway.
func OutsideTriggers(t store.OutsideTable) []string {
	tbl := quoteIdent(t.Table)
	name := func(suffix string) string { return quoteIdent(t.Table + "_outside_" + suffix) }
	refIns, refID, refDel := refChecks(t)
	// The insert. The time is made tandem's and the version put past any the history of
	// the id has (a record deleted before), and then the row is logged at that version.
	out := []string{`CREATE TRIGGER ` + name("insert") + ` AFTER INSERT ON ` + tbl + ` WHEN ` + gate("NEW") + ` AND ` + notTandem + ` BEGIN
	UPDATE ` + tbl + ` SET updated_at = ` + outsideNow + ` WHERE id = NEW.id AND NOT ` + tandemTime("NEW.updated_at") + `;
	UPDATE ` + tbl + ` SET version = (SELECT max(version) + 1 FROM history WHERE kind = ` + quoteText(string(t.Kind)) + ` AND record_id = NEW.id)
		WHERE id = NEW.id AND EXISTS (SELECT 1 FROM history WHERE kind = ` + quoteText(string(t.Kind)) + ` AND record_id = NEW.id AND version >= NEW.version);
	` + handValues(t, store.EventCreated, "NEW.id") + `
	` + refuse(refIns) + `
	` + clearValues(store.EventCreated) + `END`}

	// The update. A version only rises: an outside update that sets it lower (or to NULL)
	// would let a save that read the record before it, and expects that older version, pass
	// and overwrite what was written since without a conflict. A time tandem cannot read
	// (datetime('now') has a space for the T) would make every listing of the kind fail. Both
	// are refused; tandem never writes either, so the mark is read only for such an update.
	// The history version is written first, when a field changed; the version rises after
	// it, when it was written.
	next := "OLD.version + 1"
	logged := "EXISTS (SELECT 1 FROM history WHERE kind = " + quoteText(string(t.Kind)) + " AND record_id = NEW.id AND version = " + next + ")"
	actor := quoteText(store.OutsideActor)
	out = append(out, `CREATE TRIGGER `+name("update")+` AFTER UPDATE ON `+tbl+`
	WHEN `+gate("NEW")+` AND (NEW.version IS OLD.version OR NEW.version IS NULL OR NEW.version < OLD.version OR NEW.updated_at IS OLD.updated_at
		OR NOT (`+quickTime("NEW.updated_at")+`)) AND `+notTandem+` BEGIN
	`+refuse(append([]refusal{
		{"NEW.version IS NULL OR NEW.version < OLD.version", "tandem: a record's version only rises; set it higher or leave it to tandem"},
		{"NEW.updated_at IS NOT OLD.updated_at AND NOT " + tandemTime("NEW.updated_at"), "tandem: updated_at must be a time like 2006-01-02T15:04:05Z; leave it to tandem"},
	}, refID...))+`
	`+handValues(t, store.EventSaved, "NEW.id")+`
	UPDATE `+tbl+` SET version = `+next+`, updated_at = `+outsideNow+`,
		updated_by = CASE WHEN NEW.updated_by IS OLD.updated_by THEN `+actor+` ELSE NEW.updated_by END
		WHERE id = NEW.id AND `+logged+`;
	`+clearValues(store.EventSaved)+`END`)

	// A tombstone as tandem's own delete leaves (store.Registry.Tombstone): the next version,
	// no fields, every value as the delete found it.
	out = append(out, `CREATE TRIGGER `+name("delete")+` BEFORE DELETE ON `+tbl+` WHEN `+gate("OLD")+` AND `+notTandem+` BEGIN
	`+refuse(refDel)+`
	`+handValues(t, store.EventDeleted, "OLD.id")+`
	`+clearValues(store.EventDeleted)+`END`)
	return append(append(out, refUpdateTriggers(t)...), cycleTriggers(t)...)
}

// cycleTriggers returns the triggers that refuse another program's write of a tree kind's
// parent_id that would make a cycle: the record named as the parent, or one of its
// ancestors, is the record itself. A move of tandem's checks this under the tree lock;
// another program's write takes the database's write lock, which serializes it with every
// move.
func cycleTriggers(t store.OutsideTable) []string {
	if !t.Tree {
		return nil
	}
	tbl, col := quoteIdent(t.Table), quoteIdent(store.ParentField)
	name := func(suffix string) string { return quoteIdent(t.Table + "_outside_" + suffix) }
	raise := "SELECT RAISE(ABORT, " + quoteText(store.OutsideCycleMessage(t.Kind)) + ") WHERE NEW.id IN (" +
		"WITH RECURSIVE up(id) AS (SELECT NEW." + col + " UNION SELECT p." + col + " FROM " + tbl + " p JOIN up ON p.id = up.id " +
		"WHERE p." + col + " IS NOT NULL) SELECT id FROM up);"
	return []string{`CREATE TRIGGER ` + name("cycle_insert") + ` BEFORE INSERT ON ` + tbl + `
	WHEN NEW.` + col + ` IS NOT NULL AND NEW.` + col + ` IS NEW.id AND ` + notTandem + ` BEGIN
	` + raise + `
END`, `CREATE TRIGGER ` + name("cycle_update") + ` BEFORE UPDATE OF ` + col + ` ON ` + tbl + `
	WHEN NEW.` + col + ` IS NOT NULL AND NEW.` + col + ` IS NOT OLD.` + col + ` AND ` + notTandem + ` BEGIN
	` + raise + `
END`}
}

// refChecks and refUpdateTriggers hold other programs to t's refs as the foreign keys of
// its columns hold tandem (whose connections turn foreign_keys on; the sqlite3 shell and
// most programs leave it off), and as PostgreSQL's hold every writer: a ref written by
// another program must name a record that exists, and a record that others refer to is
// neither deleted nor given another id. The check is row by row, so a delete of a record
// together with its referrers in one statement is refused too; delete the referrers first.
// The messages are fixed texts (RAISE takes no expression). Every trigger a table has is
// parsed by every connection, so the checks of an insert, a delete and an id change are
// statements of the table's three triggers (refChecks); only a change of a ref field has a
// trigger of its own (refUpdateTriggers), which fires whatever the version does and tests
// the mark last: tandem's own writes keep to the refs already (foreign keys, its delete's
// referrer check), so for them an index lookup ends the test.
func refChecks(t store.OutsideTable) (insert, idChange, del []refusal) {
	for _, r := range t.Refs {
		col := "NEW." + quoteIdent(r.Field)
		missing := "NOT EXISTS (SELECT 1 FROM " + quoteIdent(r.ToTable) + " WHERE id = " + col + ")"
		insert = append(insert, refusal{col + " IS NOT NULL AND " + missing, refMissing(r)})
	}
	// One check per referring table, of all its fields that refer to t: a table with
	// several refs to the kind would otherwise have a check of its own for each, parsed by
	// every connection.
	var order []string
	byTable := map[string][]store.OutsideRef{}
	for _, r := range t.Referrers {
		if _, ok := byTable[r.Table]; !ok {
			order = append(order, r.Table)
		}
		byTable[r.Table] = append(byTable[r.Table], r)
	}
	for _, tbl := range order {
		rs := byTable[tbl]
		cols, names := make([]string, len(rs)), make([]string, len(rs))
		for i, r := range rs {
			cols[i], names[i] = quoteIdent(r.Field), r.Field
		}
		where := quoteIdent(rs[0].Field) + " = OLD.id"
		if len(rs) > 1 {
			where = "OLD.id IN (" + strings.Join(cols, ", ") + ")"
		}
		referred := "EXISTS (SELECT 1 FROM " + quoteIdent(tbl) + " WHERE " + where
		if rs[0].SameTable {
			referred += " AND id IS NOT OLD.id"
		}
		referred += ")"
		msg := fmt.Sprintf("tandem: records of %s refer to this %s (%s); delete them or point them elsewhere first", rs[0].Kind, rs[0].To, strings.Join(names, ", "))
		del = append(del, refusal{referred, msg})
		idChange = append(idChange, refusal{"NEW.id IS NOT OLD.id AND " + referred, msg})
	}
	return insert, idChange, del
}

// refusal is a condition under which a trigger refuses another program's write, and the
// message it refuses with.
type refusal struct{ cond, msg string }

// refuse is one statement that refuses (RAISE) with the message of the first of rs whose
// condition holds, "" for none. One CASE, not a statement per refusal: every connection
// parses every trigger, and a statement costs more to parse and to hold than a branch.
func refuse(rs []refusal) string {
	var b strings.Builder
	for _, r := range rs {
		if r.cond == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("SELECT CASE")
		}
		b.WriteString("\n\t\tWHEN " + r.cond + " THEN RAISE(ABORT, " + quoteText(r.msg) + ")")
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteString(" END;")
	return b.String()
}

// refMissing is the refusal of a ref to nothing.
func refMissing(r store.OutsideRef) string {
	return fmt.Sprintf("tandem: %s.%s must name a %s that exists", r.Kind, r.Field, r.To)
}

// refUpdateTriggers are the triggers that refuse another program's update of a ref field to
// a record that does not exist (see refChecks).
func refUpdateTriggers(t store.OutsideTable) []string {
	tbl := quoteIdent(t.Table)
	name := func(suffix string) string { return quoteIdent(t.Table + "_outside_" + suffix) }
	var out []string
	for _, r := range t.Refs {
		col := "NEW." + quoteIdent(r.Field)
		missing := "NOT EXISTS (SELECT 1 FROM " + quoteIdent(r.ToTable) + " WHERE id = " + col + ")"
		if r.SameTable {
			missing = "NEW.id IS NOT " + col + " AND " + missing
		}
		out = append(out, `CREATE TRIGGER `+name("ref_"+r.Field+"_update")+` BEFORE UPDATE OF `+quoteIdent(r.Field)+` ON `+tbl+`
	WHEN `+col+` IS NOT NULL AND `+col+` IS NOT OLD.`+quoteIdent(r.Field)+` AND `+missing+` AND `+notTandem+` BEGIN
	SELECT RAISE(ABORT, `+quoteText(refMissing(r))+`);
END`)
	}
	return out
}

// The values another program writes are checked, and an update's written fields found, by
// SQL that every kind shares (migrations 0018_outside_values, 0020_outside_values_positional):
// a kind's trigger puts the row's fields, as a JSON array in the order of their names, in
// valuesTable, with the names and each one's type code, whose trigger outside_values_check
// refuses the first value that the field's column cannot hold as tandem reads it, whose
// view outside_values_written lists the fields an update changed (and makes the snapshot), and
// whose trigger outside_values_log writes the history version, the change and the refold
// queue. The column types PostgreSQL enforces
// (text, a whole number, a time, a list of strings) are checked, which SQLite's columns do
// not; a value of the right type that the schema refuses (an enum value not in the list, a
// text over its limit) is let through, as on PostgreSQL: tandem reads and shows it, and a
// save that writes the field must bring it within the schema. NOT NULL columns refuse a
// NULL. An update is held to this for the fields it changed.
//
// Every connection parses every trigger: the checks of two statements per field of every
// kind in the kinds' own triggers were most of a wide schema's text (issue 24: a schema of
// 50 kinds of 40 fields opens in under 100 ms), and what is shared is parsed once. What
// is left in a kind's trigger is what only it can say, each field as few times as it can:
// the values are read from the row (an AFTER trigger's row is NEW, a BEFORE DELETE
// trigger's OLD), a bare column each rather than NEW."f" (three expressions to parse and
// keep), with no name beside it: the names are one text.
const valuesTable = "outside_values"

// maxArrayArgs is how many values one json_array of fieldValues takes; SQLite's functions
// take at most 127 arguments unless it was built for more.
const maxArrayArgs = 100

// handValues is the statement of t's trigger for event (store.EventCreated, EventSaved or
// EventDeleted) that puts the row id (as it is in the table: NEW's of an AFTER trigger,
// OLD's of the BEFORE DELETE one) in valuesTable, whose triggers check its values and log
// it: at its version when created, at the next when saved (with the old values, which tell
// the fields written) or deleted.
func handValues(t store.OutsideTable, event store.Event, id string) string {
	names := t.FieldNames()
	self := "NEW"
	if event == store.EventDeleted {
		self = "OLD"
	}
	version, cols, vals := "version", "", fieldValues(names, "", self)
	switch event {
	case store.EventSaved:
		version, cols, vals = "OLD.version + 1", ", old", vals+", "+fieldValues(names, "OLD", "OLD")
	case store.EventDeleted:
		version = "version + 1"
	}
	refold := "NULL"
	if len(t.Refold) > 0 {
		refold = quoteText(jsonNames(t.Refold))
	}
	return "INSERT INTO " + valuesTable + " (kind, record_id, version, event, refold, names, codes, vals" + cols + ") SELECT " +
		quoteText(string(t.Kind)) + ", id, " + version + ", " + quoteText(string(event)) + ", " + refold + ", " +
		quoteText(jsonNames(names)) + ", " + quoteText(typeCodes(t, names)) + ", " + vals +
		" FROM " + quoteIdent(t.Table) + " WHERE id = " + id + ";"
}

// clearValues is the last statement of a trigger that began with handValues for event: the
// row lives only while the trigger runs. The insert trigger's own updates of the row fire
// the update trigger in the middle of it, so each deletes its own row alone.
func clearValues(event store.Event) string {
	return "DELETE FROM " + valuesTable + " WHERE event = " + quoteText(string(event)) + ";\n"
}

// jsonNames is the JSON array of names.
func jsonNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// typeCodes is the type code of each of names, fields of t, one character each, which
// valuesCheck reads: s text, i a whole number, m money (cents, not negative), r a ref
// (a whole number or NULL), t a time or NULL, a a set (a JSON array of strings), and - for
// a field of another type, which is not checked.
func typeCodes(t store.OutsideTable, names []string) string {
	types := make(map[string]store.Type, len(t.Fields))
	for _, f := range t.Fields {
		types[f.Name] = f.Type
	}
	b := make([]byte, len(names))
	for i, n := range names {
		switch types[n] {
		case store.TypeString, store.TypeText, store.TypeEnum:
			b[i] = 's'
		case store.TypeInt:
			b[i] = 'i'
		case store.TypeMoney:
			b[i] = 'm'
		case store.TypeRef:
			b[i] = 'r'
		case store.TypeTime:
			b[i] = 't'
		case store.TypeSet:
			b[i] = 'a'
		default:
			b[i] = '-'
		}
	}
	return string(b)
}

// fieldValues is a JSON array of the fields names of a row, in handValues's statement,
// which reads the kind's table at the row: with row "" the row's columns as they are (an
// AFTER trigger's NEW, the BEFORE DELETE trigger's OLD), with row OLD an update's old ones.
// json_array takes only so many arguments: the array of more fields is put together from
// pieces, which name the columns of self, the trigger's row (NEW or OLD), since a bare name
// there could be a column of json_each.
func fieldValues(names []string, row, self string) string {
	if len(names) <= maxArrayArgs {
		args := make([]string, len(names))
		for i, n := range names {
			args[i] = quoteIdent(n)
			if row != "" {
				args[i] = row + "." + args[i]
			}
		}
		return "json_array(" + strings.Join(args, ", ") + ")"
	}
	if row == "" {
		row = self
	}
	var pieces []string
	for i := 0; i < len(names); i += maxArrayArgs {
		var args []string
		for _, n := range names[i:min(i+maxArrayArgs, len(names))] {
			args = append(args, row+"."+quoteIdent(n))
		}
		pieces = append(pieces, "json_array("+strings.Join(args, ", ")+")")
	}
	return "(SELECT json_group_array(v) FROM (SELECT j.value AS v FROM json_each(json_array(" + strings.Join(pieces, ", ") +
		")) p, json_each(p.value) j ORDER BY p.key, j.key))"
}

// quickTime is an SQL condition that is true of every time tandem writes (formatTime's
// form) and of no time tandem cannot read, cheaper than tandemTime: the update trigger's
// condition tests it on every save. A time it is false of may still be readable
// (tandemTime decides).
func quickTime(v string) string {
	return v + " GLOB '????-??-??T??:??:??.???Z' AND julianday(" + v + ") IS NOT NULL"
}

// tandemTime is an SQL condition: v is a time in the RFC 3339 form tandem reads
// (formatTime's, or with an offset for Z).
func tandemTime(v string) string {
	return "coalesce(" + v + " GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'" +
		" AND (" + v + " GLOB '*Z' OR " + v + " GLOB '*[+-][0-9][0-9]:[0-9][0-9]')" +
		" AND julianday(" + v + ") IS NOT NULL, 0)"
}

func quoteText(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// dropOutside removes the outside-write triggers of every record table of reg (every
// trigger whose name starts with the table's and "_outside_"), so that a migration's own
// writes to the records do not fire them, their view <table>_outside_row, and the staging
// table <table>_outside_written of the triggers of one field each that stores of schema
// version 15 have (migration 0016_outside_triggers).
func dropOutside(ctx context.Context, q execQuerier, reg *store.Registry) error {
	ts, err := reg.OutsideTables(reg.Table)
	if err != nil {
		return err
	}
	for _, t := range ts {
		prefix := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(t.Table + "_outside_")
		rows, err := q.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE ? ESCAPE '\'`, prefix+"%")
		if err != nil {
			return err
		}
		var names []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			names = append(names, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, name := range names {
			if _, err := q.ExecContext(ctx, "DROP TRIGGER IF EXISTS "+quoteIdent(name)); err != nil {
				return fmt.Errorf("drop trigger %s: %w", name, err)
			}
		}
		if _, err := q.ExecContext(ctx, "DROP TABLE IF EXISTS "+quoteIdent(t.Table+"_outside_written")); err != nil {
			return fmt.Errorf("drop table %s_outside_written: %w", t.Table, err)
		}
		if _, err := q.ExecContext(ctx, "DROP VIEW IF EXISTS "+quoteIdent(t.Table+"_outside_row")); err != nil {
			return fmt.Errorf("drop view %s_outside_row: %w", t.Table, err)
		}
	}
	return nil
}

// execQuerier runs statements and queries: a transaction.
type execQuerier interface {
	execer
	querier
}

// installOutside (re)makes the outside-write triggers of every record table of reg. It may
// run any number of times.
func installOutside(ctx context.Context, q execQuerier, reg *store.Registry) error {
	if err := dropOutside(ctx, q, reg); err != nil {
		return err
	}
	ts, err := reg.OutsideTables(reg.Table)
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

// refoldKind does refoldOutside's work for the records of kind alone, in tx: a unique
// check runs it first, so that a unique value another program wrote is taken at once, not
// only after the next search.
func (db *DB) refoldKind(ctx context.Context, t *tx, kind store.Kind) error {
	rows, err := t.QueryContext(ctx, `SELECT record_id FROM outside_refold WHERE kind = ?`, string(kind))
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := db.refold(ctx, t, kind, id); err != nil {
			return err
		}
	}
	_, err = t.ExecContext(ctx, `DELETE FROM outside_refold WHERE kind = ?`, string(kind))
	return err
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
	tbl, err := db.table(kind)
	if err != nil {
		return err
	}
	row, folds := splitFolds(db.Registry(), kind, db.Registry().RefoldColumns(kind, rec.Fields))
	if err := writeFolds(ctx, t, db.Registry(), kind, id, folds); err != nil {
		return err
	}
	for _, c := range row {
		q := "UPDATE " + tbl + " SET " + quoteIdent(c.Name) + " = ? WHERE id = ?"
		_, err := t.ExecContext(ctx, q, c.Value, id)
		if code, ok := sqliteCode(err); ok && code == sqlite3.SQLITE_CONSTRAINT_UNIQUE && db.Registry().IsKeyColumn(kind, c.Name) {
			// Another record's unique value has this key: the outside write made a collision,
			// which keeps the record apart as fillSKUKeys does.
			_, err = t.ExecContext(ctx, q, c.Value+store.SKUKeySeparator+strconv.FormatInt(id, 10), id)
		}
		if err != nil {
			return fmt.Errorf("write %s of %s %d: %w", c.Name, kind, id, err)
		}
	}
	return nil
}
