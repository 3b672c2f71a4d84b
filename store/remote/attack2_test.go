package remote

import (
	"bytes"
	"context"
	"encoding/gob"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	"github.com/tandem-editor/tandem/sync"
)

// A client names where a replayed edit came from (Via), and history prints it beside the
// stream's user: any text but the offline copy's is dropped, so alice cannot write "alice
// (offline copy, edited …) and bob (…" into every reader's history.
func TestServe_ForgedViaDropped(t *testing.T) {
	st := memory.New(store.Options{})
	defer st.Close()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = Serve(ctx, st, b, Options{Actor: &store.Actor{Name: "alice", Role: store.RoleEditor}}) }()
	c, err := Dial(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	at := time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC)
	for i, tc := range []struct{ via, want string }{
		{"offline copy, edited 2020-01-01T00:00:00Z) and bob (offline copy", "alice"},
		{"copy\x1b[2J", "alice"},
		{sync.Via, "alice (" + sync.Via + ", edited 2026-12-01T10:05:00Z)"},
	} {
		actx := store.WithActor(ctx, store.Actor{Name: "alice", Role: store.RoleEditor, Via: tc.via, EditedAt: at})
		rec, err := c.CreateRecord(actx, store.KindProduct, store.Values{"sku": "V-" + strings.Repeat("1", i+1), "name": "x"})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		vs, err := st.FindHistory(ctx, store.KindProduct, rec.ID)
		if err != nil || len(vs) != 1 {
			t.Fatalf("history: %v, %v", vs, err)
		}
		if vs[0].Actor != tc.want {
			t.Errorf("via %q: history names %q, want %q", tc.via, vs[0].Actor, tc.want)
		}
	}
}

// hostileServer greets a client with welcome w and answers every request with answer's
// response (its ID set to the request's), until the stream ends.
func hostileServer(t *testing.T, w welcome, answer func(req request) response) *Client {
	t.Helper()
	a, b := net.Pipe()
	go func() {
		defer b.Close()
		var h hello
		if readFrame(b, maxRequest, &h) != nil || writeFrame(b, w) != nil {
			return
		}
		for {
			var req request
			if readFrame(b, maxRequest, &req) != nil {
				return
			}
			resp := answer(req)
			resp.ID = req.ID
			if writeFrame(b, resp) != nil {
				return
			}
		}
	}()
	c, err := Dial(context.Background(), a)
	if err != nil {
		a.Close()
		t.Logf("dial: %v", err)
		return nil
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func goodWelcome() welcome {
	reg := store.DefaultRegistry()
	return welcome{Version: protocolVersion, StoreID: "s1", Schema: reg.YAML(), SchemaVersion: reg.Version(), User: "alice"}
}

// A broken or hostile server that answers a call with neither a value nor an error, or a
// conflict without the record as it is now, gives the caller an error, not a nil record
// that the command or the editor would crash on.
func TestClient_HostileServerAnswers(t *testing.T) {
	c := hostileServer(t, goodWelcome(), func(req request) response {
		switch req.Method {
		case "UpdateRecord":
			return response{Err: &wireError{Code: store.ECONFLICT, Message: "changed", Conflict: &store.ConflictError{Kind: store.KindProduct, ID: 1}}}
		default:
			var buf bytes.Buffer
			_ = gob.NewEncoder(&buf).Encode(result[*store.Record]{}) // V nil
			return response{Result: buf.Bytes()}
		}
	})
	if c == nil {
		t.Fatal("the client refused a good welcome")
	}
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	r, err := c.FindRecord(ctx, store.KindProduct, 1)
	if err == nil || r != nil {
		t.Fatalf("an empty answer: record %v, error %v; want an error", r, err)
	}
	if store.ErrorCode(err) != store.EUNAVAILABLE {
		t.Errorf("an empty answer: %v, want unavailable", err)
	}
	_, err = c.UpdateRecord(ctx, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}})
	if err == nil {
		t.Fatal("a conflict answer: no error")
	}
	msg := err.Error() // panicked on the missing current record before
	if store.ErrorCode(err) != store.ECONFLICT || msg != "changed" {
		t.Errorf("a conflict without its record: %q (%s), want the plain conflict", msg, store.ErrorCode(err))
	}
}

// The name a server gives the client becomes its user in history, the editor's header and
// messages: one with escape sequences or not UTF-8 is refused at the hello.
func TestDial_HostileUserName(t *testing.T) {
	for _, name := range []string{"\x1b]0;pwned\x07alice", "al\xffice", "alice\u202e", strings.Repeat("a", 5000)} {
		w := goodWelcome()
		w.User = name
		a, b := net.Pipe()
		go func() {
			defer b.Close()
			var h hello
			if readFrame(b, maxRequest, &h) == nil {
				_ = writeFrame(b, w)
			}
		}()
		c, err := Dial(context.Background(), a)
		if err == nil {
			c.Close()
			t.Errorf("user %.40q: taken", name)
			continue
		}
		if store.ErrorCode(err) != store.EINVALID || strings.ContainsAny(err.Error(), "\x1b\x07\u202e") {
			t.Errorf("user %.40q: %q (%s), want invalid without the raw bytes", name, err, store.ErrorCode(err))
		}
	}
}
