package torture

import (
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// leaseLog builds lease journal entries on product 1's editor group; times are milliseconds.
type leaseLog []Entry

const ttlMS = 1000

func (l leaseLog) acquired(holder string, fence, sent, at int64) leaseLog {
	return append(l, Entry{Op: "lease", State: "acquired", Holder: holder, Kind: store.KindProduct, ID: 1,
		Group: store.GroupEditor, Fence: fence, TTL: ttlMS * time.Millisecond, Sent: ms(sent), At: ms(at)})
}

func (l leaseLog) renewed(holder string, fence, sent, at int64) leaseLog {
	return append(l, Entry{Op: "lease", State: "renewed", Holder: holder, Kind: store.KindProduct, ID: 1,
		Group: store.GroupEditor, Fence: fence, TTL: ttlMS * time.Millisecond, Sent: ms(sent), At: ms(at)})
}

func (l leaseLog) ended(state, holder string, fence, at int64) leaseLog {
	return append(l, Entry{Op: "lease", State: state, Holder: holder, Kind: store.KindProduct, ID: 1,
		Group: store.GroupEditor, Fence: fence, At: ms(at)})
}

func ms(n int64) int64 {
	return int64(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(n) * time.Millisecond).UnixNano())
}

// TestCheckLeaseJournals judges hand-made journals: what a correct store lets holders see
// passes, every way of two holders believing at once fails, and the judgement errs on the
// side of the store where the holders' clocks cannot tell.
func TestCheckLeaseJournals(t *testing.T) {
	for _, c := range []struct {
		name    string
		log     leaseLog
		problem string // "" when the check must pass
	}{
		{"released then granted", leaseLog{}.
			acquired("a", 1, 0, 10).renewed("a", 1, 500, 510).ended("released", "a", 1, 700).
			acquired("b", 2, 650, 720).ended("released", "b", 2, 900), ""},
		{"granted while the holder had not yet let go", leaseLog{}.
			acquired("a", 1, 0, 10).ended("released", "a", 1, 700).
			acquired("b", 2, 600, 690).ended("released", "b", 2, 900), "lease overlap"},
		{"killed holder: taken over after its last renewal ran out", leaseLog{}.
			acquired("a", 1, 0, 10).renewed("a", 1, 400, 420).
			acquired("b", 2, 1300, 1401), ""},
		{"killed holder: taken over before its last renewal ran out", leaseLog{}.
			acquired("a", 1, 0, 10).renewed("a", 1, 400, 420).
			acquired("b", 2, 1300, 1390), "lease overlap"},
		{"a renewal that came back lost ends the belief", leaseLog{}.
			acquired("a", 1, 0, 10).ended("lost", "a", 1, 600).
			acquired("b", 2, 550, 610), ""},
		{"granted while the holder still believed, before it learned it was lost", leaseLog{}.
			acquired("a", 1, 0, 10).ended("lost", "a", 1, 600).
			acquired("b", 2, 500, 590), "lease overlap"},
		// The store's expiry counts from its own now, which may be as early as the moment
		// the acquire was sent: a slow answer does not lengthen the lease.
		{"slow acquire: expiry counts from sending", leaseLog{}.
			acquired("a", 1, 0, 300).
			acquired("b", 2, 1050, 1100), ""},
		// SQLite's clock truncates to milliseconds: the lease may run out a millisecond
		// before sent + TTL by the holder's clock.
		{"the store's clock a millisecond behind the holder's", leaseLog{}.
			acquired("a", 1, 0, 10).
			acquired("b", 2, 990, 999), ""},
		{"an acquire whose answer never came is no belief", leaseLog{}.
			ended("released", "a", 1, 700).
			acquired("b", 2, 0, 20), ""},
		{"one fence granted twice", leaseLog{}.
			acquired("a", 3, 0, 10).ended("released", "a", 3, 50).
			acquired("b", 3, 60, 70), "fence 3 was granted twice"},
		{"a lower fence granted after a higher one was let go", leaseLog{}.
			acquired("a", 3, 0, 10).ended("released", "a", 3, 50).
			acquired("b", 2, 60, 70).ended("released", "b", 2, 80), "lease overlap"},
		// b's fence 1 was granted before a's fence 2, by the fences; b's answer came late,
		// but its lease was live (it had not even been released) when a was granted.
		{"the lower fence still believed when the higher was granted", leaseLog{}.
			acquired("a", 2, 0, 30).ended("released", "a", 2, 40).
			acquired("b", 1, 5, 45), "lease overlap"},
		{"fences in order of grant, answers in the other order", leaseLog{}.
			acquired("a", 1, 0, 30).ended("released", "a", 1, 40).
			acquired("b", 2, 5, 45).ended("released", "b", 2, 50), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := checkLeaseJournals(c.log)
			switch {
			case c.problem == "" && !got.OK:
				t.Errorf("check failed on a correct history: %s", got)
			case c.problem != "" && (got.OK || !strings.Contains(got.Detail, c.problem)):
				t.Errorf("check = %s, want a failure naming %q", got, c.problem)
			}
		})
	}
}
