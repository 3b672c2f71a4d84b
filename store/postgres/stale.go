package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// What a write learns of the store's schema inside its transaction (store.SchemaReader). A
// save reads the version in the batch of its locking read (updateSteps.Read) and the
// one-statement relative save has it as a condition (relativeSQL), so neither pays a round
// trip for it; creates, deletes and moves read it with one statement.

// schemaVersionSQL reads the version of the store's schema: the last key of tandem_schema's
// primary key index.
const schemaVersionSQL = "(SELECT max(version) FROM tandem_schema)"

// schemaMark stands for the placeholder of the schema version in relativeSQL's text until
// it is numbered.
const schemaMark = "$schema_version"

// schemaVersion returns the version of the schema the store keeps now, in tx.
func (db *DB) schemaVersion(ctx context.Context, tx pgx.Tx) (int64, error) {
	var v *int64
	if err := tx.QueryRow(ctx, "SELECT "+schemaVersionSQL).Scan(&v); err != nil {
		return 0, err
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}

// storedSchema returns the schema the store keeps now, which tx read at version v.
func (db *DB) storedSchema(ctx context.Context, tx pgx.Tx, v int64) (*store.Registry, error) {
	return db.stored.Get(v, func() (*store.Registry, error) {
		rec, err := readSchema(ctx, tx)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, errors.New("the store keeps no schema")
		}
		reg, err := rec.parse()
		if err != nil {
			return nil, err
		}
		return reg.WithVersion(rec.version), nil
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
