package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestRaw_NotAfterTheTransactionEnds: database/sql rolls a write transaction back on its
// own when the context it began with ends. The relative save's statements run below
// database/sql (rawstmt.go), where nothing tells them: run on the bare connection, they
// would each commit on their own, a save applied without the rest of its transaction. They
// must refuse to run once the transaction's context has ended, and write nothing.
func TestRaw_NotAfterTheTransactionEnds(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ed := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	p, err := db.CreateRecord(ed, store.KindProduct, store.Values{"sku": "RAW-1", "name": "raw"})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	wc, err := db.writer.writeConn(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	sqlTx, err := wc.conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	// Wait until database/sql has rolled the transaction back: the connection is then
	// outside any transaction, where a statement would commit by itself.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := sqlTx.ExecContext(context.Background(), "SELECT 1")
		if errors.Is(err, sql.ErrTxDone) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction still open after its context ended: %v", err)
		}
		time.Sleep(time.Millisecond)
	}

	actx := store.WithActor(context.Background(), store.Actor{Name: "bench", Role: store.RoleSystem})
	req, err := db.Registry().NewUpdateRequest(actx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 5}, IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	rel := db.newRelativeSave(req)
	if rel == nil || !req.OneStatement {
		t.Fatal("stock += 5 is not a relative save")
	}
	tx := &tx{Tx: sqlTx, wc: wc, txCtx: ctx, now: time.Now().UTC()}
	if res, err := rel.run(context.Background(), tx); !errors.Is(err, context.Canceled) {
		t.Fatalf("relative save after the transaction ended = %+v, %v; want %v", res, err, context.Canceled)
	}

	got, err := db.FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fields["stock"] != int64(0) || got.Version != 1 {
		t.Errorf("product after the refused save: stock %v at version %d, want 0 at version 1", got.Fields["stock"], got.Version)
	}
	if _, err := db.FindKey(t.Context(), store.ScopeAPI, "k1"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("key k1 after the refused save: %v, want %s", err, store.ENOTFOUND)
	}
	var changes int
	if err := db.read.QueryRowContext(t.Context(), "SELECT count(*) FROM changes WHERE record_id = ? AND event = 'saved'", p.ID).Scan(&changes); err != nil {
		t.Fatal(err)
	}
	if changes != 0 {
		t.Errorf("%d saved changes after the refused save, want 0", changes)
	}
}

// TestKeyResultPrefix: the key result the relative save writes in its transaction, the
// prefix and the version, is store.KeyResult's own encoding of the save's result.
func TestKeyResultPrefix(t *testing.T) {
	for _, k := range []store.KeyResult{
		{Kind: store.KindProduct, ID: 1, Version: 2},
		{Kind: store.KindDocument, ID: 9_007_199_254_740_993, Version: 1 << 40},
	} {
		got := strconv.AppendInt(keyResultPrefix(k.Kind, k.ID), k.Version, 10)
		got = append(got, '}')
		if want := k.Encode(); string(got) != string(want) {
			t.Errorf("result of %+v: %s, want %s", k, got, want)
		}
	}
}
