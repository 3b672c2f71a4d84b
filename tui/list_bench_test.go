package tui

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// BenchmarkList shows that the product list costs the same with 100 and 100,000 products:
// open is New, the 80x24 window size and the list's first load (its commands run in the
// benchmark's goroutine and their messages fed back to Update) until the first page is on
// screen; scroll is one j press plus the View, over the first screens of rows. The feed
// subscription and the one-second tick of App.Init are left out: neither reads products.
func BenchmarkList(b *testing.B) {
	for _, n := range []int{100, 100000} {
		b.Run("products="+itoa(int64(n)), func(b *testing.B) {
			fake := benchStore(b, n)
			opts := Options{User: "alice", DraftDir: filepath.Join(b.TempDir(), "drafts"), Now: func() time.Time { return t0 }, Editor: "true"}
			wantPos := "1 of " + thousands(n)

			b.Run("open", func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var screen string
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					screen = openList(b, ctx, fake, opts)
				}
				b.StopTimer()
				if !strings.Contains(ansi.Strip(screen), wantPos) {
					b.Fatalf("first page not shown (want %q):\n%s", wantPos, ansi.Strip(screen))
				}
			})

			b.Run("sort", func(b *testing.B) {
				// One S press on a list sorted by price: the first page in the other
				// direction, loaded by the store in that order, and the View.
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				app := openAppList(b, ctx, fake, opts)
				sortList(b, app, "price", false)
				reverse := keyMsg("o")
				var screen string
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					_, cmd := app.Update(reverse)
					runSync(b, app, cmd)
					screen = app.Render()
				}
				b.StopTimer()
				if !strings.Contains(ansi.Strip(screen), "by price") || !app.list.loaded {
					b.Fatalf("sorted first page not shown:\n%s", ansi.Strip(screen))
				}
			})

			b.Run("scroll-sorted", func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				app := openAppList(b, ctx, fake, opts)
				sortList(b, app, "name", true)
				scrollList(b, app)
			})

			b.Run("scroll-search", func(b *testing.B) {
				// j over a list found by a word in the descriptions: every row shows the
				// words around its match, marked.
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				app := openAppList(b, ctx, fake, opts)
				searchList(b, app, "fine")
				scrollList(b, app)
			})

			b.Run("scroll", func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				app := openAppList(b, ctx, fake, opts)
				screen := scrollList(b, app)
				if !strings.Contains(ansi.Strip(screen), " of "+thousands(n)) {
					b.Fatalf("position not shown:\n%s", ansi.Strip(screen))
				}
			})
		})
	}
}

// scrollList measures one j press plus the View, over the rows of the first page (going back
// to the top before it ends), and returns the last screen.
func scrollList(b *testing.B, app *App) string {
	l := app.list
	down := keyMsg("j")
	const span = 90 // rows scrolled before going back to the top: within the first page
	var screen string
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if l.cursor >= span {
			b.StopTimer()
			l.cursor, l.offset = 0, 0
			b.StartTimer()
		}
		_, cmd := app.Update(down)
		screen = app.Render()
		if cmd != nil {
			b.Fatalf("step %d: j started a command (a page load) within the first page", i)
		}
	}
	b.StopTimer()
	return screen
}

// searchList types a search into the list's filter and loads its first page.
func searchList(b *testing.B, app *App, text string) {
	for _, k := range append(append([]string{"/"}, strings.Split(text, "")...), "enter") {
		_, cmd := app.Update(keyMsg(k))
		runSync(b, app, cmd)
	}
	if app.list.search != text || !app.list.loaded || len(app.list.rows) == 0 {
		b.Fatalf("list not searched for %q: search %q, %d rows", text, app.list.search, len(app.list.rows))
	}
}

// sortList sorts the app's product list by field (descending with desc) through the keys, and
// loads the first page.
func sortList(b *testing.B, app *App, field string, desc bool) {
	for range 8 {
		if app.list.sort == field {
			break
		}
		_, cmd := app.Update(keyMsg("s"))
		runSync(b, app, cmd)
	}
	if desc {
		_, cmd := app.Update(keyMsg("o"))
		runSync(b, app, cmd)
	}
	if app.list.sort != field || app.list.desc != desc || !app.list.loaded {
		b.Fatalf("list not sorted by %s (desc %v): %q %v", field, desc, app.list.sort, app.list.desc)
	}
}

// openList opens an App on s at 80x24, loads the list's first page and returns the screen.
func openList(b *testing.B, ctx context.Context, s store.Store, opts Options) string {
	return openAppList(b, ctx, s, opts).Render()
}

// openAppList is openList returning the App.
func openAppList(b testing.TB, ctx context.Context, s store.Store, opts Options) *App {
	app, err := New(ctx, s, opts)
	if err != nil {
		b.Fatal(err)
	}
	_, cmd := app.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	runSync(b, app, cmd)
	runSync(b, app, app.list.Init())
	if !app.list.loaded {
		b.Fatal("list not loaded after its first commands")
	}
	return app
}

// runSync runs cmd and every command that follows from it in this goroutine, expanding
// batches and feeding each message to the app, as a program would but without goroutines.
func runSync(b testing.TB, app *App, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			runSync(b, app, c)
		}
	case pageMsg:
		if msg.err != nil {
			b.Fatal(msg.err)
		}
		_, next := app.Update(msg)
		runSync(b, app, next)
	default:
		_, next := app.Update(msg)
		runSync(b, app, next)
	}
}

