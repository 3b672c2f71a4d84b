// Package live keeps a working copy in step with its source in the background: every local
// save is pushed as soon as the source answers, and the source's changes are pulled as its
// change feed tells of them. It runs the same sync as tandem sync (sync.Sync: relative
// changes replayed with their keys, absolute ones merged field by field, collisions queued
// in the copy), so what it does is what a sync does, only sooner; and it relies on the
// copy's outbox for crash safety as a sync does: a sync stopped anywhere loses nothing and
// the next one applies nothing twice. Nothing of it blocks the person's edits, which go to
// the copy only.
package live

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"time"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// Options configure a Syncer.
type Options struct {
	// Open opens the source (it is kept open while it works and closed when a sync fails
	// to reach it, then opened again). Required.
	Open func(ctx context.Context) (store.Store, error)
	// Lock takes the copy's sync lock without waiting: ok false when another sync of the
	// copy holds it (the round is tried again shortly). nil: no lock.
	Lock func() (unlock func(), ok bool, err error)
	// RoundTimeout bounds one sync round (default 30 s): a source that stops answering
	// midway is taken for gone, and the next round continues where the copy's outbox says.
	RoundTimeout time.Duration
	// SlowAfter is how long a round may run before the status says offline (default 3 s);
	// the round goes on, and the status is online again when it ends well.
	SlowAfter time.Duration
	// MinBackoff and MaxBackoff bound the wait before reconnecting after a failure (defaults
	// 250 ms and 15 s); the wait doubles with each failure in a row.
	MinBackoff, MaxBackoff time.Duration
	// Gap is the least time between the end of a round and the start of the next one that a
	// local save asks for (default 20 ms): a save made while the syncer is idle is pushed at
	// once, and a burst of saves goes out in a few rounds instead of one round per save, each
	// of which writes to the copy (acknowledgements, the pull of the source's echo) while
	// the person saves there. The source's changes are pulled without it.
	Gap time.Duration
	// Notify, when set, is called (from the syncer's goroutine) after the status changed.
	Notify func()
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Pushed is a record whose local save is now on the source, at Version.
type Pushed struct {
	Kind    store.Kind
	ID      int64
	Version int64
}

// Status is what the syncer knows of the connection and the copy.
type Status struct {
	Online       bool      // the last round reached the source
	Started      bool      // a round ended (before: the connection is not known yet)
	OfflineSince time.Time // when the source stopped answering (zero while online)
	SyncedAt     time.Time // when the last round that reached the source ended
	Pending      int       // local changes not yet on the source
	Conflicts    int       // conflicts waiting for a person
	Waits        int       // changes held back by leases on the source
	Err          string    // why the last round failed ("" when it did not)
	// PushSeq counts the rounds that pushed something; LastPushed are the records the last
	// of them put on the source (creates, whose ids change, are left out).
	PushSeq    int
	LastPushed []Pushed
}

// Syncer is the background sync of one working copy. Its methods may be called from any
// goroutine.
type Syncer struct {
	wc   store.WorkingCopy
	opts Options

	kick chan struct{}

	mu     gosync.Mutex
	status Status
	src    store.Store
	done   chan struct{}

	// While another sync of the copy holds its lock (another TUI on it), its pushes are
	// told from the copy's outbox: lockedOut says the last round found the lock taken, and
	// othersBefore is the outbox the round before read (nil: none read).
	lockedOut    bool
	othersBefore []store.OutboxEntry

	leaseMu  gosync.Mutex
	leaseSrc store.Store          // LeaseSource's store, opened at its first call
	ended    bool                 // Run is returning: LeaseSource opens nothing more
	tokens   map[recordRef]string // the person's leases on the source (Present)
}

// recordRef names a record.
type recordRef struct {
	kind store.Kind
	id   int64
}

// ErrOffline is LeaseSource's answer while the source does not answer.
var ErrOffline = errors.New("the source does not answer")

// New returns the syncer of wc; Run starts it.
func New(wc store.WorkingCopy, o Options) *Syncer {
	if o.RoundTimeout == 0 {
		o.RoundTimeout = 30 * time.Second
	}
	if o.SlowAfter == 0 {
		o.SlowAfter = 3 * time.Second
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 15 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Gap == 0 {
		o.Gap = 20 * time.Millisecond
	}
	return &Syncer{wc: wc, opts: o, kick: make(chan struct{}, 1), done: make(chan struct{}), tokens: map[recordRef]string{}}
}

// LeaseSource returns the source for taking, renewing, releasing and reading leases, which
// live there and not in the copy. It is opened once and kept apart from the rounds' (a round
// that fails closes its own; a held lease's renewals go on through this one as soon as the
// source answers again), and closed when Run returns. While the last round did not reach
// the source it answers ErrOffline at once, without waiting on the network.
func (s *Syncer) LeaseSource(ctx context.Context) (store.Store, error) {
	if st := s.Status(); !st.Online {
		if st.Err != "" {
			return nil, fmt.Errorf("%w (%s)", ErrOffline, st.Err)
		}
		return nil, ErrOffline
	}
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	if s.ended {
		return nil, ErrOffline
	}
	if s.leaseSrc != nil {
		return s.leaseSrc, nil
	}
	src, err := s.opts.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOffline, err)
	}
	s.leaseSrc = src
	return src, nil
}

