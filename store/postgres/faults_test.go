package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

var (
	alice  = store.Actor{Name: "alice", Role: store.RoleEditor}
	worker = store.Actor{Name: "worker", Role: store.RoleSystem}
)

func actx(t *testing.T, a store.Actor) context.Context { return store.WithActor(t.Context(), a) }

// mustOpen opens a store on dsn and closes it when the test ends.
func mustOpen(t *testing.T, dsn string) *DB {
	t.Helper()
	db, err := Open(t.Context(), dsn, store.Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mustAdmin connects to the test server outside any store, for inspection and for killing
// backends, and closes the connection when the test ends.
func mustAdmin(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), pgtest.ServerDSN(t))
	if err != nil {
		t.Fatalf("admin connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func mustCreateDoc(t *testing.T, db *DB, title string, parent *int64) *store.Record {
	t.Helper()
	vals := store.Values{"title": title}
	if parent != nil {
		vals["parent_id"] = *parent
	}
	r, err := db.CreateRecord(actx(t, alice), store.KindDocument, vals)
	if err != nil {
		t.Fatalf("create document %s: %v", title, err)
	}
	return r
}

func mustCreateProduct(t *testing.T, db *DB, sku string) *store.Record {
	t.Helper()
	r, err := db.CreateRecord(actx(t, alice), store.KindProduct, store.Values{"sku": sku, "name": "Product " + sku})
	if err != nil {
		t.Fatalf("create product %s: %v", sku, err)
	}
	return r
}

// terminate ends every backend whose application_name is name and returns how many.
func terminate(t *testing.T, admin *pgx.Conn, name string) int {
	t.Helper()
	var n int
	err := admin.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid()`, name).Scan(&n)
	if err != nil {
		t.Fatalf("terminate %s: %v", name, err)
	}
	return n
}

// cycles counts documents from which walking up the tree does not reach a root.
func cycles(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	err := db.pool.QueryRow(t.Context(), `WITH RECURSIVE walk (start, id, parent_id, n) AS (
			SELECT id, id, parent_id, 0 FROM documents
			UNION ALL
			SELECT w.start, d.id, d.parent_id, w.n + 1 FROM walk w JOIN documents d ON d.id = w.parent_id
			WHERE w.n < 50
		)
		SELECT count(DISTINCT start) FROM walk WHERE n >= 50 OR (n > 0 AND id = start)`).Scan(&n)
	if err != nil {
		t.Fatalf("cycle query: %v", err)
	}
	return n
}

// TestMoveDocument_Race is DESIGN.md point 7's race: A moves under a descendant of B while B
// moves under a descendant of A, from two stores (separate pools and connections), started
// together, round after round. Each move alone is valid; both together would close a cycle.
// The advisory tree lock must let exactly one win every round, and the recursive check after
// each round must find no cycle.
func TestMoveDocument_Race(t *testing.T) {
	dsn := pgtest.DSN(t)
	db1, db2 := mustOpen(t, dsn), mustOpen(t, dsn)
	a := mustCreateDoc(t, db1, "A", nil)
	a1 := mustCreateDoc(t, db1, "A1", &a.ID)
	b := mustCreateDoc(t, db1, "B", nil)
	b1 := mustCreateDoc(t, db1, "B1", &b.ID)
	const rounds = 300
	for round := range rounds {
		// Reset: A and B at the root, A1 under A, B1 under B.
		if _, err := db1.pool.Exec(t.Context(), `UPDATE documents SET parent_id = CASE id WHEN $1 THEN $2::bigint WHEN $3 THEN $4::bigint END
			WHERE id IN ($1, $3, $5, $6)`, a1.ID, a.ID, b1.ID, b.ID, a.ID, b.ID); err != nil {
			t.Fatalf("reset: %v", err)
		}
		start := make(chan struct{})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, mv := range []struct {
			db           *DB
			id, parentID int64
		}{{db1, a.ID, b1.ID}, {db2, b.ID, a1.ID}} {
			wg.Go(func() {
				<-start
				_, errs[i] = mv.db.MoveRecord(actx(t, alice), store.KindDocument, mv.id, store.Move{Parent: &mv.parentID})
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch store.ErrorCode(err) {
			case "":
				won++
			case store.EINVALID:
				if !strings.Contains(err.Error(), "cycle") {
					t.Fatalf("round %d: refused for another reason: %v", round, err)
				}
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d moves won, want exactly 1 (errors %v)", round, won, errs)
		}
		if n := cycles(t, db1); n != 0 {
			t.Fatalf("round %d: %d documents are in a cycle", round, n)
		}
	}
}

// TestLockedUpdate_ConcurrentReadModifyWrite runs two system writers, each on its own store,
// doing read-modify-write (stock = stock + 1 computed in Go) under SELECT ... FOR UPDATE on
// one row. A lost update would leave stock below the number of writes.
func TestLockedUpdate_ConcurrentReadModifyWrite(t *testing.T) {
	dsn := pgtest.DSN(t)
	dbs := []*DB{mustOpen(t, dsn), mustOpen(t, dsn)}
	p := mustCreateProduct(t, dbs[0], "RMW")
	const each = 50
	var wg sync.WaitGroup
	errs := make(chan error, len(dbs))
	for i, db := range dbs {
		wg.Go(func() {
			for n := range each {
				_, err := db.LockedUpdate(actx(t, worker), store.KindProduct, p.ID, func(r *store.Record) (store.Update, error) {
					return store.Update{Set: store.Values{
						"stock":     r.Fields["stock"].(int64) + 1,
						"checksum":  fmt.Sprintf("w%d-%d", i, n),
						"thumbnail": fmt.Sprintf("v%d", r.Version),
					}}, nil
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d, write %d: %w", i, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := dbs[0].FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(dbs) * each); got.Fields["stock"] != want {
		t.Errorf("stock = %v, want %d", got.Fields["stock"], want)
	}
	if want := int64(1 + len(dbs)*each); got.Version != want {
		t.Errorf("version = %d, want %d", got.Version, want)
	}
	ops, err := dbs[0].FindOps(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(dbs) * each; len(ops) != want {
		t.Errorf("operation log has %d entries, want %d", len(ops), want)
	}
}

// TestReconnect_TerminateBackends kills every connection of the store's schema, round after
// round, while writers save keyed relative changes. A save that reports an error is sent
// again with the same idempotency key, as the error message tells people to. At the end every
// save is applied exactly once, and each is in history.
func TestReconnect_TerminateBackends(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpen(t, dsn)
	admin := mustAdmin(t)
	p := mustCreateProduct(t, db, "KILL")
	const writers, killRounds = 3, 12
	ctx, stop := context.WithCancel(t.Context())
	killed := 0
	var retried, saves atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				u := store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: fmt.Sprintf("w%d-%d", w, n)}
				for attempt := 0; ; attempt++ {
					_, err := db.UpdateRecord(actx(t, alice), store.KindProduct, p.ID, u)
					if err == nil {
						saves.Add(1)
						break
					}
					if store.ErrorCode(err) != store.EUNAVAILABLE || attempt == 20 {
						errs <- fmt.Errorf("writer %d, save %d: %w", w, n, err)
						return
					}
					retried.Add(1)
				}
			}
		})
	}
	for range killRounds {
		time.Sleep(40 * time.Millisecond)
		killed += terminate(t, admin, appName(clientAppNamePrefix, db.schema))
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("no backend was terminated; the test proved nothing")
	}
	t.Logf("terminated %d backends during %d saves; %d saves retried by the caller", killed, saves.Load(), retried.Load())
	got, err := db.FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatalf("first operation after the kills: %v", err)
	}
	if want := int64(saves.Load()); got.Fields["stock"] != want {
		t.Errorf("stock = %v, want %d (a save lost or applied twice)", got.Fields["stock"], want)
	}
	hist, err := db.FindHistory(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + int(saves.Load()); len(hist) != want {
		t.Errorf("history has %d versions, want %d", len(hist), want)
	}
}

// TestSubscribe_ListenConnectionKilled kills the subscriber's LISTEN connection several
// times while another store writes. The subscriber must still deliver every change, in order,
// exactly once.
func TestSubscribe_ListenConnectionKilled(t *testing.T) {
	dsn := pgtest.DSN(t)
	reader, writer := mustOpen(t, dsn), mustOpen(t, dsn)
	admin := mustAdmin(t)
	p := mustCreateProduct(t, writer, "FEED")
	from, err := reader.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	feed, err := reader.Subscribe(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 60
	kills := 0
	for i := range writes {
		if i%10 == 5 {
			kills += terminate(t, admin, appName(listenAppNamePrefix, reader.schema))
		}
		if _, err := writer.UpdateRecord(actx(t, alice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if kills == 0 {
		t.Fatal("no LISTEN connection was terminated; the test proved nothing")
	}
	last, err := writer.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	timeout := time.After(20 * time.Second)
	for len(got) < int(last-from) {
		select {
		case c, ok := <-feed:
			if !ok {
				t.Fatalf("feed closed after %d changes", len(got))
			}
			got = append(got, c.ID)
		case <-timeout:
			t.Fatalf("got %d of %d changes after the LISTEN connection was killed %d times", len(got), last-from, kills)
		}
	}
	for i, id := range got {
		if want := from + int64(i) + 1; id != want {
			t.Fatalf("change %d has id %d, want %d (lost, duplicated or out of order)", i, id, want)
		}
	}
	// The subscriber LISTENs again on a new connection (not only polling the log).
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`,
			appName(listenAppNamePrefix, reader.schema)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d LISTEN connections after the kills, want 1", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case c := <-feed:
		t.Fatalf("unexpected extra change %d", c.ID)
	default:
	}
}

// TestOpen_BadDSN shows that an unreachable server is reported quickly, as EUNAVAILABLE, and
// that the password never appears in the message.
func TestOpen_BadDSN(t *testing.T) {
	const secret = "Sup3rS3cretPw"
	for _, dsn := range []string{
		"postgres://tandem:" + secret + "@127.0.0.1:1/tandem?sslmode=disable",
		"host=127.0.0.1 port=1 user=tandem password=" + secret + " dbname=tandem sslmode=disable",
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		_, err := Open(ctx, dsn, store.Options{})
		cancel()
		if err == nil {
			t.Fatalf("open of an unreachable server succeeded")
		}
		if got := store.ErrorCode(err); got != store.EUNAVAILABLE {
			t.Errorf("code = %s, want %s (%v)", got, store.EUNAVAILABLE, err)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%+v", err), secret) {
			t.Errorf("error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), "tandem@127.0.0.1:1/tandem") {
			t.Errorf("error does not name the server as user@host:port/db: %v", err)
		}
	}
	// A DSN that does not parse is refused without echoing the password either.
	_, err := Open(t.Context(), "postgres://tandem:"+secret+"@127.0.0.1:notaport/x", store.Options{})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("unparsable DSN: err = %v", err)
	}
}

// TestOpen_NewerSchemaRefused shows that a schema migrated by a newer tandem is refused.
func TestOpen_NewerSchemaRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpen(t, dsn)
	if _, err := db.pool.Exec(t.Context(), "INSERT INTO schema_migrations (version) VALUES (99)"); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), dsn, store.Options{})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), fmt.Sprintf("database schema version 99 is newer than this tandem (%d)", latestSchemaVersion)) {
		t.Fatalf("open = %v, want EINVALID naming both versions", err)
	}
}

