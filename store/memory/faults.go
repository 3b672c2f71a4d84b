package memory

import (
	"time"
)

// SetClock replaces the store's database clock, which decides lease and idempotency-key
// expiry (and stamps records when Options.Now was nil). It resets any Advance offset. now is
// called under the store's lock and must not call the store; nil means time.Now.
func (db *DB) SetClock(now func() time.Time) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if now == nil {
		now = time.Now
	}
	db.clock, db.offset = now, 0
}

// Advance moves the database clock forward by d, so tests can expire leases and keys
// without sleeping.
func (db *DB) Advance(d time.Duration) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.offset += d
}

// Now returns the database clock's time.
func (db *DB) Now() time.Time {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.dbNow()
}

// FailNext makes the next store call, of any method, fail with err before it does anything
// (queued: n calls make the next n calls fail). Registry, Close and the hooks never fail.
// Use it with store.Errorf(store.EUNAVAILABLE, ...) to test how callers handle a database
// that went away. When callers run background calls (a feed, a heartbeat), prefer
// FailNextOn, which cannot be consumed by the wrong call.
func (db *DB) FailNext(err error) {
	db.FailNextOn("", err)
}

// FailNextOn makes the next call of the method named op ("UpdateRecord", "ExtendLease", ...)
// fail with err before it does anything; "" means any method. Queued like FailNext.
func (db *DB) FailNextOn(op string, err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.failNext = append(db.failNext, injectedErr{op, err})
}

// LoseNextReply makes the next UpdateRecord that succeeds commit its write and then return
// err instead of its result, like a connection that dies between commit and reply (queued
// like FailNext). Tests use it to show that a save retried with the same idempotency key is
// applied once.
func (db *DB) LoseNextReply(err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.lostReply = append(db.lostReply, err)
}

// SetFailure installs fn, called before every store call with the method's name
// ("UpdateRecord", "ExtendLease", ...); a non-nil result is returned instead of running the
// call. SetFailure(nil) removes it. fn runs under the store's lock and must not call the store.
func (db *DB) SetFailure(fn func(op string) error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.failure = fn
}

// Calls returns how often the method op ("ExtendLease", ...) was called, counting calls
// that failed, so tests can see that a heartbeat kept trying.
func (db *DB) Calls(op string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.calls[op]
}
