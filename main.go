// Command tandem is a terminal editor for records that several people and programs change at
// the same time. Run without a subcommand it opens the TUI; its subcommands are the
// non-interactive CLI that scripts, workers and tests use. See README.md for the contract.
//
// This file holds the wiring only: global flags, the DSN → store opener, the error → exit
// code mapping and the list of subcommands. Each subcommand lives in its own cmd_<name>.go
// and is registered with one line in commands below.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// defaultDB is the store tandem uses without --db or TANDEM_DB.
const defaultDB = "./tandem.db"

// version is the release version; set with -ldflags "-X main.version=v1.2.3".
var version = ""

// Exit codes: the CLI contract (README "Exit codes"). Only exitCode maps errors to them.
const (
	exitOK        = 0 // success
	exitFailure   = 1 // unexpected failure, busy or unreachable database
	exitUsage     = 2 // bad input or usage (EINVALID, cobra usage errors)
	exitConflict  = 3 // version conflict (ECONFLICT)
	exitLease     = 4 // someone else's lease holds the record (ELEASE)
	exitNotFound  = 5 // no such record (ENOTFOUND)
	exitForbidden = 6 // field ownership does not allow the write (EFORBIDDEN)
)

// commands returns every subcommand of tandem. To add one, write cmd_<name>.go with a
// func new<Name>Cmd(a *app) *cobra.Command and add one line here.
func commands(a *app) []*cobra.Command {
	return []*cobra.Command{
		newSeedCmd(a),
		newListCmd(a),
		newGetCmd(a),
		newCreateCmd(a),
		newSetCmd(a),
		newAdjustCmd(a),
		newHistoryCmd(a),
		newMoveCmd(a),
		newMergeFileCmd(a),
		newLeaseCmd(a),
		newLocksCmd(a),
		newWatchCmd(a),
		newWorkerCmd(a),
		newBenchCmd(a),
		newTortureCmd(a),
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes tandem with args and returns the exit code. It never calls os.Exit, so
// tests may call it in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{args: args, stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRootCmd(a)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if a.st != nil {
		if cerr := a.st.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close store: %w", cerr)
		}
	}
	if err == nil {
		return exitOK
	}
	if !a.started {
		// Cobra refused the command line (unknown command or flag, wrong number of
		// arguments) before any command ran: a usage error.
		err = usageErr(err)
	}
	var ec *exitCodeError
	if !errors.As(err, &ec) || ec.msg != "" {
		// Messages quote database text (who changed a record, a lease holder) and echo the
		// command line (paths, DSNs, field names, values): defuse both. A driver's message
		// may span lines; its continuation lines are indented, so that no echoed newline
		// can forge a line of tandem's own.
		msg := strings.TrimRight(safe.Text(redact(err.Error())), "\n")
		fmt.Fprintf(stderr, "tandem: %s\n", strings.ReplaceAll(msg, "\n", "\n  "))
	}
	if errors.As(err, &usageError{}) && !a.started {
		fmt.Fprintln(stderr, "Run 'tandem --help' for usage.")
	}
	return exitCode(err)
}

// exitCode maps an error to tandem's exit code: the one place where store error codes
// become process exit codes.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ec *exitCodeError
	if errors.As(err, &ec) {
		return ec.code
	}
	if errors.As(err, &usageError{}) {
		return exitUsage
	}
	switch store.ErrorCode(err) {
	case store.EINVALID:
		return exitUsage
	case store.ECONFLICT:
		return exitConflict
	case store.ELEASE:
		return exitLease
	case store.ENOTFOUND:
		return exitNotFound
	case store.EFORBIDDEN:
		return exitForbidden
	}
	// EBUSY, EUNAVAILABLE, EINTERNAL and anything unexpected.
	return exitFailure
}

// usageError marks bad usage of the command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErr wraps err as a usage error.
func usageErr(err error) error {
	if err == nil || errors.As(err, &usageError{}) {
		return err
	}
	return usageError{err}
}

// usagef returns a usage error with a formatted message.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCodeError makes tandem exit with a given code; msg, when not empty, is printed as the
// error. Commands that follow another tool's exit codes (merge-file) return it.
type exitCodeError struct {
	code int
	msg  string
}

func (e *exitCodeError) Error() string { return e.msg }

