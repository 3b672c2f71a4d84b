package torture

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// Check is one invariant and whether it held.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// String formats the check as one line: "PASS name: detail".
func (c Check) String() string {
	verdict := "PASS"
	if !c.OK {
		verdict = "FAIL"
	}
	if c.Detail == "" {
		return fmt.Sprintf("%s %s", verdict, c.Name)
	}
	return fmt.Sprintf("%s %s: %s", verdict, c.Name, c.Detail)
}

// checker accumulates the problems found for one invariant; a few are named, the rest counted.
type checker struct {
	name     string
	problems []string
	checked  int
}

func (c *checker) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

func (c *checker) result(what string) Check {
	if len(c.problems) == 0 {
		return Check{Name: c.name, OK: true, Detail: fmt.Sprintf("%d %s checked", c.checked, what)}
	}
	shown := c.problems[:min(len(c.problems), 3)]
	more := ""
	if n := len(c.problems) - len(shown); n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return Check{Name: c.name, Detail: strings.Join(shown, "; ") + more}
}

func check(ctx context.Context, s store.Store, fx *fixtures, entries []Entry) []Check {
	changes, err := allChanges(ctx, s)
	if err != nil {
		return []Check{{Name: "read the change log", Detail: err.Error()}}
	}
	current := map[int64]*store.Record{}
	for _, id := range fx.products {
		r, err := s.FindRecord(ctx, store.KindProduct, id)
		if err != nil {
			return []Check{{Name: "read the products", Detail: err.Error()}}
		}
		current[id] = r
	}
	docs, err := s.FindRecords(ctx, store.Filter{Kind: store.KindDocument, IDs: fx.docs})
	if err != nil {
		return []Check{{Name: "read the documents", Detail: err.Error()}}
	}
	return []Check{
		checkCounterLog(fx, current, changes),
		checkAdjusts(fx, current, entries),
		checkIncrements(fx, current, entries),
		checkVersions(current, docs, changes),
		checkHistory(ctx, s, changes),
		checkLeases(changes),
		checkLeaseJournals(entries),
		checkKeys(ctx, s, entries),
		checkTree(docs),
	}
}

// allChanges reads the whole change log.
func allChanges(ctx context.Context, s store.Store) ([]store.Change, error) {
	var out []store.Change
	var after int64
	for {
		page, err := s.Changes(ctx, after, 1000)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return out, nil
		}
		out = append(out, page...)
		after = page[len(page)-1].ID
	}
}

// checkCounterLog: every counter equals its start plus the committed deltas in the log.
func checkCounterLog(fx *fixtures, current map[int64]*store.Record, changes []store.Change) Check {
	c := &checker{name: "counters = start + committed deltas in the operation log"}
	sum := map[int64]int64{}
	for _, ch := range changes {
		if ch.Kind == store.KindProduct {
			sum[ch.RecordID] += ch.Deltas["stock"]
		}
	}
	for _, id := range fx.products {
		c.checked++
		got, want := current[id].Fields["stock"].(int64), fx.startStock[id]+sum[id]
		if got != want {
			c.fail("product %d stock is %d, start %d + logged deltas %d = %d", id, got, fx.startStock[id], sum[id], want)
		}
	}
	return c.result("counters")
}

// bounds sums a journal's acknowledged and unacknowledged effects per product.
func bounds(entries []Entry, op string) (acked, maybe map[int64]int64, n int) {
	acked, maybe = map[int64]int64{}, map[int64]int64{}
	type attempt struct {
		id    int64
		delta int64
		ok    bool
	}
	tries := map[string]*attempt{}
	anon := 0
	for _, e := range entries {
		if e.Op != op {
			continue
		}
		key := e.Key
		if key == "" {
			// Increments carry no key: pair each "ok" with a "try" of the same product.
			if e.State == "try" {
				anon++
				key = fmt.Sprintf("#%d", anon)
			} else {
				for k, a := range tries {
					if strings.HasPrefix(k, "#") && a.id == e.ID && !a.ok {
						key = k
						break
					}
				}
			}
		}
		d := e.Delta
		if op == "inc" {
			d = 1
		}
		switch e.State {
		case "try":
			tries[key] = &attempt{id: e.ID, delta: d}
		case "ok":
			if a := tries[key]; a != nil {
				a.ok = true
			}
		}
	}
	for _, a := range tries {
		n++
		if a.ok {
			acked[a.id] += a.delta
		} else {
			maybe[a.id] += a.delta
		}
	}
	return acked, maybe, n
}

