package remote

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// A client that announces a request over the limit, or sends garbage, ends its stream with
// an error; the server neither allocates the announced size nor runs anything.
func TestServe_HostileFrames(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(c net.Conn)
		want string
	}{
		{"oversized", func(c net.Conn) {
			var head [4]byte
			binary.BigEndian.PutUint32(head[:], 1<<31)
			c.Write(head[:])
		}, "over the limit"},
		{"garbage", func(c net.Conn) {
			var head [4]byte
			binary.BigEndian.PutUint32(head[:], 8)
			c.Write(head[:])
			c.Write([]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8"))
		}, "request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memory.New(store.Options{})
			defer st.Close()
			a, b := net.Pipe()
			defer a.Close()
			served := make(chan error, 1)
			go func() { served <- Serve(context.Background(), st, b, Options{Actor: &store.Actor{Name: "mallory"}}) }()
			if err := writeFrame(a, hello{Version: protocolVersion}); err != nil {
				t.Fatal(err)
			}
			var w welcome
			if err := readFrame(a, maxResponse, &w); err != nil || w.Err != "" {
				t.Fatalf("welcome: %+v, %v", w, err)
			}
			go tc.send(a)
			select {
			case err := <-served:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("serve ended with %v, want an error saying %q", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("serve still running after a hostile frame")
			}
		})
	}
}

// A frame that announces the largest request and then sends a few bytes makes the reader
// hold what came, not what was announced: sessions that each announce 32 MiB and send
// nothing cannot make the server allocate 32 MiB apiece.
func TestReadFrame_AllocatesWhatArrives(t *testing.T) {
	var head [4]byte
	binary.BigEndian.PutUint32(head[:], maxRequest)
	in := io.MultiReader(bytes.NewReader(head[:]), strings.NewReader("0123456789"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var req request
	err := readFrame(in, maxRequest, &req)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a cut frame was read")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("reading a cut frame allocated %d bytes for the 10 that came", grew)
	}
}
