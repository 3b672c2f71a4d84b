package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tandem-editor/tandem/store"
)

// What a write learns of the store's schema inside its transaction (store.SchemaReader):
// under SQLite's write lock no schema change commits between that read and the write's
// commit. A save reads the version with the record (findFields) or, as one statement, has
// it as a condition (relativeQuery); the other writes read it with one statement.

// schemaVersionSQL reads the version of the store's schema: the largest key of
// tandem_schema, which SQLite finds at the end of its b-tree.
const schemaVersionSQL = "(SELECT max(version) FROM " + schemaTable + ")"

// schemaVersion returns the version of the schema the store keeps now, in tx.
func (db *DB) schemaVersion(ctx context.Context, tx *tx) (int64, error) {
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT "+schemaVersionSQL).Scan(&v); err != nil {
		return 0, err
	}
	return v.Int64, nil
}

// storedSchema returns the schema the store keeps now, which tx read at version v.
func (db *DB) storedSchema(ctx context.Context, tx *tx, v int64) (*store.Registry, error) {
	return db.stored.Get(v, func() (*store.Registry, error) {
		reg, err := db.readSchema(ctx, tx.Tx)
		if err == nil && reg == nil {
			err = errors.New("the store keeps no schema")
		}
		return reg, err
	})
}

func (s saveChecks) SchemaVersion() (int64, error) { return s.db.schemaVersion(s.ctx, s.tx) }
func (s saveChecks) StoredSchema(v int64) (*store.Registry, error) {
	return s.db.storedSchema(s.ctx, s.tx, v)
}

func (s parentSteps) SchemaVersion() (int64, error) { return s.db.schemaVersion(s.ctx, s.tx) }
func (s parentSteps) StoredSchema(v int64) (*store.Registry, error) {
	return s.db.storedSchema(s.ctx, s.tx, v)
}

func (s deleteSteps) SchemaVersion() (int64, error) { return s.db.schemaVersion(s.ctx, s.tx) }
func (s deleteSteps) StoredSchema(v int64) (*store.Registry, error) {
	return s.db.storedSchema(s.ctx, s.tx, v)
}

func (s moveSteps) SchemaVersion() (int64, error) { return s.db.schemaVersion(s.ctx, s.tx) }
func (s moveSteps) StoredSchema(v int64) (*store.Registry, error) {
	return s.db.storedSchema(s.ctx, s.tx, v)
}

var (
	_ store.SchemaReader = updateSteps{}
	_ store.SchemaReader = createSteps{}
	_ store.SchemaReader = deleteSteps{}
	_ store.SchemaReader = moveSteps{}
)
