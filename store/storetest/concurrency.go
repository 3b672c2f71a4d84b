package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func concurrency() []suiteTest {
	return []suiteTest{
		{"RelativeAdds", testConcurrentAdds},
		{"VersionRace", testVersionRace},
		{"LockedUpdate", testConcurrentLockedUpdate},
		{"TreeMoves", testConcurrentMoves},
		{"LeaseRace", testLeaseRace},
		{"KeyRace", testKeyRace},
		{"FeedUnderLoad", testFeedUnderLoad},
		{"OptimisticIncrements", testOptimisticIncrements},
		{"SKURace", testSKURace},
		{"MoneyCounterRace", testMoneyCounterRace},
		{"FeedManyWriters", testFeedManyWriters},
		{"DeleteRace", testDeleteRace},
	}
}

// hammer runs fn(g, i) for g in [0, goroutines) and i in [0, each), each goroutine on its own,
// and fails on the first error.
func hammer(t *testing.T, goroutines, each int, fn func(g, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if err := fn(g, i); err != nil {
					errs <- fmt.Errorf("goroutine %d, step %d: %w", g, i, err)
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
}

func testConcurrentAdds(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P") // stock 10
		const goroutines, each = 8, 40
		// Every add carries an idempotency key and is sent twice: applied once, never lost.
		hammer(t, goroutines, each, func(g, i int) error {
			a := actAlice
			if g%2 == 1 {
				a = actWorker
			}
			u := store.Update{Add: map[string]int64{"stock": -1}, IdempotencyKey: fmt.Sprintf("add-%d-%d", g, i)}
			for range 2 {
				if _, err := s.UpdateRecord(actx(t, a), store.KindProduct, p.ID, u); err != nil {
					return err
				}
			}
			return nil
		})
		got := mustFind(t, s, store.KindProduct, p.ID)
		if want := int64(10 - goroutines*each); got.Fields["stock"] != want || got.Version != 1+goroutines*each {
			t.Errorf("stock = %v v%d, want %d v%d", got.Fields["stock"], got.Version, want, 1+goroutines*each)
		}
		hist := mustHistory(t, s, store.KindProduct, p.ID)
		ops := mustOps(t, s, store.KindProduct, p.ID)
		if len(hist) != 1+goroutines/2*each || len(ops) != goroutines/2*each {
			t.Errorf("history %d, ops %d; want %d and %d", len(hist), len(ops), 1+goroutines/2*each, goroutines/2*each)
		}
	})
}

func testVersionRace(t *testing.T, open Opener) {
	t.Run("OneWinnerPerVersion", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		const goroutines, rounds = 6, 15
		for round := range rounds {
			base := mustFind(t, s, store.KindProduct, p.ID).Version
			var wins, conflicts atomic.Int32
			hammer(t, goroutines, 1, func(g, _ int) error {
				a := store.Actor{Name: fmt.Sprintf("user%d", g), Role: store.RoleEditor}
				_, err := s.UpdateRecord(actx(t, a), store.KindProduct, p.ID, store.Update{
					BaseVersion: base, Set: store.Values{"name": fmt.Sprintf("round %d by %d", round, g)},
				})
				var ce *store.ConflictError
				switch {
				case err == nil:
					wins.Add(1)
				case errors.As(err, &ce):
					if ce.Current.Version != base+1 {
						return fmt.Errorf("conflict carries v%d, want v%d", ce.Current.Version, base+1)
					}
					conflicts.Add(1)
				default:
					return err
				}
				return nil
			})
			if wins.Load() != 1 || conflicts.Load() != goroutines-1 {
				t.Fatalf("round %d: %d wins, %d conflicts; want 1 and %d", round, wins.Load(), conflicts.Load(), goroutines-1)
			}
		}
		if got := mustFind(t, s, store.KindProduct, p.ID); got.Version != 1+rounds {
			t.Errorf("version = %d, want %d", got.Version, 1+rounds)
		}
	})
}

func testConcurrentLockedUpdate(t *testing.T, open Opener) {
	t.Run("ReadModifyWrite", func(t *testing.T) {
		s := fresh(t, open)
		d := mustCreateDoc(t, s, "d", nil)
		const goroutines, each = 4, 20
		// An absolute read-modify-write (word_count = read + 1) is exact only when the read
		// and the write happen under one lock.
		hammer(t, goroutines, each, func(int, int) error {
			_, err := s.LockedUpdate(actx(t, actWorker), store.KindDocument, d.ID, func(r *store.Record) (store.Update, error) {
				return store.Update{Set: store.Values{"word_count": r.Fields["word_count"].(int64) + 1}}, nil
			})
			return err
		})
		if got := mustFind(t, s, store.KindDocument, d.ID); got.Fields["word_count"] != int64(goroutines*each) {
			t.Errorf("word_count = %v, want %d", got.Fields["word_count"], goroutines*each)
		}
	})
}

