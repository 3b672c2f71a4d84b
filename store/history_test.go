package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestMakePatch(t *testing.T) {
	long := lines(2000, func(i int) string { return fmt.Sprintf("line %d of a long text, ünïcödé ✓ 🙂", i) })
	tests := []struct{ name, old, new string }{
		{"one line changed", long, strings.Replace(long, "line 1000 of", "LINE 1000 OF", 1)},
		{"lines inserted at the start", long, "new first\nnew second\n" + long},
		{"last lines deleted", long, long[:len(long)-300]},
		{"no final newline", long + "tail", long + "tail changed"},
		{"CRLF", strings.ReplaceAll(long, "\n", "\r\n"), strings.Replace(strings.ReplaceAll(long, "\n", "\r\n"), "line 7 ", "line seven ", 1)},
		{"scattered edits", long, strings.NewReplacer("line 10 ", "x10 ", "line 900 ", "x900 ", "line 1999 ", "x1999 ").Replace(long)},
		{"unchanged", long, long},
		// More distinct lines than runes below the UTF-16 surrogates, and both ends changed,
		// so the whole middle goes through the line-id search.
		{"many distinct lines", lines(60000, func(i int) string { return fmt.Sprint(i) }),
			"first\n" + lines(60000, func(i int) string { return fmt.Sprint(i) })[2:] + "last\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := makePatch(tc.old, tc.new)
			if !ok {
				t.Fatal("no patch for a small edit")
			}
			enc, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) > len(tc.new)/10 {
				t.Errorf("patch is %d bytes for a %d-byte text", len(enc), len(tc.new))
			}
			var back textPatch
			if err := unmarshalNumbers(enc, &back); err != nil {
				t.Fatal(err)
			}
			got, err := back.apply(tc.old)
			if err != nil || got != tc.new {
				t.Fatalf("apply = %d bytes, %v; want the new text (%d bytes)", len(got), err, len(tc.new))
			}
		})
	}
}

func TestMakePatch_NotWorthIt(t *testing.T) {
	a := lines(500, func(i int) string { return fmt.Sprint("a", i) })
	b := lines(500, func(i int) string { return fmt.Sprint("b", i) })
	if _, ok := makePatch(a, b); ok {
		t.Error("a patch between unrelated texts, want the value stored instead")
	}
}

func TestPatch_WrongBase(t *testing.T) {
	old := lines(300, func(i int) string { return fmt.Sprint("line ", i) })
	p, ok := makePatch(old, strings.Replace(old, "line 150\n", "changed\n", 1))
	if !ok {
		t.Fatal("no patch")
	}
	for _, base := range []string{old[:len(old)-1], strings.Replace(old, "line 3\n", "line 4\n", 1), old + "more\n"} {
		if got, err := p.apply(base); err == nil {
			t.Errorf("apply to another base = %d bytes, no error", len(got))
		}
	}
}