// checkAdjusts: no acknowledged relative change was lost, and none was applied twice (the
// applied total never exceeds what was acknowledged plus what was in flight when its writer died).
func checkAdjusts(fx *fixtures, current map[int64]*store.Record, entries []Entry) Check {
	c := &checker{name: "relative changes: none lost, none applied twice"}
	acked, maybe, n := bounds(entries, "adjust")
	c.checked = n
	for _, id := range fx.products {
		applied := current[id].Fields["stock"].(int64) - fx.startStock[id]
		if applied < acked[id] {
			c.fail("product %d: %d acknowledged but only %d applied (lost update)", id, acked[id], applied)
		}
		if applied > acked[id]+maybe[id] {
			c.fail("product %d: %d applied but at most %d sent (applied twice)", id, applied, acked[id]+maybe[id])
		}
	}
	return c.result("idempotent adjusts")
}

// checkIncrements: version-checked read-modify-writes lose nothing.
func checkIncrements(fx *fixtures, current map[int64]*store.Record, entries []Entry) Check {
	c := &checker{name: "version-checked increments: none lost"}
	acked, maybe, n := bounds(entries, "inc")
	c.checked = n
	for _, id := range fx.products {
		applied := current[id].Fields["price"].(int64) - fx.startPrice[id]
		if applied < acked[id] {
			c.fail("product %d: %d increments acknowledged but price rose by %d (lost update)", id, acked[id], applied)
		}
		if applied > acked[id]+maybe[id] {
			c.fail("product %d: price rose by %d but at most %d increments were sent", id, applied, acked[id]+maybe[id])
		}
	}
	return c.result("increments")
}

// checkVersions: each record's writes in the log carry versions 1, 2, … up to its current one.
func checkVersions(current map[int64]*store.Record, docs []*store.Record, changes []store.Change) Check {
	c := &checker{name: "versions are contiguous"}
	type rk struct {
		kind store.Kind
		id   int64
	}
	want := map[rk]int64{}
	for id, r := range current {
		want[rk{store.KindProduct, id}] = r.Version
	}
	for _, d := range docs {
		want[rk{store.KindDocument, d.ID}] = d.Version
	}
	seen := map[rk][]int64{}
	for _, ch := range changes {
		switch ch.Event {
		case store.EventCreated, store.EventSaved, store.EventMoved:
			k := rk{ch.Kind, ch.RecordID}
			if _, ok := want[k]; ok {
				seen[k] = append(seen[k], ch.Version)
			}
		}
	}
	for k, last := range want {
		c.checked++
		vs := seen[k]
		for i, v := range vs {
			if v != int64(i+1) {
				c.fail("%s %d: write %d of the log has version %d, want %d", k.kind, k.id, i+1, v, i+1)
				break
			}
		}
		if int64(len(vs)) != last {
			c.fail("%s %d is at version %d but the log has %d writes", k.kind, k.id, last, len(vs))
		}
	}
	return c.result("records")
}

// checkHistory: every editor save is in history, and no system write is.
func checkHistory(ctx context.Context, s store.Store, changes []store.Change) Check {
	c := &checker{name: "every editor save is in history, no system write is"}
	type rk struct {
		kind store.Kind
		id   int64
	}
	logged := map[rk]map[int64]store.Change{}
	for _, ch := range changes {
		if ch.Event != store.EventCreated && ch.Event != store.EventSaved && ch.Event != store.EventMoved {
			continue
		}
		k := rk{ch.Kind, ch.RecordID}
		if logged[k] == nil {
			logged[k] = map[int64]store.Change{}
		}
		logged[k][ch.Version] = ch
	}
	for k, byVersion := range logged {
		hist, err := s.FindHistory(ctx, k.kind, k.id)
		if err != nil {
			c.fail("%s %d: %v", k.kind, k.id, err)
			continue
		}
		inHistory := map[int64]bool{}
		for _, v := range hist {
			inHistory[v.Version] = true
			if ch, ok := byVersion[v.Version]; ok && ch.Role == store.RoleSystem {
				c.fail("%s %d v%d: a system write by %s has a history version", k.kind, k.id, v.Version, ch.Actor)
			}
		}
		for v, ch := range byVersion {
			c.checked++
			if ch.History && !inHistory[v] {
				c.fail("%s %d v%d: an editor save by %s is missing from history", k.kind, k.id, v, ch.Actor)
			}
			if ch.Role == store.RoleEditor && ch.Event != store.EventMoved && !ch.History {
				c.fail("%s %d v%d: an editor save by %s kept no history", k.kind, k.id, v, ch.Actor)
			}
		}
	}
	return c.result("writes")
}