// app is the state shared by all commands: global flags, streams and the store, opened on
// first use.
type app struct {
	args           []string // the command line, without the program name
	stdin          io.Reader
	stdout, stderr io.Writer

	dsn    string // --db
	user   string // --user
	as     string // --as
	fields string // --fields

	tui     tuiFlags        // the root command's own flags, for the TUI
	started bool            // a command's RunE was reached (flags and arguments were accepted)
	reg     *store.Registry // loaded by registry()
	st      store.Store     // opened by store()
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "tandem",
		Short: "A terminal editor for records that many people and programs change at once",
		Long: `tandem edits products and documents that several people and programs change at the
same time, and never loses an update silently. Without a subcommand it opens the
terminal UI on the store named by --db (./tandem.db by default; created and filled
with sample data on first run). The subcommands are the non-interactive CLI for
scripts and workers.

Exit codes: 0 ok, 1 unexpected failure, 2 bad input or usage, 3 version conflict,
4 held by someone else's lease, 5 not found, 6 not allowed by field ownership.`,
		Example: `  tandem                                  # open the TUI on ./tandem.db
  tandem --db postgres://alice@db.example/tandem --user alice
  tandem list products
  tandem set product 42 price=31.50 --expect-version 3`,
		Version:       versionString(),
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			a.started = true
			if a.dsn == "" && !cmd.Flags().Changed("db") {
				// Read here, not as the flag's default, so that --help never shows a
				// password from TANDEM_DB.
				a.dsn = envOr("TANDEM_DB", defaultDB)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDefault(cmd.Context(), a)
		},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr(err) })

	addTUIFlags(root, &a.tui)
	pf := root.PersistentFlags()
	pf.StringVar(&a.dsn, "db", "",
		"store: a SQLite file path or a postgres:// DSN (default $TANDEM_DB, then "+defaultDB+")")
	pf.StringVar(&a.user, "user", defaultUser(),
		"who you are in history and leases (env TANDEM_USER, then USER)")
	pf.StringVar(&a.as, "as", string(store.RoleEditor), "write as editor (a person) or system (a program)")
	pf.StringVar(&a.fields, "fields", "", "field registry YAML file (default: the built-in registry)")

	for _, c := range commands(a) {
		root.AddCommand(c)
	}
	return root
}

// store opens the store named by --db with the registry of --fields, once.
func (a *app) store(ctx context.Context) (store.Store, error) {
	if a.st != nil {
		return a.st, nil
	}
	reg, err := a.registry()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, a.dsn, store.Options{Registry: reg})
	if err != nil {
		return nil, err
	}
	a.st = st
	return st, nil
}

// registry loads the field registry of --fields (or the built-in one), once.
func (a *app) registry() (*store.Registry, error) {
	if a.reg == nil {
		reg, err := store.LoadRegistry(a.fields)
		if err != nil {
			return nil, err
		}
		a.reg = reg
	}
	return a.reg, nil
}

// actor returns ctx carrying the writer given by --user and --as.
func (a *app) actor(ctx context.Context) (context.Context, error) {
	role, err := store.ParseRole(a.as)
	if err != nil {
		return nil, usageErr(err)
	}
	if strings.TrimSpace(a.user) == "" {
		return nil, usagef("no user: set --user, $TANDEM_USER or $USER")
	}
	if !utf8.ValidString(a.user) || utf8.RuneCountInString(a.user) > 200 ||
		strings.ContainsFunc(a.user, unicode.IsControl) {
		return nil, usagef("--user: a name is up to 200 characters of valid UTF-8 without control characters")
	}
	return store.WithActor(ctx, store.Actor{Name: a.user, Role: role}), nil
}

// isPostgresDSN reports whether dsn names a PostgreSQL server rather than a SQLite file.
func isPostgresDSN(dsn string) bool {
	l := strings.ToLower(dsn)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// openStore opens the store a DSN names: postgres:// or postgresql:// is a PostgreSQL server,
// anything else a SQLite file. A malformed DSN or path is EINVALID (exit 2), a server that
// cannot be reached EUNAVAILABLE (exit 1). Messages never contain the DSN's password.
func openStore(ctx context.Context, dsn string, opts store.Options) (store.Store, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, store.Errorf(store.EINVALID, "--db is empty: give a SQLite file path or a postgres:// DSN")
	}
	var (
		st  store.Store
		err error
	)
	if isPostgresDSN(dsn) {
		st, err = openPostgres(ctx, dsn, opts)
	} else {
		st, err = openSQLite(ctx, dsn, opts)
	}
	if err != nil {
		// The stores' messages name the file or server (without a password) already.
		return nil, redactErr(err)
	}
	return st, nil
}

var (
	// userinfoPassword matches the password of a URL's user:password@.
	userinfoPassword = regexp.MustCompile(`(://[^:/@\s]*):[^@\s]*@`)
	// keywordPassword matches password=... in keyword/value DSNs and query strings.
	keywordPassword = regexp.MustCompile(`(?i)(password=)[^&\s]*`)
)

// redact removes passwords from any DSN inside s.
func redact(s string) string {
	s = userinfoPassword.ReplaceAllString(s, "$1:xxxxx@")
	return keywordPassword.ReplaceAllString(s, "${1}xxxxx")
}

// redactErr returns err with any DSN password removed from its message, keeping its store
// error code for the exit code.
func redactErr(err error) error {
	msg := err.Error()
	if r := redact(msg); r != msg {
		return &store.Error{Code: store.ErrorCode(err), Message: r}
	}
	return err
}

// envOr returns the environment variable key, or def when it is unset or empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// defaultUser is $TANDEM_USER, then $USER, then the name of the operating system account
// (containers often have no $USER).
func defaultUser() string {
	if u := envOr("TANDEM_USER", os.Getenv("USER")); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// versionString is what --version prints: the release and the schema version.
func versionString() string {
	v := version
	if v == "" {
		v = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	return fmt.Sprintf("tandem %s (schema version %d)", v, schemaVersion())
}