// TestOpen_ConcurrentFirstMigration opens one fresh schema from several goroutines at once:
// the advisory lock lets one migrate and the others find it migrated.
func TestOpen_ConcurrentFirstMigration(t *testing.T) {
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := Open(t.Context(), dsn, store.Options{})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestOpen_MissingSchema shows a clear error when the search_path names no schema.
func TestOpen_MissingSchema(t *testing.T) {
	dsn, err := pgtest.WithSearchPath(pgtest.ServerDSN(t), "tandem_t_does_not_exist")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), dsn, store.Options{})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "names no existing schema") {
		t.Fatalf("open = %v, want EINVALID about the schema", err)
	}
}

// TestInTx_ConnectionLostBeforeCommit kills the transaction's own backend in its first
// attempt: nothing was committed, so the transaction runs again on a new connection and
// succeeds, even for a save without an idempotency key.
func TestInTx_ConnectionLostBeforeCommit(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	attempts := 0
	err := db.inTx(t.Context(), "test", false, func(tx pgx.Tx) error {
		attempts++
		if attempts == 1 {
			_, err := tx.Exec(t.Context(), "SELECT pg_terminate_backend(pg_backend_pid())")
			return err
		}
		_, err := tx.Exec(t.Context(), "UPDATE schema_migrations SET applied_at = applied_at")
		return err
	})
	if err != nil || attempts != 2 {
		t.Fatalf("inTx = %v after %d attempts, want success on the second", err, attempts)
	}
}