func testConcurrentMoves(t *testing.T, open Opener) {
	t.Run("NoCycle", func(t *testing.T) {
		s := fresh(t, open)
		const rounds = 15
		for round := range rounds {
			// Two trees A ← A1 and B ← B1; one goroutine moves A under B1, the other B under A1.
			// Each move alone is valid; together they would make a cycle. At most one may win.
			a := mustCreateDoc(t, s, fmt.Sprintf("A%d", round), nil)
			a1 := mustCreateDoc(t, s, fmt.Sprintf("A%d.1", round), &a.ID)
			b := mustCreateDoc(t, s, fmt.Sprintf("B%d", round), nil)
			b1 := mustCreateDoc(t, s, fmt.Sprintf("B%d.1", round), &b.ID)
			moves := [][2]int64{{a.ID, b1.ID}, {b.ID, a1.ID}}
			var won atomic.Int32
			hammer(t, 2, 1, func(g, _ int) error {
				_, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, moves[g][0], store.Move{Parent: &moves[g][1]})
				switch store.ErrorCode(err) {
				case "":
					won.Add(1)
				case store.EINVALID:
				default:
					return err
				}
				return nil
			})
			if won.Load() != 1 {
				t.Fatalf("round %d: %d moves won, want exactly 1", round, won.Load())
			}
			for _, id := range []int64{a.ID, a1.ID, b.ID, b1.ID} {
				requireAcyclic(t, s, id)
			}
		}
	})
}

// requireAcyclic walks up from id and fails if it meets a document twice.
func requireAcyclic(t *testing.T, s store.Store, id int64) {
	t.Helper()
	var seen []int64
	for cur := id; ; {
		if slices.Contains(seen, cur) {
			t.Fatalf("cycle through %d: %v", cur, append(seen, cur))
		}
		seen = append(seen, cur)
		p, ok := mustFind(t, s, store.KindDocument, cur).Fields["parent_id"].(int64)
		if !ok {
			return
		}
		cur = p
	}
}

func testLeaseRace(t *testing.T, open Opener) {
	t.Run("OneHolder", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		const goroutines = 8
		var granted, held atomic.Int32
		hammer(t, goroutines, 1, func(g, _ int) error {
			a := store.Actor{Name: fmt.Sprintf("user%d", g), Role: store.RoleEditor}
			_, err := s.AcquireLease(actx(t, a), store.LeaseRequest{Kind: store.KindProduct, RecordID: p.ID, Group: store.GroupEditor, TTL: time.Minute})
			switch store.ErrorCode(err) {
			case "":
				granted.Add(1)
			case store.ELEASE:
				held.Add(1)
			default:
				return err
			}
			return nil
		})
		if granted.Load() != 1 || held.Load() != goroutines-1 {
			t.Errorf("%d granted, %d refused; want 1 and %d", granted.Load(), held.Load(), goroutines-1)
		}
	})
}

func testKeyRace(t *testing.T, open Opener) {
	t.Run("OneClaim", func(t *testing.T) {
		s := fresh(t, open)
		const goroutines = 8
		var claimed, busy atomic.Int32
		hammer(t, goroutines, 1, func(g, _ int) error {
			a := store.Actor{Name: fmt.Sprintf("worker%d", g), Role: store.RoleSystem}
			c, err := s.ClaimKey(actx(t, a), store.ScopeJob, "job", "h", time.Minute)
			switch {
			case err == nil && c.Claimed:
				claimed.Add(1)
			case store.ErrorCode(err) == store.EBUSY:
				busy.Add(1)
			default:
				return fmt.Errorf("claim = %+v, %v", c, err)
			}
			return nil
		})
		if claimed.Load() != 1 || busy.Load() != goroutines-1 {
			t.Errorf("%d claimed, %d busy; want 1 and %d", claimed.Load(), busy.Load(), goroutines-1)
		}
	})
}

