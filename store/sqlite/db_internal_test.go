package sqlite

import (
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestStmtCache_NoPragma: the statement cache prepares statements ahead on another
// connection, which for a PRAGMA that SQLite applies when preparing (defer_foreign_keys)
// would be too early: a PRAGMA is never cached, other statements are.
func TestStmtCache_NoPragma(t *testing.T) {
	pool, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	c := newStmtCache(pool)
	defer c.close()
	for _, q := range []string{"PRAGMA defer_foreign_keys = ON", "  pragma cache_size", "SELECT 1"} {
		c.stmt(q)
	}
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, cached := range map[string]bool{"PRAGMA defer_foreign_keys = ON": false, "  pragma cache_size": false, "SELECT 1": true} {
		if _, ok := c.m[q]; ok != cached {
			t.Errorf("%q cached: %v, want %v", q, ok, cached)
		}
	}
}

// TestFormatTime_AsTimeFormat: formatTime writes what time.Format writes with timeLayout,
// for times of every part: the edges of each field, years of fewer digits and beyond four,
// other zones, and nanoseconds that must be cut, not rounded.
func TestFormatTime_AsTimeFormat(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 12, 2, 7, 8, 9, 1_000_000, time.UTC),
		time.Date(2026, 2, 28, 23, 59, 59, 999_500_000, time.FixedZone("east", 5*3600+1800)),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 15, 12, 0, 0, 0, time.UTC),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		times = append(times, time.Unix(r.Int64N(400*365*86400)-100*365*86400, r.Int64N(1e9)))
	}
	for _, tm := range times {
		if got, want := formatTime(tm), tm.UTC().Format(timeLayout); got != want {
			t.Fatalf("formatTime(%v) = %q, want %q", tm, got, want)
		}
	}
}

// TestMarshalSet_AsJSON: a set's column text is exactly what json.Marshal writes, for
// items that need no escaping and for those that do.
func TestMarshalSet_AsJSON(t *testing.T) {
	sets := [][]string{nil, {}, {""}, {"a"}, {"tools", "garden"}, {"a b", "c-d_e.f"},
		{`quo"te`}, {`back\slash`}, {"<b>&"}, {"tab\there"}, {"ünï"}, {"\u2028"}, {"\xff\xfe"}, {"~", " ", "!"}}
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		set := make([]string, r.IntN(4))
		for i := range set {
			b := make([]byte, r.IntN(6))
			for j := range b {
				b[j] = byte(r.IntN(128))
			}
			set[i] = string(b)
		}
		sets = append(sets, set)
	}
	for _, set := range sets {
		items := set
		if items == nil {
			items = []string{}
		}
		want, _ := json.Marshal(items)
		got, err := marshalSet(set)
		if err != nil || got != string(want) {
			t.Fatalf("marshalSet(%q) = %q (%v), want %q", set, got, err, want)
		}
	}
}

// TestPendingMigrations: a database gets the migrations numbered above its version, whatever
// numbers were left out before them.
func TestPendingMigrations(t *testing.T) {
	ms := []migration{{version: 1}, {version: 2}, {version: 18}, {version: 20}, {version: 21}, {version: 22}}
	for cur, want := range map[int][]int{0: {1, 2, 18, 20, 21, 22}, 2: {18, 20, 21, 22}, 18: {20, 21, 22}, 19: {20, 21, 22}, 20: {21, 22}, 22: nil} {
		var got []int
		for _, m := range pending(ms, cur) {
			got = append(got, m.version)
		}
		if !slices.Equal(got, want) {
			t.Errorf("pending at version %d: %v, want %v", cur, got, want)
		}
	}
}