// checkLeases: on each scope, grants carry strictly increasing fencing numbers and a new grant
// comes only after the previous lease was released or expired, by the store's own log. A store
// that hands out a second live lease may well log it as a takeover of an expired one, so this
// check alone cannot catch it; checkLeaseJournals judges from the holders' side.
func checkLeases(changes []store.Change) Check {
	c := &checker{name: "no two leases on one scope were valid at once"}
	type scope struct {
		kind  store.Kind
		id    int64
		group string
	}
	type state struct {
		fence int64
		open  bool
	}
	st := map[scope]*state{}
	for _, ch := range changes {
		k := scope{ch.Kind, ch.RecordID, ch.Group}
		s := st[k]
		if s == nil {
			s = &state{}
			st[k] = s
		}
		switch ch.Event {
		case store.EventLeaseGranted:
			c.checked++
			if ch.Fence <= s.fence {
				c.fail("%s %d %s: fence %d granted after fence %d", k.kind, k.id, k.group, ch.Fence, s.fence)
			}
			if s.open {
				c.fail("%s %d %s: fence %d granted while fence %d was neither released nor expired", k.kind, k.id, k.group, ch.Fence, s.fence)
			}
			s.fence, s.open = ch.Fence, true
		case store.EventLeaseReleased, store.EventLeaseExpired:
			if ch.Fence == 0 || ch.Fence == s.fence {
				s.open = false
			}
		}
	}
	return c.result("grants")
}

// clockSlack is how far the store's clock may read behind a holder's on the same machine:
// SQLite's now has milliseconds, truncated, PostgreSQL's microseconds.
const clockSlack = 2 * time.Millisecond

// belief is the time one holder believed it held one lease, on its own clock.
type belief struct {
	holder string
	fence  int64
	start  int64 // the acquire returned: the holder holds the lease from here
	end    int64 // the holder stopped relying on it, or it certainly ran out
}

// beliefs rebuilds, from the holders' lease journals, who believed they held which scope
// when. A belief starts when the acquire returned. It ends at the earliest of: the release,
// the renewal that came back "lost", and the last successful grant or renewal plus its TTL,
// counted from when that call was sent. The store sets a lease's expiry from its own now,
// which is never before the call was sent, so a lease granted or renewed that way is valid at
// least until sent + TTL; counting from the return would call a correct takeover just after
// the expiry an overlap. A holder killed without a release believes until its lease runs out.
// An acquire whose answer never reached the holder (killed, connection cut) is no belief.
func beliefs(entries []Entry) map[leaseScope][]*belief {
	// expiry is when a lease granted or renewed by a call sent at sent certainly runs out,
	// less clockSlack: the store's clock may read a little behind the holder's.
	expiry := func(e Entry) int64 { return e.Sent + int64(e.TTL) - int64(clockSlack) }
	type id struct {
		holder string
		scope  leaseScope
		fence  int64
	}
	open := map[id]*belief{}
	out := map[leaseScope][]*belief{}
	for _, e := range entries {
		if e.Op != "lease" {
			continue
		}
		k := id{e.Holder, leaseScope{e.Kind, e.ID, e.Group}, e.Fence}
		b := open[k]
		switch e.State {
		case "acquired":
			if b != nil {
				// The same holder granted the same fence twice: keep both, the fence
				// check names it.
				out[k.scope] = append(out[k.scope], b)
			}
			b = &belief{holder: e.Holder, fence: e.Fence, start: e.At, end: expiry(e)}
			open[k] = b
		case "renewed":
			if b != nil {
				b.end = max(b.end, expiry(e))
			}
		case "released", "lost":
			if b != nil {
				b.end = min(b.end, e.At)
				out[k.scope] = append(out[k.scope], b)
				delete(open, k)
			}
		}
	}
	for k, b := range open {
		out[k.scope] = append(out[k.scope], b)
	}
	return out
}

// leaseScope is one field group of one record: what a lease covers.
type leaseScope struct {
	kind  store.Kind
	id    int64
	group string
}