// Present makes the pushes of kind id present token, the person's lease on the source's
// record (sync.Options.LeaseToken), until Withdraw.
func (s *Syncer) Present(kind store.Kind, id int64, token string) {
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	s.tokens[recordRef{kind, id}] = token
}

// Withdraw ends Present of token on kind id (another token presented since stays).
func (s *Syncer) Withdraw(kind store.Kind, id int64, token string) {
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	if r := (recordRef{kind, id}); s.tokens[r] == token {
		delete(s.tokens, r)
	}
}

// leaseToken is the token presented for kind id ("" when none).
func (s *Syncer) leaseToken(kind store.Kind, id int64) string {
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	return s.tokens[recordRef{kind, id}]
}

// Status returns the syncer's status now.
func (s *Syncer) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.LastPushed = append([]Pushed(nil), st.LastPushed...)
	return st
}

// Kick asks for a round soon (a local save was made); it never blocks.
func (s *Syncer) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Done is closed when Run has returned.
func (s *Syncer) Done() <-chan struct{} { return s.done }

// Run syncs until ctx ends: a round at once, then one whenever the copy gets a local save
// or the source's feed brings a change, and after a failure again with backoff. It closes
// the source it opened before it returns.
func (s *Syncer) Run(ctx context.Context) {
	defer close(s.done)
	defer s.closeSource()
	defer s.closeLeaseSource()
	local, err := s.wc.Subscribe(ctx, lastID(ctx, s.wc))
	if err != nil {
		local = nil // the periodic retries still push
	}
	var remote <-chan store.Change
	var remoteStop context.CancelFunc
	defer func() {
		if remoteStop != nil {
			remoteStop()
		}
	}()
	failures := 0
	for ctx.Err() == nil {
		began := time.Now()
		ok, moved := s.round(ctx)
		took := time.Since(began)
		if ok {
			failures = 0
			if remote == nil {
				// Follow the source's feed from where it is now: the round just read it up
				// to there.
				if src := s.source(); src != nil {
					rctx, stop := context.WithCancel(ctx)
					if ch, err := src.Subscribe(rctx, lastID(rctx, src)); err == nil {
						remote, remoteStop = ch, stop
					} else {
						stop()
					}
				}
			}
		} else {
			failures++
			if remoteStop != nil {
				remoteStop()
				remote, remoteStop = nil, nil
			}
		}
		var retry <-chan time.Time
		if !ok {
			retry = time.After(s.backoff(failures))
		} else if moved >= busyMoved && s.Status().Pending > 0 {
			// The round stopped at its push limit: the next one is due now (after its
			// rest), whether or not a save or the source's feed asks for it.
			retry = time.After(0)
		} else if s.lockedOut && s.Status().Pending > 0 {
			// Another sync holds the copy: its pushes of the pending saves are told soon.
			retry = time.After(lockedOutPoll)
		} else {
			// A safety net: a change the feed did not tell of is picked up within this.
			retry = time.After(10 * time.Second)
		}
		ended := time.Now()
		due, saved := s.wait(ctx, local, &remote, retry)
		switch {
		case !due:
			return
		case moved >= busyMoved:
			if !s.rest(ctx, local, ended.Add(min(took*restFactor, maxRest))) {
				return
			}
		case saved && !sleep(ctx, s.opts.Gap-time.Since(ended)):
			return
		}
	}
}

// A round that moved busyMoved changes or more (a burst of saves, a script, or the source's
// echo of them) is followed by a rest of restFactor times its own length, up to maxRest,
// while the person keeps saving: the next round starts when the copy has had no save for
// Gap, or when the rest is over. A round costs CPU on both sides (the source's commit of
// each push, on a laptop that runs both; the copy's acknowledgements and pulled records)
// and the copy's write lock; without a rest, at 0 ms to the source, rounds followed one
// another for as long as the saves went on (each push's echo on the source's feed asked
// for the next round at once), and every save of the stream shared two cores with one.
// With it, a stream of saves meets a round a quarter of the time at most. A person's
// occasional saves move a change or two and are pushed at once, as before.
const (
	busyMoved  = 8
	restFactor = 3
	maxRest    = time.Second
)