func TestNewHistoryRow(t *testing.T) {
	reg := DefaultRegistry()
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	body := lines(400, func(i int) string { return fmt.Sprint("body line ", i) })
	rec := &Record{Kind: KindDocument, ID: 1, Version: 5, Fields: Values{
		"parent_id": nil, "title": "T", "body": body, "tags": []string{"a"}, "word_count": int64(7), "checksum": "c"}}
	tail := HistoryTail{Version: 3, Base: 1, Chain: 3, Written: []string{"word_count"}}

	t.Run("FirstIsSnapshot", func(t *testing.T) {
		h, err := reg.NewHistoryRow(rec, "alice", at, []string{"title"}, HistoryTail{}, nil)
		if err != nil || !h.IsSnapshot() || h.ChainBase() != 5 {
			t.Fatalf("row = %+v, %v; want a snapshot", h, err)
		}
	})
	t.Run("FullChainIsSnapshot", func(t *testing.T) {
		full := tail
		full.Chain = MaxChain
		h, err := reg.NewHistoryRow(rec, "alice", at, []string{"title"}, full, nil)
		if err != nil || !h.IsSnapshot() {
			t.Fatalf("row = %+v, %v; want a snapshot", h, err)
		}
	})
	t.Run("DeltaHoldsFieldsWrittenWithoutHistory", func(t *testing.T) {
		h, err := reg.NewHistoryRow(rec, "alice", at, []string{"title"}, tail, nil)
		if err != nil || h.IsSnapshot() || h.Base != 1 {
			t.Fatalf("row = %+v, %v; want a delta on chain 1", h, err)
		}
		var d delta
		if err := json.Unmarshal(h.Delta, &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Set) != 2 || d.Set["title"] != "T" || d.Set["word_count"] != float64(7) || len(d.Patch) != 0 {
			t.Errorf("delta = %s, want title and word_count", h.Delta)
		}
	})
	t.Run("LongTextAsPatch", func(t *testing.T) {
		pre := Values{"body": strings.Replace(body, "body line 200\n", "old line\n", 1)}
		h, err := reg.NewHistoryRow(rec, "alice", at, []string{"body"}, tail, pre)
		if err != nil || h.IsSnapshot() || len(h.Delta) > 300 || !strings.Contains(string(h.Delta), `"patch":{"body"`) {
			t.Fatalf("row = %s, %v; want a small delta with a body patch", h.Delta, err)
		}
		// Written without history since the previous version: the value, not a patch.
		quiet := tail
		quiet.Written = []string{"body"}
		h, err = reg.NewHistoryRow(rec, "alice", at, []string{"body"}, quiet, pre)
		if err != nil || strings.Contains(string(h.Delta), `"patch"`) {
			t.Fatalf("row = %.200s, %v; want the body's value", h.Delta, err)
		}
	})
	t.Run("HeavyChainEnds", func(t *testing.T) {
		heavy := tail
		heavy.ChainBytes = len(body) + 1000
		h, err := reg.NewHistoryRow(rec, "alice", at, []string{"title"}, heavy, nil)
		if err != nil || !h.IsSnapshot() {
			t.Fatalf("row = %+v, %v; want a snapshot once the chain's deltas outweigh one", h, err)
		}
	})
	t.Run("SmallRecordSnapshotsOften", func(t *testing.T) {
		small := &Record{Kind: KindDocument, ID: 1, Version: 5, Fields: Values{
			"parent_id": nil, "title": "T", "body": "", "tags": []string{}, "word_count": int64(0), "checksum": ""}}
		short := tail
		short.ChainBytes = 80 // one earlier delta of a record whose snapshot is about 150 bytes
		h, err := reg.NewHistoryRow(small, "alice", at, []string{"body", "checksum", "tags", "title"}, short, nil)
		if err != nil || !h.IsSnapshot() {
			t.Fatalf("row = %+v, %v; want a snapshot where it costs no more than the chain", h, err)
		}
	})
}

func TestRebuildHistory_Broken(t *testing.T) {
	reg := DefaultRegistry()
	rows := []HistoryRow{{Version: 4, Base: 2, Delta: []byte(`{"set":{"title":"x"}}`)}}
	if _, err := reg.RebuildHistory(KindDocument, 1, rows); ErrorCode(err) != EINTERNAL {
		t.Errorf("delta without its snapshot: err = %v, want EINTERNAL", err)
	}
	snap, _ := reg.EncodeSnapshot(KindDocument, Values{"title": "a", "body": "b\n"})
	rows = []HistoryRow{{Version: 2, Snapshot: snap}, {Version: 3, Base: 2, Delta: []byte(`{"patch":{"body":{"n":5,"crc":1,"ops":[9]}}}`)}}
	if _, err := reg.RebuildHistory(KindDocument, 1, rows); ErrorCode(err) != EINTERNAL {
		t.Errorf("patch that does not fit: err = %v, want EINTERNAL", err)
	}
	if _, err := reg.RebuildVersion(KindDocument, 1, 7, rows[:1]); ErrorCode(err) != ENOTFOUND {
		t.Errorf("missing version: err = %v, want ENOTFOUND", err)
	}
}

// TestDecodeSnapshot_OlderSQLite reads a snapshot as SQLite stores wrote it before schema 4:
// money as cents, times with milliseconds.
func TestDecodeSnapshot_OlderSQLite(t *testing.T) {
	reg := DefaultRegistry()
	got, err := reg.DecodeSnapshot(KindProduct, []byte(`{"sku":"A","name":"n","description":"","categories":["x"],
		"price":2999,"stock":-3,"availability":"in_stock","thumbnail":"","search_index":"","checksum":"",
		"last_sync_at":"2026-01-02T03:04:05.678Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got["price"] != int64(2999) || got["stock"] != int64(-3) ||
		!got["last_sync_at"].(time.Time).Equal(time.Date(2026, 1, 2, 3, 4, 5, 678000000, time.UTC)) {
		t.Errorf("decoded = %v", got)
	}
}
