package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
	"github.com/tandem-editor/tandem/sync/live"
)

// --local: tandem works on a working copy of the store --db names, kept in the user's data
// directory and named by the source's store id, cloned on first use; the TUI keeps it in
// step with the source in the background (sync/live), and a CLI command that changed
// something pushes before it exits when the source answers soon (localPush).

// localPushWait bounds how long a CLI command with --local waits for the source to answer
// before it leaves its changes pending.
const localPushWait = 3 * time.Second

// localState is what --local resolved: the source's DSN as given (with its password, if
// it had one: kept in memory only, never written) and the copy's change id before the
// command ran.
type localState struct {
	source string
	before int64
	// tokens are the leases on the source the command was given (--lease), by record: the
	// push presents them, the copy (which has no leases) never sees them.
	tokens map[localRecord]string
}

// localRecord names a record of the copy.
type localRecord struct {
	kind store.Kind
	id   int64
}

// localLease is the lease token a write to the store presents for kind id, given token
// (--lease): with --local none, and the push presents token on the source instead.
func (a *app) localLease(kind store.Kind, id int64, token string) string {
	if a.local == nil || token == "" {
		return token
	}
	if a.local.tokens == nil {
		a.local.tokens = map[localRecord]string{}
	}
	a.local.tokens[localRecord{kind, id}] = token
	return ""
}

// copiesDir is where --local keeps its copies: $XDG_DATA_HOME/tandem/copies, by default
// ~/.local/share/tandem/copies.
func copiesDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "tandem", "copies"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("local copies: find the home directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "tandem", "copies"), nil
}

// userConfig is the user's config file, $XDG_CONFIG_HOME/tandem/config.yaml (by default
// ~/.config/tandem/config.yaml); every key is optional.
type userConfig struct {
	Local bool `yaml:"local"` // as --local on every run
	// Identity "database" is --user-from-db on every run against PostgreSQL; "" (or
	// "flag") takes --user.
	Identity string `yaml:"identity"`
}

// readUserConfig reads the user's config file; a missing file is the zero config.
func readUserConfig() (userConfig, error) {
	var c userConfig
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return c, nil
		}
		dir = filepath.Join(home, ".config")
	}
	path := filepath.Join(dir, "tandem", "config.yaml")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return c, usagef("%s: %v", path, err)
	}
	if c.Identity != "" && c.Identity != identityDatabase && c.Identity != "flag" {
		return c, usagef("%s: identity: %s (want database or flag)", path, safe.Line(c.Identity))
	}
	return c, nil
}

// fileStoreID reports whether a store id may name a file: 1 to 100 ASCII letters, digits,
// '_' and '-'. (A regexp of it, `{1,100}`, compiled to a hundred instructions at every
// start of the process.)
func fileStoreID(id string) bool {
	if len(id) < 1 || len(id) > 100 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// useLocal makes --db name the local copy of the store it named: the copy of the source's
// store id when the source answers (cloned first when there is none, with a progress line
// on stderr), else the copy that remembers the source at that place. No copy and no source
// is EUNAVAILABLE.
func (a *app) useLocal(ctx context.Context) error {
	source := a.dsn
	if err := checkDSN(source); err != nil {
		return err
	}
	dir, err := copiesDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("local copies: %w", err)
	}
	loc, err := sourceLocation(source)
	if err != nil {
		return err
	}
	reg, err := a.registry()
	if err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, localPushWait)
	src, err := openStore(octx, source, store.Options{Registry: reg})
	cancel()
	var path string
	switch {
	case err == nil:
		defer src.Close()
		id := src.StoreID()
		if !fileStoreID(id) {
			return store.Errorf(store.EINVALID, "--local: the store id of %s cannot name a file", safe.Line(dsnWhere(source)))
		}
		path = filepath.Join(dir, id+".db")
		if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
			if err := a.cloneLocal(ctx, src, source, loc, path); err != nil {
				return err
			}
		}
	case store.ErrorCode(err) == store.EINVALID:
		return err // a DSN that cannot be used: no copy stands for it
	default:
		// Out of reach (down, cut, slow, asking for a password nobody gives): the copy that
		// remembers the source at this place does the work.
		var ferr error
		path, ferr = findCopy(ctx, dir, loc)
		if ferr != nil {
			return ferr
		}
		if path == "" {
			return store.Errorf(store.EUNAVAILABLE, "--local: there is no local copy of %s yet, and one cannot be made now: %v",
				safe.Line(dsnWhere(source)), err)
		}
	}
	a.local = &localState{source: source}
	a.dsn = path
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	a.local.before, err = st.LastChangeID(ctx)
	return err
}

