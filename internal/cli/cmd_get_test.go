package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGet_Version saves a document many times through the CLI (title, tags, edits of a long
// body, system writes that keep no history) and checks that "get --version N --json" prints
// every history version exactly as "get --json" printed the record right after that save.
func TestGet_Version(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			var body strings.Builder
			for i := range 300 {
				fmt.Fprintf(&body, "line %d of the handbook, naïve café ✓\n", i)
			}
			file := filepath.Join(t.TempDir(), "body.md")
			write := func(s string) {
				if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(body.String())
			d := mustCreate(t, dsn, "document", "title=Handbook", "body=@"+file)
			want := map[int64]record{1: mustGet(t, dsn, "document", d.ID)}
			id := fmt.Sprint(d.ID)
			var noHistory []int64
			text := body.String()
			for i := range 12 {
				v := fmt.Sprint(mustGet(t, dsn, "document", d.ID).Version)
				switch i % 4 {
				case 0:
					mustTandem(t, dsn, "set", "document", id, fmt.Sprintf("title=Handbook %d", i), "--expect-version", v)
				case 1:
					text = strings.Replace(text, fmt.Sprintf("line %d ", 10*i), fmt.Sprintf("LINE %d (edited) ", 10*i), 1)
					write(text)
					mustTandem(t, dsn, "set", "document", id, "body=@"+file, "--expect-version", v)
				case 2:
					mustTandem(t, dsn, "--as", "system", "set", "document", id, fmt.Sprintf("word_count=%d", i), "--expect-version", v)
					noHistory = append(noHistory, mustGet(t, dsn, "document", d.ID).Version)
					continue
				case 3:
					mustTandem(t, dsn, "set", "document", id, fmt.Sprintf("tags=a,t%d", i), "--expect-version", v)
				}
				r := mustGet(t, dsn, "document", d.ID)
				want[r.Version] = r
			}
			for v, w := range want {
				var got record
				out := mustTandem(t, dsn, "get", "document", id, "--version", fmt.Sprint(v), "--json")
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("decode get --version %d: %v", v, err)
				}
				if !sameJSON(t, got, w) {
					t.Errorf("get --version %d = %+v\nwant %+v", v, got, w)
				}
			}
			plain := mustTandem(t, dsn, "get", "document", id, "--version", "2")
			if !strings.Contains(plain, "version 2") || !strings.Contains(plain, "Handbook 0") {
				t.Errorf("get --version 2 prints:\n%s", plain)
			}
			for _, v := range noHistory {
				if r := tandem(t, dsn, "get", "document", id, "--version", fmt.Sprint(v)); r.code != exitNotFound || !strings.Contains(r.stderr, "no history version") {
					t.Errorf("get --version %d (a system write) = exit %d, %q; want exit %d", v, r.code, r.stderr, exitNotFound)
				}
			}
			if r := tandem(t, dsn, "get", "document", id, "--version", "0"); r.code != exitUsage {
				t.Errorf("get --version 0 = exit %d, want %d", r.code, exitUsage)
			}
		})
	}
}