// keysetStore is the fake with its products held in id order and paged by binary search on
// the id, as an indexed database pages them. The fake itself cannot stand in at 100,000
// products: its CreateRecord checks the sku against every product (seeding is quadratic,
// more than ten minutes here) and its FindRecords sorts every id on each call.
type keysetStore struct {
	*memory.DB
	products []*store.Record            // ordered by id
	index    map[string][]*store.Record // per sort field, ordered by (field, id): the index
}

// FindRecords serves products from the ordered slice and everything else from the fake.
func (s *keysetStore) FindRecords(ctx context.Context, flt store.Filter) ([]*store.Record, error) {
	if flt.Kind != store.KindProduct {
		return s.DB.FindRecords(ctx, flt)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if flt.Sort != "" {
		return s.findSorted(flt)
	}
	start, _ := slices.BinarySearchFunc(s.products, flt.AfterID+1, func(r *store.Record, id int64) int {
		return cmp.Compare(r.ID, id)
	})
	search := strings.ToLower(flt.Search)
	out := []*store.Record{}
	for _, r := range s.products[start:] {
		if len(flt.IDs) > 0 && !slices.Contains(flt.IDs, r.ID) {
			continue
		}
		if search != "" && !matches(r, search) {
			continue
		}
		out = append(out, r.Clone())
		if flt.Limit > 0 && len(out) == flt.Limit {
			break
		}
	}
	return out, nil
}

// findSorted pages products in flt.Sort's order as a database reads an index on (field, id):
// a binary search for the keyset position, then the next rows forwards (or backwards).
func (s *keysetStore) findSorted(flt store.Filter) ([]*store.Record, error) {
	idx, ok := s.index[flt.Sort]
	if !ok {
		return nil, store.Errorf(store.EINVALID, "no index on %s", flt.Sort)
	}
	asc := flt
	asc.Desc = false
	pos := &store.Record{ID: flt.AfterID, Fields: store.Values{flt.Sort: flt.AfterValue}}
	out := []*store.Record{}
	take := func(r *store.Record) bool {
		if flt.Search != "" && !matches(r, strings.ToLower(flt.Search)) {
			return true
		}
		out = append(out, r.Clone())
		return flt.Limit == 0 || len(out) < flt.Limit
	}
	if !flt.Desc {
		start := 0
		if flt.AfterValue != nil {
			start, _ = slices.BinarySearchFunc(idx, pos, func(r, p *store.Record) int { return store.CompareSort(asc, r, p) })
			for start < len(idx) && store.CompareSort(asc, idx[start], pos) <= 0 {
				start++
			}
		}
		for _, r := range idx[start:] {
			if !take(r) {
				break
			}
		}
		return out, nil
	}
	end := len(idx)
	if flt.AfterValue != nil {
		end, _ = slices.BinarySearchFunc(idx, pos, func(r, p *store.Record) int { return store.CompareSort(asc, r, p) })
	}
	for i := end - 1; i >= 0; i-- {
		if !take(idx[i]) {
			break
		}
	}
	return out, nil
}

// CountRecords counts the ordered products.
func (s *keysetStore) CountRecords(ctx context.Context, kind store.Kind) (int, error) {
	if kind != store.KindProduct {
		return s.DB.CountRecords(ctx, kind)
	}
	return len(s.products), ctx.Err()
}

func matches(r *store.Record, lowerSearch string) bool {
	for _, name := range []string{"sku", "name", "description"} {
		if v, ok := r.Fields[name].(string); ok && strings.Contains(strings.ToLower(v), lowerSearch) {
			return true
		}
	}
	return false
}

// benchStore returns the fake with n products named "Product i", like mustSeed's; each is
// checked by the registry as CreateRecord would check it.
func benchStore(b *testing.B, n int) *keysetStore {
	b.Helper()
	fake := memory.New(store.Options{Now: func() time.Time { return t0 }})
	fake.SetClock(func() time.Time { return t0 })
	b.Cleanup(func() { fake.Close() })
	s := &keysetStore{DB: fake, products: make([]*store.Record, 0, n)}
	for i := 1; i <= n; i++ {
		fields, err := fake.Registry().CheckCreate(store.KindProduct, store.RoleEditor, store.Values{
			"sku": "SKU-" + itoa(int64(i)), "name": "Product " + itoa(int64(i)),
			"description": "A fine product.\nSecond line.\n",
			"price":       int64(1000 + i), "stock": int64(20),
		})
		if err != nil {
			b.Fatalf("seed product %d: %v", i, err)
		}
		s.products = append(s.products, &store.Record{Kind: store.KindProduct, ID: int64(i), Version: 1,
			UpdatedBy: "seed", UpdatedAt: t0, Fields: fields.Clone()})
	}
	s.index = map[string][]*store.Record{}
	for _, f := range fake.Registry().SortFields(store.KindProduct) {
		idx := slices.Clone(s.products)
		flt := store.Filter{Kind: store.KindProduct, Sort: f.Name}
		slices.SortFunc(idx, func(a, b *store.Record) int { return store.CompareSort(flt, a, b) })
		s.index[f.Name] = idx
	}
	return s
}
