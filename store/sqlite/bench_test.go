package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// The hot-row benchmarks compare a store save (lease check, version, history or operation
// log, change log, all in one BEGIN IMMEDIATE transaction) with the bare UPDATE on the same
// database file. Run: go test -run '^$' -bench HotRow ./store/sqlite/

func benchStore(b *testing.B) (*sqlite.DB, string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.db")
	db, err := sqlite.Open(b.Context(), path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ctx := store.WithActor(b.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	p, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "HOT", "name": "hot row"})
	if err != nil {
		b.Fatal(err)
	}
	return db, path, p.ID
}

func BenchmarkHotRow_Store(b *testing.B) {
	for _, role := range []store.Role{store.RoleEditor, store.RoleSystem} {
		b.Run(string(role), func(b *testing.B) {
			db, _, id := benchStore(b)
			ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: role})
			u := store.Update{Add: map[string]int64{"stock": 1}}
			for b.Loop() {
				if _, err := db.UpdateRecord(ctx, store.KindProduct, id, u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHotRow_RawSQL(b *testing.B) {
	_, path, id := benchStore(b)
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	for b.Loop() {
		if _, err := raw.Exec("UPDATE products SET stock = stock + 1, version = version + 1 WHERE id = ?", id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHotRow_Keyed is the contention benchmark's relative save: stock += 1 with a
// fresh idempotency key, by the system writer (no history version).
func BenchmarkHotRow_Keyed(b *testing.B) {
	db, _, id := benchStore(b)
	ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: store.RoleSystem})
	n := 0
	for b.Loop() {
		n++
		u := store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: fmt.Sprintf("k-%d", n)}
		if _, err := db.UpdateRecord(ctx, store.KindProduct, id, u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHotRow_Contended runs the keyed save from goroutines on four DBs of one file,
// as tandem bench contention does: the process's writers commit in groups (commit.go).
func BenchmarkHotRow_Contended(b *testing.B) {
	_, path, id := benchStore(b)
	var dbs []*sqlite.DB
	for range 4 {
		db, err := sqlite.Open(b.Context(), path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		dbs = append(dbs, db)
	}
	ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: store.RoleSystem})
	var n atomic.Int64
	var i atomic.Int64
	b.SetParallelism(2)
	b.RunParallel(func(pb *testing.PB) {
		db := dbs[i.Add(1)%4]
		for pb.Next() {
			u := store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: fmt.Sprintf("k-%d", n.Add(1))}
			if _, err := db.UpdateRecord(ctx, store.KindProduct, id, u); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSave_SearchedField saves edits of searched fields (their folds are written with
// them) by a person, each checked against the version it read: a product's name (the product
// has a description), a document's title next to a 64 KiB body, the body itself, and a
// create of a product. Run:
//
//	go test ./store/sqlite -run '^$' -bench Save_SearchedField -benchtime 2000x
func BenchmarkSave_SearchedField(b *testing.B) {
	ctx := store.WithActor(b.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	body := randomText(64 << 10)
	edit := func(b *testing.B, kind store.Kind, vals store.Values, field string, values func(i int) any) {
		db, _, _ := benchStore(b)
		r, err := db.CreateRecord(ctx, kind, vals)
		if err != nil {
			b.Fatal(err)
		}
		version, i := r.Version, 0
		for b.Loop() {
			i++
			res, err := db.UpdateRecord(ctx, kind, r.ID, store.Update{BaseVersion: version, Set: store.Values{field: values(i)}})
			if err != nil {
				b.Fatal(err)
			}
			version = res.Version
		}
	}
	b.Run("product name", func(b *testing.B) {
		edit(b, store.KindProduct, store.Values{"sku": "S-1", "name": "Lamp", "description": "A desk lamp with a long arm, in brass."},
			"name", func(i int) any { return fmt.Sprintf("Lamp %d", i) })
	})
	b.Run("document title", func(b *testing.B) {
		edit(b, store.KindDocument, store.Values{"title": "Big", "body": body},
			"title", func(i int) any { return fmt.Sprintf("Title %d", i) })
	})
	b.Run("document body", func(b *testing.B) {
		edit(b, store.KindDocument, store.Values{"title": "Big", "body": body},
			"body", func(i int) any { return body[:len(body)-i%64] })
	})
	b.Run("product create", func(b *testing.B) {
		db, _, _ := benchStore(b)
		i := 0
		for b.Loop() {
			i++
			if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("C-%d", i), "name": "Chair",
				"description": "A chair of oak, with a woven seat.", "categories": []string{"furniture"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreate is one editor create in its own transaction: a product (sku check) and a
// document under a parent (depth and lease checks). Run:
// go test -run '^$' -bench Create ./store/sqlite/
func BenchmarkCreate(b *testing.B) {
	b.Run("product", func(b *testing.B) {
		db, _, _ := benchStore(b)
		ctx := store.WithActor(b.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
		n := 0
		for b.Loop() {
			n++
			if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("B-%d", n), "name": "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("child_document", func(b *testing.B) {
		db, _, _ := benchStore(b)
		ctx := store.WithActor(b.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
		root, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "root"})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "child", "parent_id": root.ID}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// wideSchema is a schema of kinds kinds of fields fields each, of every type, a fifth of
// them searched (as store's BenchmarkParseSchema50x40 makes it).
func wideSchema(kinds, fields int) string {
	var b strings.Builder
	b.WriteString("kinds:\n")
	for k := range kinds {
		fmt.Fprintf(&b, "  kind%02d:\n", k)
		if k%10 == 9 {
			b.WriteString("    tree: true\n")
		}
		b.WriteString("    fields:\n")
		for f := range fields {
			name := fmt.Sprintf("field%02d", f)
			switch f % 8 {
			case 0:
				fmt.Fprintf(&b, "      - {name: %s, type: string, owner: editor, rule: scalar, required: true, unique: %v, search: true, max_chars: 200}\n", name, f == 0)
			case 1:
				fmt.Fprintf(&b, "      - {name: %s, type: text, owner: editor, rule: text, search: true}\n", name)
			case 2:
				fmt.Fprintf(&b, "      - {name: %s, type: int, owner: shared, rule: counter, default: 7, sort: true}\n", name)
			case 3:
				fmt.Fprintf(&b, "      - {name: %s, type: money, owner: editor, rule: scalar, default: \"1.50\"}\n", name)
			case 4:
				fmt.Fprintf(&b, "      - {name: %s, type: set, owner: editor, rule: set, max_items: 10}\n", name)
			case 5:
				fmt.Fprintf(&b, "      - {name: %s, type: enum, values: [a, b, c], owner: shared, rule: scalar, default: b, group: review}\n", name)
			case 6:
				fmt.Fprintf(&b, "      - {name: %s, type: time, owner: system, rule: scalar}\n", name)
			case 7:
				fmt.Fprintf(&b, "      - {name: %s, type: ref, to: kind%02d, owner: editor, rule: scalar}\n", name, max(k-1, 0))
			}
		}
	}
	return b.String()
}

// BenchmarkOpen_Schema50x40 opens a store of 50 kinds of 40 fields and lists one record
// of one kind, as `tandem list` does (issue 24: under 100 ms), against the same on a store of
// the sample schema. The parsed schema is cached per process, so a cold open also reads the
// YAML (BenchmarkParseStoredSchema50x40 in store). Run:
//
//	go test ./store/sqlite -run '^$' -bench Open_Schema50x40 -benchtime 20x
func BenchmarkOpen_Schema50x40(b *testing.B) {
	wide, err := store.ParseRegistry("wide.yaml", []byte(wideSchema(50, 40)))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		reg  *store.Registry
		kind store.Kind
	}{{"sample", nil, store.KindProduct}, {"50x40", wide, "kind03"}} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "wide.db")
			db, err := sqlite.Open(b.Context(), path, store.Options{Registry: tc.reg})
			if err != nil {
				b.Fatal(err)
			}
			db.Close()
			for b.Loop() {
				db, err := sqlite.OpenWith(b.Context(), path, store.Options{}, sqlite.OpenConfig{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := db.FindRecords(b.Context(), store.Filter{Kind: tc.kind, Limit: 1}); err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
}

// BenchmarkHotRow_KeyedOutside is BenchmarkHotRow_Keyed with the outside-write triggers
// (outside.go) as every store has them, and with them dropped: what they cost tandem's
// relative save (issue 24: within 10%; compare the CPU of both, -cpuprofile).
func BenchmarkHotRow_KeyedOutside(b *testing.B) {
	for _, drop := range []bool{false, true} {
		name := "triggers"
		if drop {
			name = "none"
		}
		b.Run(name, func(b *testing.B) {
			db, path, id := benchStore(b)
			if drop {
				raw, err := sql.Open("sqlite", "file:"+path)
				if err != nil {
					b.Fatal(err)
				}
				defer raw.Close()
				for _, q := range []string{"DROP TRIGGER products_outside_update", "DROP TRIGGER products_outside_insert", "DROP TRIGGER products_outside_delete"} {
					if _, err := raw.Exec(q); err != nil {
						b.Fatal(err)
					}
				}
			}
			ctx := store.WithActor(b.Context(), store.Actor{Name: "bench", Role: store.RoleSystem})
			n := 0
			for b.Loop() {
				n++
				u := store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: fmt.Sprintf("k-%d", n)}
				if _, err := db.UpdateRecord(ctx, store.KindProduct, id, u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOutsideUpdate is what the outside-write update trigger (outside.go) costs one
// UPDATE on a connection that carries the writer mark but not the gate (bench contention's
// raw baseline; tandem's write connection has both, and its triggers end at the gate), 50
// UPDATEs to a transaction as a group of bench contention's commits them: without the
// trigger ("none"), with it and a new time at each UPDATE ("new": its cheap tests end it),
// and with it and the time kept ("same": as for saves of one record within one
// millisecond, where it reads the writer mark, a pragma that SQLite prepares at each read).
// Run: go test -run '^$' -bench OutsideUpdate ./store/sqlite/
func BenchmarkOutsideUpdate(b *testing.B) {
	const perTx = 50
	for _, variant := range []string{"none", "new", "same"} {
		b.Run(variant, func(b *testing.B) {
			_, path, id := benchStore(b)
			raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)")
			if err != nil {
				b.Fatal(err)
			}
			defer raw.Close()
			ctx := b.Context()
			c, err := raw.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if variant == "none" {
				if _, err := c.ExecContext(ctx, "DROP TRIGGER products_outside_update"); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := c.ExecContext(ctx, "ATTACH DATABASE ':memory:' AS "+store.SQLiteWriterMark); err != nil {
				b.Fatal(err)
			}
			st, err := c.PrepareContext(ctx, `UPDATE products SET stock = stock + 1, version = version + 1,
				updated_at = ?, updated_by = 'bench' WHERE id = ? RETURNING version`)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			n := 0
			for b.Loop() {
				if n%perTx == 0 {
					if n > 0 {
						if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
						b.Fatal(err)
					}
				}
				n++
				if variant != "same" {
					at = at.Add(time.Millisecond)
				}
				var v int64
				if err := st.QueryRowContext(ctx, at.Format("2006-01-02T15:04:05.000Z"), id).Scan(&v); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
				b.Fatal(err)
			}
		})
	}
}