// cloneLocal clones src into path, the local copy, saying so on stderr.
func (a *app) cloneLocal(ctx context.Context, src store.Store, source, loc, path string) error {
	fmt.Fprintf(a.stderr, "tandem: making a local copy of %s (first use of --local)\n", safe.Line(dsnWhere(source)))
	o := tsync.CloneOptions{Source: loc, Progress: func(done, total int) {
		fmt.Fprintf(a.stderr, "\rcloning: %d of %d records", done, total)
	}}
	// The copy runs the source's schema, whatever its kinds (as tandem clone's does).
	_, err := cloneInto(ctx, src, path, src.Registry(), o)
	fmt.Fprintln(a.stderr)
	if err != nil {
		return fmt.Errorf("--local: clone: %w", err)
	}
	fmt.Fprintf(a.stderr, "tandem: local copy at %s\n", safe.Line(path))
	return nil
}

// findCopy returns the copy in dir that remembers its source at loc ("" when none).
func findCopy(ctx context.Context, dir, loc string) (string, error) {
	cs, err := listCopies(ctx, dir)
	if err != nil {
		return "", err
	}
	for _, c := range cs {
		if c.state != nil && c.state.Source == loc {
			return c.path, nil
		}
	}
	return "", nil
}

// localCopy is one file of the copies directory.
type localCopy struct {
	id    string
	path  string
	size  int64
	state *store.CopyState // nil when it could not be read (err says why)
	err   error
}

// listCopies reads every copy in dir, by id.
func listCopies(ctx context.Context, dir string) ([]localCopy, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("local copies: %w", err)
	}
	var out []localCopy
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(n, ".db") || strings.HasPrefix(n, ".") {
			continue
		}
		c := localCopy{id: strings.TrimSuffix(n, ".db"), path: filepath.Join(dir, n)}
		if fi, err := e.Info(); err == nil {
			c.size = fi.Size()
		}
		for _, x := range []string{"-wal"} {
			if fi, err := os.Stat(c.path + x); err == nil {
				c.size += fi.Size()
			}
		}
		c.state, c.err = readCopyState(ctx, c.path)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// readCopyState opens the copy at path and reads its state.
