package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

func newCloneCmd(a *app) *cobra.Command {
	var (
		kind    string
		subtree int64
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "clone SOURCE FILE",
		Short: "Make FILE an offline working copy of SOURCE",
		Long: `Clone copies the records of SOURCE (a postgres:// DSN, a tandem SQLite file, or a team
server as ssh://[user@]host[:port]) into FILE, a new SQLite store that works with no server: every command and the TUI use it
with --db FILE, and tandem sync brings the edits back. The copy runs the source's
schema, whatever its kinds, at the source's schema version; a sync takes the source's
schema changes before its records. The copy remembers the source's store id and where
it was found (without a password: give it with PGPASSWORD or a .pgpass file when
syncing, or type it when sync asks in a terminal), and for each record its base version
and values.

Through a team server (tandem serve), the clone and every sync log in with your SSH key
(the ssh command, or the one in TANDEM_SSH, with your ~/.ssh/config and agent): the
copy needs no database credentials, and its edits reach the store as the user your key
proves, under that user's role.

SOURCE must not be a working copy itself (a copy of a copy would never see the changes
the middle copy pulls): clone the store it came from.

--kind copies one of the source's kinds only; --subtree DOC_ID copies one document and
its descendants; in the copy that document sits at the root (its parent is not in the
copy), and on the source it stays where it is.
FILE must not exist; it appears only when the clone is complete, so an interrupted
clone leaves nothing behind to mistake for a copy (the next clone into FILE removes its
temporary files). One clone into FILE runs at a time: another is refused (exit 2).

The clone leaves the search index of the kinds that are not trees to the first command
that opens FILE with write access, which builds it (about 1.5 s of CPU per 100,000
products); until then a search reads the folded text row by row and finds the same
records.`,
		Example: `  tandem clone postgres://alice@db.example/tandem catalogue.db
  tandem clone ssh://tandem.example:2222 catalogue.db
  tandem clone team.db handbook.db --kind document --subtree 12`,
		Args: exactArgs(2, "SOURCE FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			source, file := args[0], args[1]
			o := tsync.CloneOptions{Subtree: subtree}
			if subtree != 0 && kind != "" && kind != string(store.KindDocument) {
				return usagef("--subtree selects documents; it cannot go with --kind %s", safe.Line(kind))
			}
			if isFileDSN(source) {
				// SQLite takes a file named like the source's -journal for a crashed
				// write's hot journal and deletes it at the next open of the source (the
				// copy's own first sync): a copy there, its offline edits with it, would
				// be lost.
				// (FILE naming the source itself exists, refused below.)
				if f, what := storeFileAt(file, source); f != "" && what != "the store's file" {
					return usagef("%s is %s (%s): SQLite keeps the source's own file there and would remove the copy; name another file",
						safe.Line(file), strings.Replace(what, "the store's", "the source's", 1), safe.Line(f))
				}
			}
			if fi, err := os.Lstat(file); err == nil && fi.IsDir() {
				return usagef("%s is a directory: clone makes a new file; name it (for example %s)", file, filepath.Join(file, "copy.db"))
			} else if err == nil {
				return usagef("%s exists: clone makes a new file (remove it or pick another name)", file)
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			if err := checkDSNAs("SOURCE", source); err != nil {
				return err
			}
			src, err := a.openAskingPassword(ctx, source, store.Options{Registry: reg})
			if err != nil {
				return err
			}
			defer src.Close()
			// The copy runs the source's schema, whatever its kinds.
			sreg := src.Registry()
			if kind != "" {
				k, err := sreg.ParseKind(kind)
				if err != nil {
					return usageErr(err)
				}
				o.Kinds = []store.Kind{k}
			}
			if subtree != 0 {
				if !sreg.Tree(store.KindDocument) {
					return usagef("--subtree selects documents, and %s has no documents (its kinds: %s)", safe.Line(dsnWhere(source)), kindList(sreg))
				}
				if kind != "" && o.Kinds[0] != store.KindDocument {
					return usagef("--subtree selects documents; it cannot go with --kind %s", o.Kinds[0])
				}
				if kind == "" {
					// The other kinds whole, the documents of the subtree.
					o.Kinds = sreg.Kinds()
				}
			}
			loc, err := sourceLocation(source)
			if err != nil {
				return err
			}
			o.Source = loc
			if isTerminal(a.stderr) {
				o.Progress = func(done, total int) {
					fmt.Fprintf(a.stderr, "\rcloning: %d of %d records", done, total)
				}
			}
			st, err := cloneInto(ctx, src, file, sreg, o)
			if o.Progress != nil {
				fmt.Fprintln(a.stderr)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, map[string]any{"source": st.Source, "file": file, "position": st.Position})
			}
			fmt.Fprintf(a.stdout, "cloned %s into %s at change %d; work with --db %s, then tandem sync --db %s\n",
				safe.Line(st.Source), safe.Line(file), st.Position, safe.Line(file), safe.Line(file))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&kind, "kind", "", "copy only this kind (one of the source's)")
	cmd.Flags().Int64Var(&subtree, "subtree", 0, "copy only this document and its descendants")
	return cmd
}

// cloneInto clones src into a temporary file next to file, a store made with reg (the
// source's schema), and links it to file when the clone is complete, so file either does
// not exist or is a whole working copy.
func cloneInto(ctx context.Context, src store.Store, file string, reg *store.Registry, o tsync.CloneOptions) (*store.CopyState, error) {
	dir, base := filepath.Split(file)
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, usagef("directory %s does not exist", dir)
	}
	// One clone into file at a time: a second one is told so, rather than have the two
	// remove each other's files. Holding the lock, what a killed clone left is removed.
	unlock, ok, err := lockClone(filepath.Join(dir, "."+base+".clone.lock"))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, usagef("another tandem clone into %s is running; wait for it to end (or remove %s if no clone is running)",
			file, filepath.Join(dir, "."+base+".clone.lock"))
	}
	defer unlock()
	// A clone that held the lock before this one may have made file since the check
	// before the lock: say so now rather than after a whole clone (the link would refuse
	// it then, too).
	if _, err := os.Lstat(file); err == nil {
		return nil, usagef("%s exists: clone makes a new file (remove it or pick another name)", file)
	}
	if os.Getenv("GOGC") == "" {
		// A clone makes garbage fast (a record, its encoded row and its search folds,
		// a hundred thousand times) while holding little: collecting a quarter as often
		// saves about a sixth of the clone's CPU for some 60 MB more memory.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	tmp := filepath.Join(dir, "."+base+".clone")
	removeLeftovers(dir, "."+base+".clone", true)
	defer removeLeftovers(dir, "."+base+".clone", true)
	// Nobody else opens the temporary file, and it is thrown away unless complete: no WAL
	// and no fsync while it is written (every page goes to the file once), one fsync at
	// the end, before it is linked.
	db, err := sqlite.OpenWith(ctx, tmp, store.Options{Registry: reg}, sqlite.OpenConfig{Create: true, Scratch: true, PageSize: copyPageSize})
	if err != nil {
		return nil, err
	}
	stopWriteback := startWriteback(tmp)
	st, err := tsync.Clone(ctx, src, db, o)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	stopWriteback()
	if err == nil {
		err = syncFile(tmp)
	}
	if err != nil {
		return nil, err
	}
	defer syncDir(dir)
	if err := os.Link(tmp, file); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, usagef("%s appeared while cloning; the clone was not written", file)
		}
		if err := os.Rename(tmp, file); err != nil {
			return nil, fmt.Errorf("clone: %w", err)
		}
	}
	return st, nil
}

