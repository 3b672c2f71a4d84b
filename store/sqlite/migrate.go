package sqlite

import (
	"context"
	"embed"
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

// migrate brings the database to the latest schema in one IMMEDIATE transaction (so two
// processes opening a new file at once do not both migrate), recording the version in
// PRAGMA user_version. A database with a newer version is refused.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return store.Errorf(store.EINTERNAL, "read migrations: %v", err)
	}
	latest := ms[len(ms)-1].version
	return db.writeTx(ctx, "open database "+db.path, func(t *tx) error {
		var cur int
		if err := t.Tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
			return err
		}
		if cur == 0 {
			var tables int
			if err := t.Tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'`).Scan(&tables); err != nil {
				return err
			}
			if tables > 0 {
				return store.Errorf(store.EINVALID,
					"%s is an SQLite database of another program (it has tables but no tandem schema version); give tandem its own file", db.path)
			}
		}
		if cur > latest {
			return store.Errorf(store.EINVALID,
				"database schema version %d is newer than this tandem (%d); upgrade tandem", cur, latest)
		}
		for _, m := range ms {
			if m.version <= cur {
				continue
			}
			if _, err := t.Tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
		}
		if cur < latest {
			// PRAGMA takes no parameters; latest is our own integer.
			if _, err := t.Tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", latest)); err != nil {
				return err
			}
		}
		db.version = latest
		return nil
	})
}
