package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// errGaveUp marks an operation abandoned after the retry limit.
var errGaveUp = errors.New("gave up after the retry limit")

// Writer increments the stock of one product per call, by one strategy.
type Writer interface {
	// Increment adds one to the product's stock and reports how many attempts were retried
	// and how many of them were version conflicts. errGaveUp after maxRetries attempts.
	Increment(ctx context.Context, id int64, maxRetries int) (retries, conflicts int, err error)
	// Close releases the writer's connections.
	Close() error
}

// NewWriter returns a writer for strategy with connections of its own. open opens a tandem
// store on dsn; raw ignores it and opens a plain database connection.
func NewWriter(ctx context.Context, dsn, strategy string, open func(context.Context) (store.Store, error)) (Writer, error) {
	if strategy == "raw" {
		return newRawWriter(ctx, dsn)
	}
	st, err := open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// Keys start with the clock, as tandem's own keys do (UUIDv7), so the store's key index
	// grows at its end; the random part per writer keeps two writers' keys apart (a clock
	// reading alone collided in the same nanosecond, and the second increment was replayed
	// as the first instead of applied: "lost 1" in the report).
	w := &storeWriter{st: st, strategy: strategy, prefix: newKeyPrefix()}
	w.ctx = store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleSystem})
	if strategy == "lease" {
		// The lease strategy is a person's path: lease the editor group, write, release.
		w.ctx = store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleEditor})
	}
	return w, nil
}

// newKeyPrefix returns a writer's random part of its idempotency keys.
func newKeyPrefix() string { return fmt.Sprintf("%08x", rand.Uint32()) }

type storeWriter struct {
	st       store.Store
	strategy string
	ctx      context.Context
	prefix   string // this writer's own part of every idempotency key
	n        int
}

func (w *storeWriter) Close() error { return w.st.Close() }

// nextKey returns the idempotency key of the writer's next increment.
func (w *storeWriter) nextKey() string {
	w.n++
	// Short as well as ordered: the key is stored and indexed with every save.
	return fmt.Sprintf("b%016x-%s-%08x", time.Now().UnixNano(), w.prefix, w.n)
}

func (w *storeWriter) Increment(_ context.Context, id int64, maxRetries int) (int, int, error) {
	ctx := w.ctx
	key := w.nextKey()
	retries, conflicts := 0, 0
	for attempt := 0; ; attempt++ {
		if attempt >= maxRetries {
			return retries, conflicts, errGaveUp
		}
		if attempt > 0 {
			retries++
			backoff(attempt)
		}
		var err error
		switch w.strategy {
		case "relative":
			_, err = w.st.UpdateRecord(ctx, store.KindProduct, id, store.Update{
				Add: map[string]int64{"stock": 1}, IdempotencyKey: key})
		case "optimistic":
			var rec *store.Record
			if rec, err = w.st.FindRecord(ctx, store.KindProduct, id); err == nil {
				_, err = w.st.UpdateRecord(ctx, store.KindProduct, id, store.Update{
					BaseVersion: rec.Version, Set: store.Values{"stock": rec.Fields["stock"].(int64) + 1}})
			}
		case "pessimistic":
			_, err = w.st.LockedUpdate(ctx, store.KindProduct, id, func(r *store.Record) (store.Update, error) {
				return store.Update{BaseVersion: r.Version, Set: store.Values{"stock": r.Fields["stock"].(int64) + 1}}, nil
			})
		case "lease":
			err = w.leased(ctx, id)
		default:
			return 0, 0, store.Errorf(store.EINVALID, "unknown strategy %q", w.strategy)
		}
		switch store.ErrorCode(err) {
		case "":
			return retries, conflicts, nil
		case store.ECONFLICT:
			conflicts++
		case store.ELEASE, store.EBUSY:
		default:
			return retries, conflicts, err
		}
	}
}

// leased takes the editor lease, writes under it with a version check, and releases it.
func (w *storeWriter) leased(ctx context.Context, id int64) error {
	l, err := w.st.AcquireLease(ctx, store.LeaseRequest{Kind: store.KindProduct, RecordID: id,
		Group: store.GroupEditor, TTL: 10 * time.Second})
	if err != nil {
		return err
	}
	defer w.st.ReleaseLease(context.WithoutCancel(ctx), l.Token)
	rec, err := w.st.FindRecord(ctx, store.KindProduct, id)
	if err != nil {
		return err
	}
	_, err = w.st.UpdateRecord(ctx, store.KindProduct, id, store.Update{BaseVersion: rec.Version,
		Set: store.Values{"stock": rec.Fields["stock"].(int64) + 1}, LeaseToken: l.Token})
	return err
}

// backoff sleeps a random time that grows with the attempt, capped at 50 ms, so retrying
// writers spread out instead of colliding again in step.
func backoff(attempt int) {
	ceiling := time.Millisecond << min(attempt, 6)
	time.Sleep(time.Duration(rand.Int64N(int64(min(ceiling, 50*time.Millisecond))) + 1))
}

// rawWriter is the baseline: one plain UPDATE per increment, no tandem code.
type rawWriter struct {
	db   *sql.DB
	conn *sql.Conn // db's one connection, marked as tandem's
	inc  *sql.Stmt // the UPDATE, prepared once on conn as tandem's saves are
	pg   *pgx.Conn
}

func isPostgres(dsn string) bool {
	l := strings.ToLower(dsn)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// newRawWriter opens the baseline's connection, marked as tandem's own (store/outside.go):
// the baseline is the database's cost of a plain UPDATE, not that of another program's,
// which the outside-write triggers log.
func newRawWriter(ctx context.Context, dsn string) (*rawWriter, error) {
	if isPostgres(dsn) {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, store.Errorf(store.EINVALID, "raw connection: %v", err)
		}
		cfg.RuntimeParams[store.PostgresWriterSetting] = "on"
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, store.Errorf(store.EUNAVAILABLE, "raw connection: %v", err)
		}
		return &rawWriter{pg: conn}, nil
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	db, err := sql.Open("sqlite", "file:"+dsn+"?"+q.Encode())
	if err != nil {
		return nil, store.Errorf(store.EUNAVAILABLE, "raw connection: %v", err)
	}
	w := &rawWriter{db: db}
	w.conn, err = db.Conn(ctx) // one connection, kept: the mark is the connection's
	if err == nil {
		err = sqlite.MarkAsTandem(ctx, w.conn)
	}
	if err == nil {
		w.inc, err = w.conn.PrepareContext(ctx, rawIncrement+`?`)
	}
	if err != nil {
		w.Close()
		return nil, store.Errorf(store.EUNAVAILABLE, "raw connection: %v", err)
	}
	return w, nil
}

// rawIncrement is the baseline's write, less its parameter's placeholder.
const rawIncrement = `UPDATE products SET stock = stock + 1 WHERE id = `

func (w *rawWriter) Increment(ctx context.Context, id int64, maxRetries int) (int, int, error) {
	var err error
	if w.pg != nil {
		_, err = w.pg.Exec(ctx, rawIncrement+`$1`, id)
	} else {
		_, err = w.inc.ExecContext(ctx, id)
	}
	return 0, 0, err
}

func (w *rawWriter) Close() error {
	if w.pg != nil {
		return w.pg.Close(context.Background())
	}
	if w.inc != nil {
		w.inc.Close()
	}
	if w.conn != nil {
		w.conn.Close()
	}
	return w.db.Close()
}