// checkLeaseJournals: no two holders believed they held one scope at the same time, judged
// from the holders' own journals and clocks rather than from what the store says it did.
//
// A correct store grants a scope's fences in increasing order, each only after the lease
// before it ended. The lease with the lower fence ended no earlier than its holder's belief
// did (see beliefs), and the higher one was granted no later than its acquire returned. So
// with beliefs in fence order, each must start no earlier than every belief before it ended;
// anything else means two holders held the scope at once (or the fences lie about the order
// of the grants, which is as bad), and the check says so. A fence granted twice fails too.
// Where the clocks cannot tell, the check errs on the side of the store.
func checkLeaseJournals(entries []Entry) Check {
	c := &checker{name: "lease holders' journals: no two held one scope at once"}
	byScope := beliefs(entries)
	scopes := make([]leaseScope, 0, len(byScope))
	for k := range byScope {
		scopes = append(scopes, k)
	}
	slices.SortFunc(scopes, func(a, b leaseScope) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.id, b.id), cmp.Compare(a.group, b.group))
	})
	for _, k := range scopes {
		bs := byScope[k]
		slices.SortStableFunc(bs, func(a, b *belief) int { return cmp.Compare(a.fence, b.fence) })
		c.checked += len(bs)
		var last *belief // of the lower fences, the belief that lasted longest
		for i, b := range bs {
			if i > 0 && bs[i-1].fence == b.fence {
				c.fail("lease fence on %s %d (%s): fence %d was granted twice, to %s and to %s",
					k.kind, k.id, k.group, b.fence, bs[i-1].holder, b.holder)
				continue
			}
			if last != nil && b.start < last.end {
				c.fail("lease overlap on %s %d (%s): %s held fence %d from %s until %s, yet %s was granted fence %d at %s, %s before that",
					k.kind, k.id, k.group, last.holder, last.fence, clock(last.start), clock(last.end),
					b.holder, b.fence, clock(b.start), time.Duration(last.end-b.start))
			}
			if last == nil || b.end > last.end {
				last = b
			}
		}
	}
	return c.result("lease grants")
}

// clock formats a journal time for a check's message.
func clock(ns int64) string { return time.Unix(0, ns).Format("15:04:05.000000") }

// checkKeys: no idempotency key is left PENDING past its lifetime: each such key can be taken over.
func checkKeys(ctx context.Context, s store.Store, entries []Entry) Check {
	c := &checker{name: "no idempotency key is stuck PENDING"}
	keys := map[string]bool{}
	for _, e := range entries {
		if e.Op == "job" {
			keys[e.Key] = true
		}
	}
	ectx := store.WithActor(ctx, store.Actor{Name: "torture-check", Role: store.RoleSystem})
	for key := range keys {
		c.checked++
		rec, err := s.FindKey(ectx, store.ScopeJob, key)
		if err != nil {
			c.fail("key %s: %v", key, err)
			continue
		}
		if rec.Status != store.KeyPending {
			continue
		}
		if wait := time.Until(rec.ExpiresAt); wait > 0 {
			if wait > time.Minute {
				c.fail("key %s: PENDING until %s", key, rec.ExpiresAt.Format(time.RFC3339))
				continue
			}
			time.Sleep(wait + 100*time.Millisecond)
		}
		claim, err := s.ClaimKey(ectx, store.ScopeJob, key, rec.RequestHash, time.Second)
		if err != nil || !claim.Claimed {
			c.fail("key %s: stale PENDING could not be taken over: %v", key, err)
			continue
		}
		if err := s.FailKey(ectx, store.ScopeJob, key); err != nil {
			c.fail("key %s: %v", key, err)
		}
	}
	return c.result("job keys")
}

// checkTree: no cycle, and no document deeper than store.MaxDepth.
func checkTree(docs []*store.Record) Check {
	c := &checker{name: "the tree has no cycle and respects the depth limit"}
	parent := map[int64]int64{}
	for _, d := range docs {
		if p, ok := d.Fields["parent_id"].(int64); ok {
			parent[d.ID] = p
		}
	}
	for _, d := range docs {
		c.checked++
		path := []int64{d.ID}
		for id := d.ID; ; {
			p, ok := parent[id]
			if !ok {
				break
			}
			if slices.Contains(path, p) {
				c.fail("cycle through document %d: %v", d.ID, append(path, p))
				break
			}
			path = append(path, p)
			id = p
		}
		if len(path) > store.MaxDepth {
			c.fail("document %d is %d levels deep (max %d)", d.ID, len(path), store.MaxDepth)
		}
	}
	return c.result("documents")
}