// copyPageSize is the page size of a working copy's file. A clone writes the whole file
// in one load and its indexes scan the whole table; with 16 KiB pages rather than SQLite's
// 4 KiB a clone of 100,000 products took about a tenth less time (BENCHMARKS.md, "Clone
// through SQLite's C API"), and the search index that the copy's first open builds less
// too. A save in the copy writes a few larger pages to the WAL, which a person's editing
// does not notice.
const copyPageSize = 16384

// syncFile writes what the system holds of the file at path to the disk.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("clone: sync %s: %w", path, err)
	}
	return nil
}

// syncDir makes the directory entries made in dir durable; best effort, as some systems
// cannot sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// removeLeftovers removes what killed processes making the database dir/name left there:
// the temporary files SQLite's create makes before it links one to name (.NAME.new-HEX and
// its -wal, -shm and -journal), and, with own, name itself and its companions (a clone's own
// temporary database, .BASE.clone). The caller holds the lock every maker of those files
// holds (the clone lock, the create lock), so none belongs to a running process.
func removeLeftovers(dir, name string, own bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		switch {
		case own && (n == name || n == name+"-wal" || n == name+"-shm" || n == name+"-journal"),
			strings.HasPrefix(n, "."+name+".new-"):
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
}

// sourceLocation is what a working copy keeps of its source's DSN: a PostgreSQL connection
// string without its password (postgres.WithoutPassword: the driver parses it, and sync finds
// the password in PGPASSWORD, the password file or on the terminal), a SQLite path made
// absolute. No password is ever written to disk.
func sourceLocation(dsn string) (string, error) {
	if isSSHDSN(dsn) {
		return strings.TrimSpace(dsn), nil // no password: parseSSHDSN refuses one
	}
	if !isPostgresDSN(dsn) {
		return filepath.Abs(dsn)
	}
	loc, err := postgres.WithoutPassword(dsn)
	if err != nil {
		return "", usageErr(err)
	}
	return loc, nil
}
