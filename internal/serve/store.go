package serve

import (
	"context"
	"fmt"
	"time"

	"charm.land/ssh"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/remote"
)

// StoreCommand is the command a session runs to reach the store itself (store/remote's
// protocol on its standard input and output): what `tandem clone ssh://HOST` and the sync
// of such a copy use. Every call writes as the session's user, under the user's role.
const StoreCommand = "store-protocol"

// storeEndGrace is how long a store-protocol session whose context ended stays open.
const storeEndGrace = 5 * time.Second

// serveStore answers a remote store's calls on st (the session's logged store) in a
// session without a terminal.
func (s *Server) serveStore(ctx context.Context, st store.Store, sess ssh.Session, u *User) int {
	if _, _, ok := sess.Pty(); ok {
		fmt.Fprintln(sess.Stderr(), "tandem: the store protocol needs a session without a terminal (ssh -T)")
		return 2
	}
	// A client that reads no answers blocks the server's writes on the SSH window, and
	// with them the end of Serve: once the session's context ends (its user removed, the
	// server stopping), the session is closed after a grace that lets a reading client
	// have its last answers and the message why.
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(storeEndGrace, func() { _ = sess.Close() }) })
	defer stop()
	a := Actor(u)
	if err := remote.Serve(ctx, st, sess, remote.Options{Actor: &a}); err != nil && ctx.Err() == nil {
		fmt.Fprintf(sess.Stderr(), "tandem: %s\n", safe.Text(err.Error()))
		return 1
	}
	return 0
}
