// Package remote is a store.Store that lives elsewhere: Client sends each call over a byte
// stream (an SSH session running tandem's store service on a team server) and Serve answers
// them from a real store on the other end, as the user the stream belongs to. A working
// copy cloned through a team server syncs through it this way, with no database
// credentials on the laptop and the server's permissions on every write.
//
// The protocol is frames of gob over the stream (writeFrame): a hello each way, then
// requests and responses that carry an id, so calls from many goroutines travel at once
// and answer out of order.
package remote

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// protocolVersion is the version of the protocol this package speaks; a peer of another
// version is refused at the hello.
const protocolVersion = 1

// hello is the client's first message.
type hello struct {
	Version int
}

// welcome is the server's answer to the hello: the store the stream reaches, and who the
// server takes the client to be.
type welcome struct {
	Version       int
	StoreID       string
	Schema        []byte // the store's schema in its stored form (store.Registry.YAML)
	SchemaVersion int64
	Migrations    int // the store's migration level (SchemaVersion of the stores)
	User          string
	Err           string // set when the server refuses the client; the stream then ends
}

// request is one call.
type request struct {
	ID     uint64
	Method string
	// Actor is the actor of the call's context, when it has one. The server keeps only
	// what says where a replayed edit came from (Via, EditedAt, Resolved); who writes is
	// the stream's user.
	Actor     *store.Actor
	NoHistory bool // the call's context is store.WithoutHistory
	Args      []byte
}

// response is the answer to the request of the same ID.
type response struct {
	ID     uint64
	Result []byte
	Err    *wireError
}

// wireError carries a store error across, keeping its type: the callers tell conflicts,
// lease refusals and ownership refusals apart by type, and read their fields.
type wireError struct {
	Code      string
	Message   string
	Ways      []store.Way
	Conflict  *store.ConflictError
	Lease     *store.LeaseError
	Ownership *store.OwnershipError
}

func init() {
	// The dynamic types a store.Values (and a Filter's AfterValue) holds.
	gob.Register(time.Time{})
	gob.Register([]string{})
}

// toWire turns an error of the served store into its wire form.
func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Code: store.ErrorCode(err), Message: err.Error(), Ways: store.WaysOf(err)}
	var (
		ce *store.ConflictError
		le *store.LeaseError
		oe *store.OwnershipError
	)
	switch {
	case errors.As(err, &ce):
		w.Conflict = ce
	case errors.As(err, &le):
		w.Lease = le
	case errors.As(err, &oe):
		w.Ownership = oe
	}
	return w
}

// err turns the wire form back into an error of the type the served store returned, or a
// *store.Error with its code, message and ways. A conflict without the current record
// (which a store always sends, and whose message reads) comes back as that plain error.
func (w *wireError) err() error {
	switch {
	case w == nil:
		return nil
	case w.Conflict != nil && w.Conflict.Current != nil:
		return w.Conflict
	case w.Lease != nil:
		return w.Lease
	case w.Ownership != nil:
		return w.Ownership
	}
	return &store.Error{Code: w.Code, Message: w.Message, Ways: w.Ways}
}

// Frame limits. Every message travels as a frame: its length (4 bytes, big-endian), then
// its gob encoding. A server reads no request over maxRequest (a record's largest value is
// 16 MiB), so a client cannot make it hold more than MaxInFlight such frames.
const (
	maxRequest  = 32 << 20
	maxResponse = 1 << 30
)

// writeFrame sends v as one frame.
func writeFrame(w io.Writer, v any) error {
	var buf bytes.Buffer
	buf.Write(make([]byte, 4))
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	_, err := w.Write(b)
	return err
}

// readFrame reads one frame of at most max bytes into v. io.EOF when the stream ended
// between frames.
func readFrame(r io.Reader, max int, v any) error {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(head[:])
	if int64(n) > int64(max) {
		return fmt.Errorf("a message of %d bytes, over the limit of %d", n, max)
	}
	// The body grows with what arrives, not with what the head announced: a peer that
	// announces a large frame and sends little holds little.
	var body bytes.Buffer
	body.Grow(min(int(n), 64<<10))
	if got, err := io.Copy(&body, io.LimitReader(r, int64(n))); err != nil || got != int64(n) {
		return io.ErrUnexpectedEOF
	}
	if err := gob.NewDecoder(&body).Decode(v); err != nil {
		return fmt.Errorf("a malformed message: %v", err)
	}
	return nil
}
