package sync_test

import (
	"context"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestSyncWith_LeaseToken: a change made in the copy to a record whose lease its person
// holds on the source is pushed with that lease's token (their own lease does not hold it
// back, as a lease of someone else does); a token the source no longer honours is dropped
// and the change pushed as any other.
func TestSyncWith_LeaseToken(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "copy")
			l, err := src.AcquireLease(as("ann"), store.LeaseRequest{Kind: store.KindProduct, RecordID: f.leased, Group: store.GroupEditor, TTL: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			tokens := map[int64]string{f.leased: l.Token}
			o := tsync.Options{LeaseToken: func(kind store.Kind, id int64) string { return tokens[id] }}

			mustSet(t, wc, "ann", store.KindProduct, f.leased, store.Values{"name": "under the lease"})
			mustAdjust(t, wc, "ann", f.leased, -2)
			if rep := mustSync(t, src, wc); len(rep.Waits) != 1 || rep.Pending == 0 {
				t.Fatalf("without the token: waits %v, pending %d; want the changes held by ann's lease", rep.Waits, rep.Pending)
			}
			rep, err := tsync.SyncWith(context.Background(), src, wc, o)
			if err != nil || len(rep.Waits) != 0 || rep.Pending != 0 {
				t.Fatalf("with the token: %v, waits %v, pending %d", err, rep.Waits, rep.Pending)
			}
			if r := mustGet(t, src, store.KindProduct, f.leased); r.Fields["name"] != "under the lease" || r.Fields["stock"] != int64(48) {
				t.Fatalf("on the source: %v", r.Fields)
			}

			if _, err := src.ReleaseLease(as("ann"), l.Token); err != nil {
				t.Fatal(err)
			}
			mustSet(t, wc, "ann", store.KindProduct, f.leased, store.Values{"name": "after the lease"})
			rep, err = tsync.SyncWith(context.Background(), src, wc, o)
			if err != nil || rep.Pending != 0 {
				t.Fatalf("with a released token: %v, pending %d", err, rep.Pending)
			}
			if r := mustGet(t, src, store.KindProduct, f.leased); r.Fields["name"] != "after the lease" {
				t.Fatalf("on the source after the release: %v", r.Fields)
			}
		})
	}
}
