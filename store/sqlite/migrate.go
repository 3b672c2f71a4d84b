package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one schema step; its number is the schema version after it.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order. Their file names start with the
// version number they lead to (0001_init.sql); numbers increase, and may skip.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []migration
	prev := 0
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= prev {
			return nil, fmt.Errorf("migration %s: want a number above %04d", base, prev)
		}
		prev = v
		b, err := migrationFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	return out, nil
}

// LatestSchemaVersion is the schema version this binary migrates databases to.
func LatestSchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// pending returns the migrations of ms (in order) that a database at version cur has not
// had: those numbered above cur. The numbers have gaps (a number given out and not used),
// so a migration's place in ms is not its number.
func pending(ms []migration, cur int) []migration {
	for i, m := range ms {
		if m.version > cur {
			return ms[i:]
		}
	}
	return nil
}

// migrate brings the database to the latest schema and reads the store id. An up-to-date
// database is only read: opening it never waits for a writer and never writes. A migration
// takes the write lock (one IMMEDIATE transaction, so two processes opening an old file at
// once do not both migrate) and checks the version again under it, recording the new one in
// PRAGMA user_version. A database with a newer version is refused; an empty one is
// ENOTFOUND unless allowInit lets migrate set it up.
func (db *DB) migrate(ctx context.Context, allowInit bool) error {
	ms, err := migrations()
	if err != nil {
		return store.Errorf(store.EINTERNAL, "read migrations: %v", err)
	}
	latest := ms[len(ms)-1].version
	what := "open database " + db.path
	cur, err := db.checkSchema(ctx, db.read, latest, allowInit)
	if err != nil {
		return mapErr(what, err)
	}
	if db.readOnly == "" && !db.scratch {
		if err := db.useWAL(ctx); err != nil {
			return mapErr(what, err)
		}
		// A fresh clone's search indexes (workcopy_search.go), before any migration
		// that might expect them.
		if cur >= searchPendingVersion {
			if _, err := db.BuildSearchIndex(ctx); err != nil {
				return err
			}
		}
	}
	if cur < latest {
		if db.readOnly != "" {
			return store.Errorf(store.EINVALID,
				"%s has schema version %d and this tandem needs %d, but it is read-only (%s); open it once with write access to upgrade it",
				db.path, cur, latest, db.readOnly)
		}
		made := false
		err = db.inTx(ctx, what, func(t *tx) error {
			cur, err := db.checkSchema(ctx, t.Tx, latest, allowInit)
			if err != nil {
				return err
			}
			made = cur == 0
			// A migration's own writes to records are not another program's.
			tables, err := db.recordedOrSample(ctx, t)
			if err != nil {
				return err
			}
			if err := dropOutside(ctx, t.Tx, tables); err != nil {
				return err
			}
			for _, m := range pending(ms, cur) {
				if _, err := t.Tx.ExecContext(ctx, m.sql); err != nil {
					return fmt.Errorf("migration %s: %w", m.name, err)
				}
				if err := afterMigration(ctx, t.Tx, m.name, tables); err != nil {
					return fmt.Errorf("migration %s: %w", m.name, err)
				}
			}
			if made {
				// A new store: its schema, recorded with the tables in the same
				// transaction, so nobody opens it without one (recordNewSchema).
				if err := db.recordNewSchema(ctx, t); err != nil {
					return err
				}
			}
			if copy, err := db.isCopy(ctx, t.Tx); err != nil {
				return err
			} else if !copy {
				// The triggers of the tables of the schema the store keeps (its
				// sample tables until it keeps one; a new store's, just recorded).
				if tables, err = db.recordedOrSample(ctx, t); err != nil {
					return err
				}
				if err := installOutside(ctx, t.Tx, tables); err != nil {
					return err
				}
			}
			if cur < latest {
				// PRAGMA takes no parameters; latest is our own integer.
				if _, err := t.Tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", latest)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		db.schemaMade = made
	}
	db.version = latest
	err = db.read.QueryRowContext(ctx, "SELECT value FROM store_meta WHERE key = 'store_id'").Scan(&db.storeID)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Errorf(store.EINTERNAL, "%s has no store id in store_meta; the store is damaged", db.path)
	}
	if err != nil {
		return mapErr(what+": read the store id", err)
	}
	return db.loadSchema(ctx, db.asked)
}

// useWAL puts the database in WAL mode (readers and the writer do not block each other),
// which is kept in the file: only a new file, or one another program switched back, is
// written here.
func (db *DB) useWAL(ctx context.Context) error {
	var mode string
	if err := db.read.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if mode == "wal" {
		return nil
	}
	return db.write.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
}

// rowQueryer is what the read pool and a transaction have in common for one-row reads.
type rowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// checkSchema reads the schema version and refuses a database tandem cannot use: one of
// another program, one written by a newer tandem, and an empty one unless allowInit.
func (db *DB) checkSchema(ctx context.Context, q rowQueryer, latest int, allowInit bool) (int, error) {
	var cur int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return 0, err
	}
	if cur == 0 {
		var tables int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'`).Scan(&tables); err != nil {
			return 0, err
		}
		if tables > 0 {
			return 0, store.Errorf(store.EINVALID,
				"%s is an SQLite database of another program (it has tables but no tandem schema version); give tandem its own file", db.path)
		}
		if !allowInit {
			return 0, store.Errorf(store.ENOTFOUND, "no store at %s: the file is an empty database", db.path)
		}
	}
	if cur > latest {
		return 0, store.Errorf(store.EINVALID,
			"database schema version %d is newer than this tandem (%d); upgrade tandem", cur, latest)
	}
	return cur, nil
}