// rest waits until the copy has had no local save for Gap or until is reached, whichever
// comes first; false when ctx ended first.
func (s *Syncer) rest(ctx context.Context, local <-chan store.Change, until time.Time) bool {
	end := time.NewTimer(time.Until(until))
	defer end.Stop()
	quiet := time.NewTimer(s.opts.Gap)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-end.C:
			return true
		case <-quiet.C:
			return true
		case <-s.kick:
			quiet.Reset(s.opts.Gap)
		case c, ok := <-local:
			if !ok {
				local = nil
				continue
			}
			if c.Event != store.EventPulled {
				quiet.Reset(s.opts.Gap)
			}
		}
	}
}

// sleep waits d (nothing when d <= 0); false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// wait blocks until a round is due (due false: ctx ended); saved says a local save made it
// due, rather than the source's feed or the retry timer.
func (s *Syncer) wait(ctx context.Context, local <-chan store.Change, remote *<-chan store.Change, retry <-chan time.Time) (due, saved bool) {
	for {
		select {
		case <-ctx.Done():
			return false, false
		case <-s.kick:
			return true, true
		case <-retry:
			return true, false
		case c, ok := <-local:
			if !ok {
				local = nil
				continue
			}
			if c.Event == store.EventPulled {
				continue // the syncer's own pull, not a local save
			}
			return true, true
		case _, ok := <-*remote:
			if !ok {
				*remote = nil
			}
			return true, false
		}
	}
}

func (s *Syncer) backoff(failures int) time.Duration {
	d := s.opts.MinBackoff
	for i := 1; i < failures && d < s.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.opts.MaxBackoff)
}

// backgrounder is a copy whose writes can be marked as the syncer's, to give way to the
// person's saves in the same copy (sqlite.DB.InBackground).
type backgrounder interface {
	InBackground(ctx context.Context) context.Context
}

// lockedOutPoll is how often the outbox is read while another sync holds the copy and saves
// are pending, to tell when that sync pushed them.
const lockedOutPoll = 500 * time.Millisecond

// ackBatch and applyBatch bound how much of a round's work one write to the copy does
// (sync.Options): a save made meanwhile waits for at most one such write.
const (
	ackBatch   = 8
	applyBatch = 8
)

// pushLimit bounds the outbox entries one round pushes (sync.Options.PushLimit): under a
// stream of saves each round stays short, and rests after it (busyMoved).
const pushLimit = 64

// round runs one sync; it reports whether the source was reached, and how many changes
// it moved (pushed, pulled or removed).
func (s *Syncer) round(ctx context.Context) (bool, int) {
	if s.opts.Lock != nil {
		unlock, ok, err := s.opts.Lock()
		if err != nil || !ok {
			// Another sync of the copy runs (tandem sync, another TUI): it does the work,
			// and its pushes of this copy's saves are told as this syncer's are.
			s.lockedOut = true
			s.othersPushed(ctx)
			s.setLocal(ctx)
			return true, 0
		}
		defer unlock()
	}
	s.lockedOut, s.othersBefore = false, nil
	src := s.source()
	if src == nil {
		octx, cancel := context.WithTimeout(ctx, s.opts.RoundTimeout)
		var err error
		src, err = s.opts.Open(octx)
		cancel()
		if err != nil {
			s.offline(ctx, err)
			return false, 0
		}
		s.mu.Lock()
		s.src = src
		s.mu.Unlock()
	}
	before, _ := s.wc.Outbox(ctx, 0)
	// A source that stops answering is retried by its store for a while: say it is offline
	// once a round runs longer than SlowAfter, without stopping the round.
	var slowMu gosync.Mutex
	ended := false
	slow := time.AfterFunc(s.opts.SlowAfter, func() {
		slowMu.Lock()
		defer slowMu.Unlock()
		if !ended {
			s.offline(ctx, errors.New("the source does not answer"))
		}
	})
	rctx, cancel := context.WithTimeout(ctx, s.opts.RoundTimeout)
	if b, ok := s.wc.(backgrounder); ok {
		// The round's writes to the copy give way to the person's saves there.
		rctx = b.InBackground(rctx)
	}
	rep, err := tsync.SyncWith(rctx, src, s.wc, tsync.Options{LeaseToken: s.leaseToken, AckBatch: ackBatch, ApplyBatch: applyBatch, Passes: 1, PushLimit: pushLimit})
	cancel()
	slow.Stop()
	slowMu.Lock()
	ended = true
	slowMu.Unlock()
	if ctx.Err() != nil {
		return false, 0
	}
	if err != nil {
		if tsync.Refused(err) {
			// Another store, or a source put back from a backup: nothing moves until a
			// person acts (tandem sync says how); keep saying so.
			s.offline(ctx, fmt.Errorf("sync refused: %w", err))
			return false, 0
		}
		s.closeSource()
		s.offline(ctx, err)
		return false, 0
	}
	pushed := s.pushedSince(ctx, before)
	s.mu.Lock()
	now := s.opts.Now()
	s.status.Online, s.status.Started, s.status.OfflineSince, s.status.Err = true, true, time.Time{}, ""
	s.status.SyncedAt = now
	s.status.Pending, s.status.Conflicts, s.status.Waits = rep.Pending, len(rep.Conflicts), len(rep.Waits)
	if rep.Pushed > 0 {
		s.status.PushSeq++
		s.status.LastPushed = pushed
	}
	s.mu.Unlock()
	s.notify()
	return true, rep.Pushed + rep.Pulled + rep.Removed
}

