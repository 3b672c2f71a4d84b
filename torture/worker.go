package torture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// WorkerConfig is what one torture worker needs.
type WorkerConfig struct {
	Name     string // user name of the worker, also its key prefix
	Seed     uint64
	Products []int64
	Docs     []int64
	Journal  string // path of the worker's journal file
}

// Work runs one worker's random mix against s until ctx ends: relative adjusts with
// idempotency keys, version-checked read-modify-writes, leased edits, system writes under a
// short database lock, and tree moves. It journals every counted write (see Entry).
func Work(ctx context.Context, s store.Store, cfg WorkerConfig) error {
	j, err := openJournal(cfg.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	w := &worker{s: s, cfg: cfg, j: j, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(time.Now().UnixNano())))}
	w.editor = store.WithActor(ctx, store.Actor{Name: cfg.Name, Role: store.RoleEditor})
	w.system = store.WithActor(ctx, store.Actor{Name: cfg.Name + "-sys", Role: store.RoleSystem})
	for ctx.Err() == nil {
		var err error
		switch p := w.rng.IntN(100); {
		case p < 40:
			err = w.adjust()
		case p < 65:
			err = w.increment(false, 0)
		case p < 73:
			err = w.increment(true, 0)
		case p < 75:
			// A leased edit that takes a while, as a person's does: the lease is renewed
			// several times before the save.
			err = w.increment(true, time.Duration(50+w.rng.IntN(200))*time.Millisecond)
		case p < 88:
			err = w.checksum()
		default:
			err = w.move()
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

type worker struct {
	s              store.Store
	cfg            WorkerConfig
	j              *journal
	rng            *rand.Rand
	editor, system context.Context
	seq            int
}

const attempts = 30

// transient reports whether err leaves the write certainly not applied and worth another try.
func transient(err error) bool {
	switch store.ErrorCode(err) {
	case store.ECONFLICT, store.EBUSY, store.ELEASE:
		return true
	}
	return false
}

// fatal reports whether err means the worker itself is wrong, as opposed to the store being
// unreachable for a moment (which a torture run provokes on purpose).
func fatal(err error) bool {
	switch store.ErrorCode(err) {
	case "", store.ECONFLICT, store.EBUSY, store.ELEASE, store.EUNAVAILABLE, store.ENOTFOUND:
		return false
	}
	return true
}

func (w *worker) pause(attempt int) {
	time.Sleep(time.Duration(w.rng.Int64N(int64(time.Millisecond)<<min(attempt, 5))) + time.Millisecond)
}

func (w *worker) product() int64 { return w.cfg.Products[w.rng.IntN(len(w.cfg.Products))] }

// adjust adds 1..5 to a product's stock with an idempotency key, retrying with the same key
// after any error: the key makes a retry of an applied change a replay.
func (w *worker) adjust() error {
	w.seq++
	id, key, delta := w.product(), fmt.Sprintf("%s-%d", w.cfg.Name, w.seq), int64(1+w.rng.IntN(5))
	if err := w.j.write(Entry{Op: "adjust", State: "try", ID: id, Key: key, Delta: delta}); err != nil {
		return err
	}
	for a := range attempts {
		_, err := w.s.UpdateRecord(w.editor, store.KindProduct, id, store.Update{
			Add: map[string]int64{"stock": delta}, IdempotencyKey: key})
		if err == nil {
			return w.j.write(Entry{Op: "adjust", State: "ok", ID: id, Key: key, Delta: delta})
		}
		if fatal(err) {
			return fmt.Errorf("adjust product %d: %w", id, err)
		}
		w.pause(a)
	}
	return nil
}

// increment raises a product's price by one cent with a version-checked read-modify-write,
// optionally under an editor lease held for hold before the save. A store that dropped the
// version check would lose some of these increments, and the price check would catch it.
func (w *worker) increment(leased bool, hold time.Duration) error {
	id := w.product()
	if err := w.j.write(Entry{Op: "inc", State: "try", ID: id}); err != nil {
		return err
	}
	for a := range attempts {
		err := w.incrementOnce(id, leased, hold)
		if err == nil {
			return w.j.write(Entry{Op: "inc", State: "ok", ID: id})
		}
		if !transient(err) {
			// Unreachable, or cut off mid-commit: the increment may or may not have landed,
			// and without a key a retry could apply it twice. Leave the "try" alone.
			if fatal(err) {
				return fmt.Errorf("increment product %d: %w", id, err)
			}
			return nil
		}
		w.pause(a)
	}
	return nil
}

func (w *worker) incrementOnce(id int64, leased bool, hold time.Duration) (err error) {
	var token string
	if leased {
		h, aerr := w.acquire(store.KindProduct, id, store.GroupEditor)
		if aerr != nil {
			return aerr
		}
		token = h.token
		defer func() {
			if rerr := w.release(h); err == nil {
				err = rerr
			}
		}()
		if err = w.hold(h, hold); err != nil {
			return err
		}
	}
	rec, err := w.s.FindRecord(w.editor, store.KindProduct, id)
	if err != nil {
		return err
	}
	_, err = w.s.UpdateRecord(w.editor, store.KindProduct, id, store.Update{
		BaseVersion: rec.Version,
		Set: store.Values{
			"price":       rec.Fields["price"].(int64) + 1,
			"description": fmt.Sprintf("touched by %s at v%d", w.cfg.Name, rec.Version),
		},
		LeaseToken: token,
	})
	return err
}

// leaseTTL is the TTL of the workers' leases: the shortest the store allows, so that a killed
// holder's lease frees its record soon.
const leaseTTL = store.MinLeaseTTL

// renewEvery is how often a holder renews. It is more often than the usual half of the TTL
// so that the journals hold many renewals for the lease check to judge.
const renewEvery = 100 * time.Millisecond

// heldLease is a lease as its holder knows it.
type heldLease struct {
	kind  store.Kind
	id    int64
	group string
	fence int64
	token string
}

// now is the holder's clock as the lease journal records it: wall-clock Unix nanoseconds,
// which every writer process on the machine reads alike.
func now() int64 { return time.Now().UnixNano() }

func (w *worker) leaseEntry(h *heldLease, state string) Entry {
	return Entry{Op: "lease", State: state, Holder: w.cfg.Name, Kind: h.kind, ID: h.id, Group: h.group, Fence: h.fence}
}

// acquire takes a lease and journals it once the store has granted it.
func (w *worker) acquire(kind store.Kind, id int64, group string) (*heldLease, error) {
	sent := now()
	l, err := w.s.AcquireLease(w.editor, store.LeaseRequest{Kind: kind, RecordID: id, Group: group, TTL: leaseTTL})
	if err != nil {
		return nil, err
	}
	h := &heldLease{kind: kind, id: id, group: group, fence: l.Fence, token: l.Token}
	e := w.leaseEntry(h, "acquired")
	e.TTL, e.Sent, e.At = leaseTTL, sent, now()
	return h, w.j.write(e)
}

// renew extends the lease and journals the outcome: "renewed", or "lost" when the store
// says the lease is gone (an error that only says the store is out of reach is no news:
// the lease stays believed until its last grant or renewal runs out).
func (w *worker) renew(h *heldLease) error {
	sent := now()
	l, err := w.s.ExtendLease(w.editor, h.token, leaseTTL)
	if err == nil && l.Fence != h.fence {
		err = &store.LeaseError{Lease: *l, Lost: true, Reason: fmt.Sprintf("granted again (fence %d, ours %d)", l.Fence, h.fence)}
	}
	switch {
	case err == nil:
		e := w.leaseEntry(h, "renewed")
		e.TTL, e.Sent, e.At = leaseTTL, sent, now()
		return w.j.write(e)
	case store.ErrorCode(err) == store.ELEASE:
		e := w.leaseEntry(h, "lost")
		e.Sent, e.At = sent, now()
		if jerr := w.j.write(e); jerr != nil {
			return jerr
		}
	}
	return err
}

// hold keeps the lease for d, renewing it every renewEvery, and renews it once more at the
// end so that even a lease held for no time has a renewal in the journal.
func (w *worker) hold(h *heldLease, d time.Duration) error {
	for {
		step := min(d, renewEvery)
		if step > 0 {
			select {
			case <-w.editor.Done():
				return w.editor.Err()
			case <-time.After(step):
			}
		}
		d -= step
		if err := w.renew(h); err != nil {
			return err
		}
		if d <= 0 {
			return nil
		}
	}
}

// release journals that the holder lets go of the lease, then releases it. A release the
// store does not receive leaves the lease to expire, which is no harm to anyone.
func (w *worker) release(h *heldLease) error {
	e := w.leaseEntry(h, "released")
	e.At = now()
	if err := w.j.write(e); err != nil {
		return err
	}
	_, _ = w.s.ReleaseLease(context.WithoutCancel(w.editor), h.token)
	return nil
}

// checksum is a worker's job: claim a job key for the record's current version, recompute
// the checksum under a short database lock, complete the key. A writer killed in between
// leaves the key PENDING, which must become claimable again after its short lifetime.
func (w *worker) checksum() error {
	id := w.product()
	rec, err := w.s.FindRecord(w.system, store.KindProduct, id)
	if err != nil {
		return w.tolerate("checksum", id, err)
	}
	key := fmt.Sprintf("checksum:product:%d:v%d", id, rec.Version)
	claim, err := w.s.ClaimKey(w.system, store.ScopeJob, key, key, 2*time.Second)
	if err != nil || !claim.Claimed {
		return w.tolerate("claim job", id, err)
	}
	if err := w.j.write(Entry{Op: "job", State: "try", ID: id, Key: key}); err != nil {
		return err
	}
	for a := range attempts {
		_, err = w.s.LockedUpdate(w.system, store.KindProduct, id, func(r *store.Record) (store.Update, error) {
			sum := sha256.Sum256(fmt.Appendf(nil, "%v|%v|%v", r.Fields["name"], r.Fields["description"], r.Fields["price"]))
			c := hex.EncodeToString(sum[:8])
			if r.Fields["checksum"] == c {
				return store.Update{}, nil
			}
			return store.Update{BaseVersion: r.Version, Set: store.Values{"checksum": c}}, nil
		})
		if err == nil || !transient(err) {
			break
		}
		w.pause(a)
	}
	if err != nil {
		_ = w.s.FailKey(w.system, store.ScopeJob, key)
		return w.tolerate("checksum", id, err)
	}
	return w.tolerate("complete job", id, w.s.CompleteKey(w.system, store.ScopeJob, key, nil, time.Hour))
}

// tolerate returns nil for the errors a torture run provokes on purpose (conflicts, busy,
// leases, cut connections) and the error itself, with context, for anything else.
func (w *worker) tolerate(what string, id int64, err error) error {
	if err == nil || !fatal(err) {
		return nil
	}
	return fmt.Errorf("%s product %d: %w", what, id, err)
}

// move puts a random document under another random document or at the root. Moves that
// would make a cycle or a tree too deep are refused by the store; that is expected.
func (w *worker) move() error {
	docs := w.cfg.Docs
	id := docs[w.rng.IntN(len(docs))]
	var parent *int64
	if w.rng.IntN(4) > 0 {
		p := docs[w.rng.IntN(len(docs))]
		parent = &p
	}
	_, err := w.s.MoveRecord(w.editor, store.KindDocument, id, store.Move{Parent: parent})
	if err != nil && store.ErrorCode(err) != store.EINVALID && fatal(err) {
		return fmt.Errorf("move document %d: %w", id, err)
	}
	return nil
}
