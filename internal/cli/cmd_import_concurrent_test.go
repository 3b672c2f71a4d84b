package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/internal/exchange"
)

// TestCLI_ImportBesideAdjust: an import in batches (--merge) of rows that set the stock and
// name of products that `tandem adjust` processes change at the same time (stock += 1) loses
// nothing: every row lands (merged with the adjusts before it) or is reported as a
// conflict, and each product's stock is its base, plus the row's change when the row landed
// (+100: never what the adjusts made it, which a merge would take as the same change made
// twice), plus every adjust that succeeded.
func TestCLI_ImportBesideAdjust(t *testing.T) {
	besideOthers(t)
	n, adjusts := 60, 30
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.dsn(t)
			mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(n))) // product i: stock i, version 1
			var file strings.Builder
			file.WriteString("kind,id,version,name,stock\n")
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&file, "product,%d,1,Imported %d,%d\n", i, i, i+100)
			}
			path := writeFile(t, "rows.csv", file.String())

			imp := tandemCmd(dsn, "import", path, "--merge", "--batch", "5", "--json")
			var out, errb bytes.Buffer
			imp.Stdout, imp.Stderr = &out, &errb
			if err := imp.Start(); err != nil {
				t.Fatal(err)
			}
			adjusted := map[int]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			rng := testRand(t)
			ids := make([]int, adjusts)
			for k := range ids {
				ids[k] = 1 + rng.IntN(n)
			}
			for w := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := w; k < adjusts; k += 3 {
						r := tandem(t, dsn, "adjust", "product", strconv.Itoa(ids[k]), "stock", "1")
						if r.code != 0 {
							t.Errorf("adjust product %d: exit %d: %s", ids[k], r.code, r.stderr)
							continue
						}
						mu.Lock()
						adjusted[ids[k]]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			err := imp.Wait()
			if code := imp.ProcessState.ExitCode(); code != 0 && code != 3 {
				t.Fatalf("import: %v (exit %d): %s", err, code, errb.String())
			}
			var rep struct {
				Rows []exchange.Result `json:"rows"`
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("import report: %v\n%s", err, out.String())
			}
			if len(rep.Rows) != n {
				t.Fatalf("%d rows reported, want %d", len(rep.Rows), n)
			}
			for _, row := range rep.Rows {
				i := int(row.ID)
				want := i + adjusted[i]
				switch row.Outcome {
				case exchange.Updated:
					want += 100
				case exchange.Conflict:
				default:
					t.Errorf("product %d: %s %s", i, row.Outcome, row.Message)
					continue
				}
				got := mustGet(t, dsn, "product", row.ID)
				if fmt.Sprint(got.Fields["stock"]) != strconv.Itoa(want) {
					t.Errorf("product %d (%s, %d adjusts): stock %v, want %d", i, row.Outcome, adjusted[i], got.Fields["stock"], want)
				}
			}
		})
	}
}