func readCopyState(ctx context.Context, path string) (*store.CopyState, error) {
	db, err := sqlite.OpenWith(ctx, path, store.Options{}, sqlite.OpenConfig{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.CopyState(ctx)
}

// localPush ends a CLI command run with --local that changed the copy: it syncs with the
// source when the source answers within localPushWait, else it says the changes wait.
// Messages go to stderr, so that stdout stays the command's output.
func (a *app) localPush(ctx context.Context) {
	if a.local == nil || a.st == nil {
		return
	}
	wc, ok := a.st.(store.WorkingCopy)
	if !ok {
		return
	}
	last, err := wc.LastChangeID(ctx)
	if err != nil || last <= a.local.before {
		return // nothing changed
	}
	st, err := wc.CopyState(ctx)
	if err != nil || st.Pending == 0 {
		return
	}
	unlock, ok, err := a.waitSyncLock(ctx, localPushWait)
	switch {
	case err != nil:
		fmt.Fprintf(a.stderr, "tandem: saved locally; %s pending: %v\n", plural(st.Pending, "change"), err)
		return
	case !ok:
		// Another tandem of this copy (a TUI with --local, sync --follow) syncs it: its
		// rounds read the copy's outbox, this change included.
		fmt.Fprintf(a.stderr, "tandem: saved locally; %s pending, pushed by the other tandem syncing this copy\n",
			plural(st.Pending, "change"))
		return
	}
	defer unlock()
	octx, cancel := context.WithTimeout(ctx, localPushWait)
	src, err := openStore(octx, a.local.source, store.Options{Registry: wc.Registry()})
	cancel()
	if err != nil {
		fmt.Fprintf(a.stderr, "tandem: saved locally; %s pending: the source did not answer within %s (they go out with the next tandem --local, or tandem sync --local)\n",
			plural(st.Pending, "change"), localPushWait)
		return
	}
	defer src.Close()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	tokens := a.local.tokens
	rep, err := tsync.SyncWith(sctx, src, wc, tsync.Options{LeaseToken: func(kind store.Kind, id int64) string {
		return tokens[localRecord{kind, id}]
	}})
	cancel()
	if err != nil {
		fmt.Fprintf(a.stderr, "tandem: saved locally; the push stopped: %v (what is pending goes out with the next tandem --local)\n", err)
		return
	}
	msg := fmt.Sprintf("tandem: pushed to the source (%s)", plural(rep.Pushed, "change"))
	if len(rep.Conflicts) > 0 {
		msg += fmt.Sprintf("; %s in the local copy: tandem status --local, tandem resolve --local", plural(len(rep.Conflicts), "conflict"))
	}
	if rep.Pending > 0 {
		msg += fmt.Sprintf("; %s still pending", plural(rep.Pending, "change"))
	}
	fmt.Fprintln(a.stderr, msg)
	for _, wt := range rep.Waits {
		fmt.Fprintf(a.stderr, "tandem: waiting: %s %d is leased by %s on the source until %s; the change goes out once the lease ends\n",
			wt.Kind, wt.ID, safe.Line(wt.Holder), wt.Until.Local().Format("15:04:05"))
	}
}

// leaseStore returns the store leases are taken on, and what closes what it opened: with
// --local the source, since leases hold where the others edit (a copy has none), or
// EUNAVAILABLE when it does not answer within localPushWait; else the store.
func (a *app) leaseStore(ctx context.Context) (store.Store, func(), error) {
	st, err := a.store(ctx)
	if err != nil {
		return nil, nil, err
	}
	if a.local == nil {
		return st, func() {}, nil
	}
	octx, cancel := context.WithTimeout(ctx, localPushWait)
	src, err := openStore(octx, a.local.source, store.Options{Registry: st.Registry()})
	cancel()
	if err != nil {
		return nil, nil, store.Errorf(store.EUNAVAILABLE, "--local: a lease is taken on the source, where the others edit, and %s does not answer (%v); "+
			"try again once it answers, or change the record without a lease: the local copy takes the change and the sync merges it",
			safe.Line(dsnWhere(a.local.source)), err)
	}
	return src, func() { _ = src.Close() }, nil
}

// waitSyncLock takes the sync lock of the copy --db names, waiting up to wait while another
// process holds it (a TUI's background syncer holds it for a round at a time); ok false when
// it still held it then.
func (a *app) waitSyncLock(ctx context.Context, wait time.Duration) (unlock func(), ok bool, err error) {
	path := a.syncLockPath()
	deadline := time.Now().Add(wait)
	for {
		unlock, ok, err := lockFile(path, "sync")
		if err != nil || ok || time.Now().After(deadline) {
			return unlock, ok, err
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// liveSyncer returns the background syncer of the --local copy wc.
func (a *app) liveSyncer(wc store.WorkingCopy) *live.Syncer {
	source, reg := a.local.source, wc.Registry()
	lock := a.syncLockPath()
	return live.New(wc, live.Options{
		Open: func(ctx context.Context) (store.Store, error) {
			return openStore(ctx, source, store.Options{Registry: reg})
		},
		Lock: func() (func(), bool, error) { return lockFile(lock, "sync") },
	})
}

// syncLockPath is the path of the sync lock of the copy --db names (lockSync's).
func (a *app) syncLockPath() string {
	real, err := filepath.EvalSymlinks(a.dsn)
	if err != nil {
		real = a.dsn
	}
	dir, base := filepath.Split(real)
	return filepath.Join(dir, "."+base+".sync.lock")
}

// resolveLocal applies --local (or local: true in the user's config file) once, when a
// command first opens its store: --db then names the local copy (useLocal). It runs there
// and not before the command because some commands parse their flags themselves.
func (a *app) resolveLocal(ctx context.Context) error {
	if a.localDone {
		return nil
	}
	a.localDone = true
	on := a.localFlag
	if f := a.localFlagDef; !on && (f == nil || !f.Changed) {
		c, err := readUserConfig()
		if err != nil {
			return err
		}
		// The config's local: true is for servers: a SQLite file is local already.
		on = c.Local && !isFileDSN(a.dsn)
	}
	if !on {
		return nil
	}
	return a.useLocal(ctx)
}