// othersPushed tells (PushSeq, LastPushed) the saves that another sync of the copy put on
// the source since the last round: those of the outbox read then that are gone from it now.
func (s *Syncer) othersPushed(ctx context.Context) {
	before := s.othersBefore
	now, err := s.wc.Outbox(ctx, 0)
	if err != nil {
		s.othersBefore = nil
		return
	}
	s.othersBefore = now
	pushed := s.pushedSince(ctx, before)
	if len(pushed) == 0 {
		return
	}
	s.mu.Lock()
	s.status.PushSeq++
	s.status.LastPushed = pushed
	s.mu.Unlock()
}

// pushedSince returns the records of the outbox entries before that are no longer in the
// outbox, with the version the copy now has of them (the source's, after the push).
func (s *Syncer) pushedSince(ctx context.Context, before []store.OutboxEntry) []Pushed {
	if len(before) == 0 {
		return nil
	}
	after, err := s.wc.Outbox(ctx, 0)
	if err != nil {
		return nil
	}
	left := map[int64]bool{}
	for _, e := range after {
		left[e.Seq] = true
	}
	// A push that met a collision left its entry for the conflict queue: not on the source.
	conflicted := map[recordRef]bool{}
	if cs, err := s.wc.Conflicts(ctx); err == nil {
		for _, c := range cs {
			conflicted[recordRef{c.Kind, c.ID}] = true
		}
	}
	seen := map[Pushed]bool{}
	var out []Pushed
	for _, e := range before {
		if left[e.Seq] || e.Op == store.CopyCreate || e.Op == store.CopyDelete || conflicted[recordRef{e.Kind, e.ID}] {
			continue
		}
		p := Pushed{Kind: e.Kind, ID: e.ID}
		if seen[p] {
			continue
		}
		seen[p] = true
		if r, err := s.wc.FindRecord(ctx, e.Kind, e.ID); err == nil {
			p.Version = r.Version
		}
		out = append(out, p)
	}
	return out
}

// offline records that the source could not be reached.
func (s *Syncer) offline(ctx context.Context, err error) {
	s.mu.Lock()
	if s.status.Online || s.status.OfflineSince.IsZero() {
		s.status.OfflineSince = s.opts.Now()
	}
	s.status.Online, s.status.Started, s.status.Err = false, true, err.Error()
	s.mu.Unlock()
	s.setLocal(ctx)
}

// setLocal reads the pending and conflict counts from the copy.
func (s *Syncer) setLocal(ctx context.Context) {
	if st, err := s.wc.CopyState(ctx); err == nil {
		s.mu.Lock()
		s.status.Pending, s.status.Conflicts = st.Pending, st.Conflict
		s.mu.Unlock()
	}
	s.notify()
}

func (s *Syncer) notify() {
	if s.opts.Notify != nil {
		s.opts.Notify()
	}
}

func (s *Syncer) source() store.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src
}

func (s *Syncer) closeLeaseSource() {
	s.leaseMu.Lock()
	src := s.leaseSrc
	s.leaseSrc, s.ended = nil, true
	s.leaseMu.Unlock()
	if src != nil {
		_ = src.Close()
	}
}

func (s *Syncer) closeSource() {
	s.mu.Lock()
	src := s.src
	s.src = nil
	s.mu.Unlock()
	if src != nil {
		_ = src.Close()
	}
}

// lastID is the newest change id of st's feed (0 when it cannot be read: the feed then
// starts at the beginning, which only wakes the syncer more than needed).
func lastID(ctx context.Context, st store.Store) int64 {
	id, err := st.LastChangeID(ctx)
	if err != nil {
		return 0
	}
	return id
}
