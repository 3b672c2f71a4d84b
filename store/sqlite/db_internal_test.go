package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
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
