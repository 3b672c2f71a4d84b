package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestCLI_AdjustConcurrent runs 4 OS processes at once, each doing "adjust product ID stock
// -1" one after the other (10 each, 60 under TANDEM_LONG_TESTS), and checks that every
// decrement landed. (250 each took 100 s of CI's quiet run per store, in process start-up: the
// store's queueing shows in the first few dozen; torture and the contract suite go further.)
func TestCLI_AdjustConcurrent(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			const procs, start = 4, 1500
			each := 10
			if longTests() {
				each = 60
			}
			p := mustCreate(t, dsn, "product", "sku=HOT-1", "name=Hot row", fmt.Sprintf("stock=%d", start))
			id := fmt.Sprint(p.ID)

			var wg sync.WaitGroup
			errs := make(chan string, procs*each)
			for w := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						cmd := tandemCmd(dsn, "adjust", "product", id, "stock", "-1")
						if out, err := cmd.CombinedOutput(); err != nil {
							errs <- fmt.Sprintf("worker %d, adjust %d: %v: %s", w, i, err, out)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			failed := 0
			for e := range errs {
				if failed++; failed <= 5 {
					t.Error(e)
				}
			}
			if failed > 0 {
				t.Fatalf("%d of %d adjusts failed", failed, procs*each)
			}
			got := mustGet(t, dsn, "product", p.ID)
			if want := float64(start - procs*each); got.Fields["stock"] != want {
				t.Errorf("stock = %v, want %v", got.Fields["stock"], want)
			}
			if want := int64(1 + procs*each); got.Version != want {
				t.Errorf("version = %d, want %d (one per adjust)", got.Version, want)
			}
		})
	}
}

// TestCLI_AdjustIdempotent shows that an adjust with a key applies once, however often it
// is sent, and that the same key with another delta is refused.
func TestCLI_AdjustIdempotent(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=IDEM-1", "name=Idempotent", "stock=100")
			id := fmt.Sprint(p.ID)
			mustTandem(t, dsn, "adjust", "product", id, "stock", "-5", "--key", "order-77")
			out := mustTandem(t, dsn, "adjust", "product", id, "stock", "-5", "--key", "order-77")
			if !strings.Contains(out, "already applied") {
				t.Errorf("second adjust with the same key: %q, want it to say it was already applied", out)
			}
			got := mustGet(t, dsn, "product", p.ID)
			if got.Fields["stock"] != float64(95) || got.Version != 2 {
				t.Fatalf("after two adjusts with one key: stock %v version %d, want 95 and 2", got.Fields["stock"], got.Version)
			}
			r := tandem(t, dsn, "adjust", "product", id, "stock", "-6", "--key", "order-77")
			if r.code != exitUsage {
				t.Errorf("same key, other delta: exit %d (%s), want %d", r.code, r.stderr, exitUsage)
			}
			if after := mustGet(t, dsn, "product", p.ID); after.Fields["stock"] != float64(95) || after.Version != 2 {
				t.Errorf("refused adjust changed the record: stock %v version %d", after.Fields["stock"], after.Version)
			}
		})
	}
}

// TestCLI_PriceNeverNegative: with a registry that makes price a counter, adjust cannot take
// it below zero; create and set cannot either.
func TestCLI_PriceNeverNegative(t *testing.T) {
	fields := writeFields(t, "{name: price,        type: money,  owner: editor, rule: scalar}",
		"{name: price,        type: money,  owner: editor, rule: counter}")
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=PRICE-1", "name=Priced", "price=5.00")
			id := fmt.Sprint(p.ID)
			r := tandem(t, dsn, "--fields", fields, "adjust", "product", id, "price", "-5.01")
			wantExit(t, "adjust price below zero", r, exitUsage, "product.price: 5.00 - 5.01 would be -0.01, and an amount of money cannot be negative")
			mustTandem(t, dsn, "--fields", fields, "adjust", "product", id, "price", "-5.00")
			if got := mustGet(t, dsn, "product", p.ID); got.Fields["price"] != "0.00" || got.Version != 2 {
				t.Errorf("price = %v v%d, want 0.00 v2", got.Fields["price"], got.Version)
			}
			wantExit(t, "create with a negative price", tandem(t, dsn, "create", "product", "sku=NEG", "name=n", "price=-1"), exitUsage, "negative")
			wantExit(t, "set a negative price", tandem(t, dsn, "set", "product", id, "price=-1", "--expect-version", "2"), exitUsage, "negative")
		})
	}
}