func testFeedUnderLoad(t *testing.T, open Opener) {
	t.Run("EveryChangeInOrder", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		from := mustLastChangeID(t, s)
		ch, err := s.Subscribe(t.Context(), from)
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		const goroutines, each = 4, 25
		hammer(t, goroutines, each, func(g, _ int) error {
			a := store.Actor{Name: fmt.Sprintf("user%d", g), Role: store.RoleEditor}
			_, err := s.UpdateRecord(actx(t, a), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
			return err
		})
		want := mustChanges(t, s, from)
		if len(want) != goroutines*each {
			t.Fatalf("change log has %d entries, want %d", len(want), goroutines*each)
		}
		var last int64
		for i, w := range want {
			got := mustReceive(t, ch)
			if got.ID != w.ID || got.ID <= last {
				t.Fatalf("change %d from the feed has id %d, want %d (after %d)", i, got.ID, w.ID, last)
			}
			last = got.ID
		}
		// Versions in commit order are 2, 3, ...: the feed order is the commit order.
		for i, w := range want {
			if w.Version != int64(i+2) {
				t.Fatalf("change %d has version %d, want %d", i, w.Version, i+2)
			}
		}
	})
}

func testSKURace(t *testing.T, open Opener) {
	t.Run("OneWinnerPerKey", func(t *testing.T) {
		s := fresh(t, open)
		const rounds, goroutines = 10, 6
		for round := range rounds {
			// Six spellings of one sku, created at the same moment: the unique key lets one in.
			spellings := []string{"RACE-%d", "race-%d", " RACE-%d ", "Race-%d\u00a0", "\u200bRACE-%d", "ＲＡＣＥ-%d"}
			var won atomic.Int32
			hammer(t, goroutines, 1, func(g, _ int) error {
				_, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{
					"sku": fmt.Sprintf(spellings[g], round), "name": fmt.Sprint("racer ", g)})
				switch store.ErrorCode(err) {
				case "":
					won.Add(1)
				case store.EINVALID:
					if !strings.Contains(err.Error(), "already exists") {
						return err
					}
				default:
					return err
				}
				return nil
			})
			if won.Load() != 1 {
				t.Fatalf("round %d: %d creates of one sku won, want 1", round, won.Load())
			}
		}
		if n, err := s.CountRecords(t.Context(), store.KindProduct); err != nil || n != rounds {
			t.Errorf("products = %d, %v; want %d", n, err, rounds)
		}
	})
}

func testMoneyCounterRace(t *testing.T, open Opener) {
	t.Run("NeverBelowZero", func(t *testing.T) {
		// price as a counter: 8 goroutines take 1.00 off a price of 20.00, 40 times in all.
		// Exactly 20 succeed, the rest are refused, and the price ends at 0.00, never below:
		// the check reads the price in the transaction that writes it.
		reg := customRegistry(t, map[string]string{
			"price": "{name: price, type: money, owner: shared, rule: counter}",
		})
		s := freshWith(t, open, store.Options{Registry: reg})
		p, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": "M", "name": "m", "price": int64(2000)})
		if err != nil {
			t.Fatal(err)
		}
		const goroutines, each = 8, 5
		var ok, refused atomic.Int32
		hammer(t, goroutines, each, func(int, int) error {
			_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"price": -100}})
			switch store.ErrorCode(err) {
			case "":
				ok.Add(1)
			case store.EINVALID:
				refused.Add(1)
			default:
				return err
			}
			return nil
		})
		got := mustFind(t, s, store.KindProduct, p.ID)
		if ok.Load() != 20 || refused.Load() != goroutines*each-20 || got.Fields["price"] != int64(0) || got.Version != 21 {
			t.Errorf("%d adds, %d refused; price %v v%d; want 20, %d, 0 v21", ok.Load(), refused.Load(), got.Fields["price"], got.Version, goroutines*each-20)
		}
	})
}

func testOptimisticIncrements(t *testing.T, open Opener) {
	t.Run("NoneLost", func(t *testing.T) {
		// Read the price, write price+1 at the version read, retry on a conflict: every
		// increment lands. A stale write whose value equals what another writer just wrote
		// must be a conflict, not "no change", or the increment it stands for is lost.
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P") // price 2999
		const goroutines, each = 4, 25
		hammer(t, goroutines, each, func(int, int) error {
			for attempt := 0; ; attempt++ {
				r, err := s.FindRecord(t.Context(), store.KindProduct, p.ID)
				if err != nil {
					return err
				}
				_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{
					BaseVersion: r.Version, Set: store.Values{"price": r.Fields["price"].(int64) + 1}})
				var ce *store.ConflictError
				switch {
				case err == nil:
					return nil
				case errors.As(err, &ce) && attempt < 1000:
				default:
					return err
				}
			}
		})
		got := mustFind(t, s, store.KindProduct, p.ID)
		if want := int64(2999 + goroutines*each); got.Fields["price"] != want || got.Version != 1+goroutines*each {
			t.Errorf("price = %v v%d, want %d v%d", got.Fields["price"], got.Version, want, 1+goroutines*each)
		}
	})
}
