package bench

import (
	"slices"
	"sync"
	"testing"
)

// Two writers making keys at the same moment never share one (a shared key would make the
// second increment a replay of the first: acknowledged, not applied), and each writer's keys
// sort in the order it made them, so a store's key index grows at its end.
func TestNextKey_UniqueAcrossWritersAndTimeOrdered(t *testing.T) {
	const writers, keys = 4, 2000
	made := make([][]string, writers)
	var wg sync.WaitGroup
	for i := range writers {
		w := &storeWriter{prefix: newKeyPrefix()}
		wg.Go(func() {
			for range keys {
				made[i] = append(made[i], w.nextKey())
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, ks := range made {
		if !slices.IsSorted(ks) {
			t.Errorf("writer %d: keys not in the order made", i)
		}
		for _, k := range ks {
			if seen[k] {
				t.Fatalf("key %q made twice", k)
			}
			seen[k] = true
		}
	}
}
