package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/internal/exchange"
)

// importNew is n new products without an id: a first import, which the stores create in
// bulk (store.BulkCreator).
func importNew(n int) string {
	var b strings.Builder
	b.WriteString("kind,sku,name,price,stock,categories\n")
	for i := 1; i <= n; i++ {
		sku, name, price, stock := importNewRow(i)
		fmt.Fprintf(&b, "product,%s,%s,%s,%d,\"a,b\"\n", sku, name, price, stock)
	}
	return b.String()
}

// importNewRow is what row i (from 1) of importNew gives its product.
func importNewRow(i int) (sku, name, price string, stock int) {
	return fmt.Sprintf("NEW-%d", i), fmt.Sprintf("New %d", i), fmt.Sprintf("%d.25", i%1000), i % 50
}

// importNewState is productState of a store where importNew(n) was imported once: each
// product as one import creates it. A real import of a sample of the rows, sampled (the
// first, the last, those whose price and stock wrap, and some at random), gives every other
// field; each sampled product must come out as this state says, so that the state built here
// is the one an import leaves, at the cost of importing a few dozen rows instead of n.
func importNewState(t *testing.T, ref string, n int, sampled []int) map[string]string {
	t.Helper()
	var b strings.Builder
	b.WriteString("kind,sku,name,price,stock,categories\n")
	for _, i := range sampled {
		sku, name, price, stock := importNewRow(i)
		fmt.Fprintf(&b, "product,%s,%s,%s,%d,\"a,b\"\n", sku, name, price, stock)
	}
	mustTandem(t, ref, "import", writeFile(t, "sample.csv", b.String()))
	var recs []record
	if err := json.Unmarshal([]byte(mustInProcess(t, ref, "list", "products", "--json")), &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(sampled) || recs[0].Version != 1 {
		t.Fatalf("sample import: %d products (first at version %d), want %d at version 1", len(recs), recs[0].Version, len(sampled))
	}
	fields := recs[0].Fields
	want := make(map[string]string, n)
	for i := 1; i <= n; i++ {
		sku, name, price, stock := importNewRow(i)
		fields["sku"], fields["name"], fields["price"], fields["stock"] = sku, name, price, float64(stock)
		b, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		want[sku] = "v1 " + string(b)
	}
	for sku, got := range productState(t, ref) {
		if want[sku] != got {
			t.Fatalf("sample import: %s is %s, want %s", sku, got, want[sku])
		}
	}
	return want
}

// TestCLI_ImportKilledCreates: a first import of new products (the bulk create path),
// SIGKILLed at random points, then run again to its end: every row applied once (each
// product once, as one uninterrupted import leaves them), and the last run's report says
// which rows the killed runs had applied ("imported before") and creates the others. 5,000
// rows and 3 kills in a plain go test; 200,000 rows and 20 kills under TANDEM_LONG_TESTS.
// What one uninterrupted import leaves is built from the file (importNewState), not by a
// second import of every row.
func TestCLI_ImportKilledCreates(t *testing.T) {
	// Not beside the others: under TANDEM_LONG_TESTS it is the package's longest test, and
	// the parallel tests start in no set order, so that it could start last and run alone at
	// the end. It runs in the sequential part instead, its two backends beside each other.
	// Small batches in the short run: many commits to land a kill between, however fast
	// the bulk path makes a run (5,000 rows in well under a second when quiet).
	n, kills, batch := 5000, 3, "50"
	if longTests() {
		n, kills, batch = 200000, 20, "1000"
	}
	file := writeFile(t, "new.csv", importNew(n))
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			besideOthers(t) // each backend a store of its own, one process at a time
			rng := testRand(t)
			sampled := []int{1, 2, 50, 1000, n - 1, n}
			for range 20 {
				if i := 1 + rng.IntN(n); !slices.Contains(sampled, i) {
					sampled = append(sampled, i)
				}
			}
			wantState := importNewState(t, be.dsn(t), n, sampled)

			got := be.dsn(t)
			// Kills land at random points up to window after the start: a run that
			// finished before its kill narrows the window to most of its length; until a
			// kill has landed after the first rows committed, a kill that found none
			// committed widens it.
			window, killed, midway := 2*time.Second, 0, false
			for i := 0; killed < kills && i < 10*kills; i++ {
				cmd := tandemCmd(got, "import", file, "--batch", batch)
				start := time.Now()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(rng.Int64N(int64(window))) + time.Millisecond)
				if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
					t.Fatal(err)
				}
				if err := cmd.Wait(); err == nil {
					window = max(time.Since(start)*3/4, 2*time.Millisecond)
					continue
				}
				killed++
				if !midway {
					switch c := len(productState(t, got)); {
					case c == 0:
						window = min(window*2, time.Minute)
					case c == n:
						got = be.dsn(t) // every row landed before the kill: again, earlier
						window = max(window/2, 2*time.Millisecond)
						killed--
					default:
						midway = true
					}
				}
			}
			if killed < kills || !midway {
				t.Fatalf("%d runs killed before they finished (want %d), one halfway: %v", killed, kills, midway)
			}
			r := tandem(t, got, "import", file, "--json", "--all")
			if r.code != 0 {
				t.Fatalf("re-run after %d kills: exit %d\n%s\n%s", killed, r.code, r.stdout, r.stderr)
			}
			var rep struct {
				Rows []exchange.Result `json:"rows"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("re-run report: %v\n%s", err, r.stdout)
			}
			before, created := 0, 0
			for _, row := range rep.Rows {
				switch {
				case row.Outcome == exchange.Unchanged && strings.HasPrefix(row.Message, "imported before"):
					before++
				case row.Outcome == exchange.Created:
					created++
				default:
					t.Errorf("re-run row %d: %s %s", row.Row, row.Outcome, row.Message)
				}
			}
			if before == 0 || before+created != n {
				t.Errorf("re-run: %d rows imported before, %d created; want some before and %d in all", before, created, n)
			}
			if g := productState(t, got); !mapsEqual(wantState, g) {
				for k, v := range wantState {
					if g[k] != v {
						t.Errorf("after %d kills, %s: got %s, want %s", killed, k, g[k], v)
						break
					}
				}
				t.Fatalf("after %d kills and a re-run: %d products, want %d", killed, len(g), len(wantState))
			}
			t.Logf("%d runs killed, then finished: %d rows imported before, %d created by the re-run", killed, before, created)
		})
	}
}