// TestCLI_RetryAfterLeaseTakenOver: an adjust (and a set) with --key and --lease, applied
// once; the lease is released and taken by someone else; the same command again exits 0 and
// says it was already applied (it used to exit 4, "taken over", and a script believed its
// change was lost).
func TestCLI_RetryAfterLeaseTakenOver(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=KEY-1", "name=Keyed", "stock=10", "price=1.00")
			id := fmt.Sprint(p.ID)
			l := mustLeaseJSON(t, strings.TrimSpace(mustTandem(t, dsn, "--user", "alice", "lease", "acquire", "product", id, "--ttl", "1m")))
			adjust := []string{"--user", "alice", "adjust", "product", id, "stock", "-3", "--key", "K-adjust", "--lease", l.Token}
			set := []string{"--user", "alice", "set", "product", id, "price=2.00", "--expect-version", "2", "--key", "K-set", "--lease", l.Token}
			first := mustTandem(t, dsn, adjust...)
			if !strings.Contains(first, "saved product") {
				t.Fatalf("first adjust: %q", first)
			}
			mustTandem(t, dsn, set...)
			mustTandem(t, dsn, "--user", "alice", "lease", "release", l.Token)
			mustTandem(t, dsn, "--user", "bob", "lease", "acquire", "product", id, "--ttl", "1m")

			for what, args := range map[string][]string{"adjust": adjust, "set": set} {
				r := tandem(t, dsn, args...)
				wantExit(t, "retried "+what, r, 0)
				if !strings.Contains(r.stdout, "already applied") {
					t.Errorf("retried %s says %q, want already applied", what, r.stdout)
				}
			}
			if got := mustGet(t, dsn, "product", p.ID); got.Fields["stock"] != float64(7) || got.Fields["price"] != "2.00" || got.Version != 3 {
				t.Errorf("product = stock %v price %v v%d, want 7, 2.00, v3 (each change once)", got.Fields["stock"], got.Fields["price"], got.Version)
			}
			// The same key with another request is still refused.
			other := append([]string(nil), adjust...)
			other[6] = "-4"
			wantExit(t, "key reused for another delta", tandem(t, dsn, other...), exitUsage, "different request")
		})
	}
}

// TestCLI_CounterOverflow: an adjust past the int64 range is bad input (exit 2) with the same
// message on both stores, and nothing is written.
func TestCLI_CounterOverflow(t *testing.T) {
	const want = "product.stock: 9223372036854775000 + 1000 is out of range (a counter holds -9223372036854775808..9223372036854775807)"
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=BIG-1", "name=Big", "stock=0")
			id := fmt.Sprint(p.ID)
			mustTandem(t, dsn, "adjust", "product", id, "stock", "9223372036854775000")
			r := tandem(t, dsn, "adjust", "product", id, "stock", "1000")
			wantExit(t, "overflowing adjust", r, exitUsage, want)
			var got struct {
				Version int64                      `json:"version"`
				Fields  map[string]json.RawMessage `json:"fields"`
			}
			if err := json.Unmarshal([]byte(mustTandem(t, dsn, "get", "product", id, "--json")), &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Fields["stock"]) != "9223372036854775000" || got.Version != 2 {
				t.Errorf("stock = %s v%d, want 9223372036854775000 v2", got.Fields["stock"], got.Version)
			}
		})
	}
}