// TestRelativeSave_LeaseGrantedWhileWaiting: a relative save that waits for the record's row
// lock, while a lease on the record is granted and committed, must see that lease once it has
// the lock, as the full save's check after its locking read does: ELEASE, nothing written. A
// lease check in the UPDATE's own snapshot, taken before the wait, would miss it.
func TestRelativeSave_LeaseGrantedWhileWaiting(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	admin := mustAdmin(t)
	p := mustCreateProduct(t, db, "WAIT")
	holder, err := db.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(context.Background())
	if _, err := holder.Exec(t.Context(), "SELECT 1 FROM products WHERE id = $1 FOR UPDATE", p.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.UpdateRecord(actx(t, worker), store.KindProduct, p.ID,
			store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: "wait-1"})
		done <- err
	}()
	// The save is waiting once a backend of the store waits for a lock.
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		var waiting int
		if err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, appName(clientAppNamePrefix, db.schema)).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the save returned (%v) while the row was locked", err)
		default:
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the save never waited for the row lock")
		}
	}
	if _, err := db.AcquireLease(actx(t, alice), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID,
		Group: store.GroupEditor, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := holder.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; store.ErrorCode(err) != store.ELEASE {
		t.Fatalf("save after a lease granted while it waited = %v, want ELEASE", err)
	}
	got, err := db.FindRecord(t.Context(), store.KindProduct, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fields["stock"] != int64(0) || got.Version != p.Version {
		t.Errorf("record after the refused save: stock %v, version %d; want 0 and %d", got.Fields["stock"], got.Version, p.Version)
	}
}
