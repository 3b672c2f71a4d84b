// Package cli is tandem's command line: the TUI's launcher and the non-interactive commands
// that scripts, workers and tests use. The tandem binary's main.go only calls Run. See
// docs/commands.md for the contract.
//
// This file holds the wiring only: global flags, the DSN → store opener, the error → exit
// code mapping and the list of subcommands. Each subcommand lives in its own cmd_<name>.go
// and is registered with one line in commands below.
package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tandem-editor/tandem/internal/exchange"
	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// defaultDB is the store tandem uses without --db or TANDEM_DB.
const defaultDB = "./tandem.db"

// version is the release version; set with
// -ldflags "-X github.com/tandem-editor/tandem/internal/cli.version=v1.2.3".
var version = ""

// Exit codes: the CLI contract (docs/commands.md, "Exit codes"). Only exitCode maps errors to them.
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
		newInitCmd(a),
		newSeedCmd(a),
		newListCmd(a),
		newGetCmd(a),
		newCreateCmd(a),
		newSetCmd(a),
		newAdjustCmd(a),
		newHistoryCmd(a),
		newMoveCmd(a),
		newDeleteCmd(a),
		newRestoreCmd(a),
		newMergeFileCmd(a),
		newLeaseCmd(a),
		newLocksCmd(a),
		newWatchCmd(a),
		newWorkerCmd(a),
		newBenchCmd(a),
		newTortureCmd(a),
		newExportCmd(a),
		newImportCmd(a),
		newCloneCmd(a),
		newSyncCmd(a),
		newStatusCmd(a),
		newResolveCmd(a),
		newSchemaCmd(a),
		newCopiesCmd(a),
		newServeCmd(a),
	}
}

// Run executes tandem with args and returns the exit code. It never calls os.Exit, so
// tests may call it in-process.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// One buffer for everything a command prints on stdout, flushed at the end (and by
	// commands that stream, after each line: a.flush): 100,000 rows of "list" are one
	// write system call per 64 KiB, not one per line.
	out := bufio.NewWriterSize(stdout, 64<<10)
	a := &app{args: args, stdin: stdin, stdout: out, stderr: stderr, out: out, stdoutTTY: isTerminal(stdout)}
	return a.run(ctx, args, stderr)
}

// run executes the command line args on a and returns the exit code.
func (a *app) run(ctx context.Context, args []string, stderr io.Writer) int {
	out := a.out
	root := newRootCmd(a)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil && cmd != root {
		a.localPush(ctx) // --local: what the command changed goes to the source, or waits
	}
	if a.st != nil && a.served == nil {
		if cerr := a.st.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close store: %w", cerr)
		}
	}
	if ferr := out.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("write output: %w", ferr)
	}
	if err == nil {
		return exitOK
	}
	if !a.started {
		// Cobra refused the command line (unknown command or flag, wrong number of
		// arguments) before any command ran: a usage error.
		err = usageErr(err)
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// A signal (Ctrl-C, SIGTERM) stopped the command: say so, not "context canceled".
		// The exit code stays the command's failure code.
		err = fmt.Errorf("interrupted (%s)", strings.TrimSuffix(err.Error(), ": "+context.Canceled.Error()))
	}
	var ec *exitCodeError
	if !errors.As(err, &ec) || ec.msg != "" {
		// Messages quote database text (who changed a record, a lease holder) and echo the
		// command line (paths, DSNs, field names, values): defuse both. A driver's message
		// may span lines; its continuation lines are indented, so that no echoed newline
		// can forge a line of tandem's own.
		msg := strings.TrimRight(safe.Text(redact(withWays(err.Error(), err))), "\n")
		fmt.Fprintf(stderr, "tandem: %s\n", strings.ReplaceAll(msg, "\n", "\n  "))
	}
	if errors.As(err, &usageError{}) && !a.started {
		// The help of the command that refused the line (cobra's answer for an unknown
		// subcommand is its parent), not the root's list of commands.
		path := "tandem"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", path)
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

// importExit is the exit of an import whose rows were reported: 0 when every row landed,
// else the exit code of the outcome that decides (exchange.Summary.ExitOutcome): invalid 2,
// forbidden 6, leased 4, conflict 3. Kept here, beside exitCode, so that exit codes are mapped in one file.
func importExit(sum exchange.Summary) error {
	switch sum.ExitOutcome() {
	case exchange.Invalid:
		return &exitCodeError{code: exitUsage, msg: "import: " + rows(sum[exchange.Invalid]) + " invalid"}
	case exchange.Forbidden:
		return &exitCodeError{code: exitForbidden, msg: "import: " + rows(sum[exchange.Forbidden]) + " your permissions do not let you write"}
	case exchange.Leased:
		return &exitCodeError{code: exitLease, msg: "import: " + rows(sum[exchange.Leased]) + " held by someone else's lease"}
	case exchange.Conflict:
		return &exitCodeError{code: exitConflict, msg: "import: " + rows(sum[exchange.Conflict]) + " conflicted"}
	}
	return nil
}

// rows says "1 row" or "n rows".
func rows(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
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
	stdout, stderr io.Writer     // stdout is out: buffered
	out            *bufio.Writer // flushed by Run at the end, and by flush
	stdoutTTY      bool          // stdout is a terminal

	dsn    string // --db
	create bool   // --create
	user   string // --user
	as     string // --as
	fields string // --fields
	schema string // init's --schema

	tui          tuiFlags        // the root command's own flags, for the TUI
	showVersion  bool            // --version
	versionJSON  bool            // --version --json
	started      bool            // a command's RunE was reached (flags and arguments were accepted)
	reg          *store.Registry // loaded by registry()
	st           store.Store     // opened by store()
	localFlag    bool            // --local
	localFlagDef *pflag.Flag     // its definition (Changed: given on the command line)
	userFromDB   bool            // --user-from-db
	userFlagDef  *pflag.Flag     // --user's definition (Changed: given on the command line)
	localDone    bool            // resolveLocal ran
	local        *localState     // set when --local made --db name the local copy (local.go)
	// served is the user a session of tandem serve proved to be, nil outside a session:
	// the store is the server's, and the command may not change who writes or read
	// the server's files (see cmd_serve.go).
	served *store.Actor
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "tandem",
		Short: "A terminal editor for records that many people and programs change at once",
		Long: `tandem edits records that several people and programs change at the same time, and
never loses an update silently. Without a subcommand it opens the terminal UI on the
store named by --db (./tandem.db by default; created and filled with sample data on
first run). The subcommands are the non-interactive CLI for scripts and workers.

A store keeps its schema: its kinds of record and their fields. KIND in a command is
one of the store's kinds, singular or plural: product and document in the sample
schema, your own with tandem init --schema FILE (tandem schema show prints them).

Exit codes: 0 ok, 1 unexpected failure, 2 bad input or usage, 3 version conflict,
4 held by someone else's lease, 5 not found, 6 not allowed by field ownership.`,
		Example: `  tandem                                  # open the TUI on ./tandem.db
  tandem --db postgres://alice@db.example/tandem --user alice
  tandem list products
  tandem set product 42 price=31.50 --expect-version 3`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			a.started = true
			if a.served != nil {
				return a.checkServed(cmd)
			}
			// Checked for every command, not only where a write needs the role: a read
			// that accepted "--as sytem" would let a script's typo pass until its first
			// write.
			if _, err := store.ParseRole(a.as); err != nil {
				return usageErr(fmt.Errorf("--as: %w", err))
			}
			if a.dsn == "" && !cmd.Flags().Changed("db") {
				// Read here, not as the flag's default, so that --help never shows a
				// password from TANDEM_DB.
				a.dsn = envOr("TANDEM_DB", defaultDB)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.showVersion {
				return a.printVersion(cmd.Context())
			}
			return runDefault(cmd.Context(), a)
		},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.Flags().BoolVarP(&a.showVersion, "version", "v", false,
		"print tandem's version and schema version, and the schema version of the store --db names (with --json: as JSON)")
	root.Flags().BoolVar(&a.versionJSON, "json", false, "with --version: print it as JSON")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr(err) })

	addTUIFlags(root, &a.tui)
	pf := root.PersistentFlags()
	pf.StringVar(&a.dsn, "db", "",
		"store: a SQLite file path, a postgres:// DSN, a libpq key=value string, or a team server as ssh://[user@]host[:port] (default $TANDEM_DB, then "+defaultDB+")")
	pf.BoolVar(&a.create, "create", false,
		"create the store named by --db when it is a SQLite file that does not exist (empty; mode 0600)")
	pf.StringVar(&a.user, "user", defaultUser(),
		"who you are in history and leases (env TANDEM_USER, then USER)")
	pf.StringVar(&a.as, "as", string(store.RoleEditor), "write as editor (a person) or system (a program)")
	pf.StringVar(&a.fields, "fields", "", "field registry YAML file (default: the schema the store keeps)")
	pf.BoolVar(&a.localFlag, "local", false,
		"work on a local copy of the --db store that syncs itself (kept in $XDG_DATA_HOME/tandem/copies; config: local: true)")
	a.localFlagDef = pf.Lookup("local")
	pf.BoolVar(&a.userFromDB, "user-from-db", false,
		"on PostgreSQL, you are the database role you connect as (session_user), not --user (config: identity: database)")
	a.userFlagDef = pf.Lookup("user")

	for _, c := range commands(a) {
		root.AddCommand(c)
	}
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		help(cmd, args)
		a.kindsHelp(cmd)
	})
	return root
}

// kindsHelp ends the help of a command that takes a KIND with the kinds of the store --db
// names, when that store exists and answers within two seconds (help never creates one).
func (a *app) kindsHelp(cmd *cobra.Command) {
	if !strings.Contains(cmd.Use, "KIND") {
		return
	}
	if a.dsn == "" && !cmd.Flags().Changed("db") {
		a.dsn = envOr("TANDEM_DB", defaultDB)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
	defer cancel()
	st, err := a.store(ctx)
	if err != nil {
		return
	}
	where := "the store " + redact(a.dsn)
	if a.served != nil {
		// a.dsn is the server's TANDEM_DB or the default here, not what it serves; and
		// where the server's database is is none of a session's business.
		where = "the server's store"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\nKinds in %s: %s\n", safe.Text(where), safe.Text(kindList(st.Registry())))
}

// store opens the store named by --db with the registry of --fields, once. A SQLite file
// that does not exist is ENOTFOUND (exit 5) and is not created, unless --create was given.
func (a *app) store(ctx context.Context) (store.Store, error) {
	if a.st != nil {
		return a.st, nil
	}
	if err := a.resolveLocal(ctx); err != nil {
		return nil, err
	}
	if a.st != nil {
		return a.st, nil // the local copy, opened by resolveLocal
	}
	if a.create {
		st, created, err := a.createStore(ctx, nil)
		if created {
			fmt.Fprintf(a.stderr, "tandem: created %s (an empty store)\n", safe.Line(a.dsn))
		}
		return st, err
	}
	reg, err := a.registry()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, a.dsn, store.Options{Registry: reg})
	if err != nil {
		return nil, err
	}
	if err := a.takeServedUser(st); err != nil {
		st.Close()
		return nil, err
	}
	a.st = st
	return st, nil
}

// takeServedUser makes the user a team server proved by key (a store reached through
// ssh://) the user of this run: the server writes as them whatever the client says, so the
// TUI and messages say so too. A --user that names someone else is refused.
func (a *app) takeServedUser(st store.Store) error {
	r, ok := st.(interface{ User() string })
	if !ok || r.User() == "" || a.user == r.User() {
		return nil
	}
	if a.user != defaultUser() {
		return usagef("--user %s: through a team server you are %s (your key says so)", safe.Line(a.user), safe.Line(r.User()))
	}
	a.user = r.User()
	return nil
}

// createStore opens the store named by --db like store, creating it first when it is a
// SQLite file that does not exist: fill (nil: none) fills the new store before it appears
// at its path. created reports whether this call made the file (the caller says so); when
// another process created it at the same moment, createStore opens that store and created is
// false.
func (a *app) createStore(ctx context.Context, fill func(context.Context, store.Store) error) (st store.Store, created bool, err error) {
	if a.st != nil {
		return a.st, false, nil
	}
	if err := a.resolveLocal(ctx); err != nil {
		return nil, false, err
	}
	if a.st != nil {
		return a.st, false, nil // the local copy, opened by resolveLocal
	}
	reg, err := a.registry()
	if err != nil {
		return nil, false, err
	}
	st, created, err = createStore(ctx, a.dsn, store.Options{Registry: reg}, fill)
	if err != nil {
		return nil, false, err
	}
	a.st = st
	return st, created, nil
}

// registry loads the registry given on the command line, once: init's --schema, else
// --fields; nil when neither is given, and the store runs the schema it keeps. A store
// refuses one that is not its schema or, of the form before schemas, an overlay of it
// (see store/sqlite/schema.go).
func (a *app) registry() (*store.Registry, error) {
	path := a.fields
	if a.schema != "" {
		path = a.schema
	}
	if a.reg == nil && path != "" {
		reg, err := store.LoadRegistry(path)
		if err != nil {
			return nil, err
		}
		a.reg = reg
	}
	return a.reg, nil
}

// storeRegistry returns the schema of the store --db names, opening it.
func (a *app) storeRegistry(ctx context.Context) (*store.Registry, error) {
	st, err := a.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Registry(), nil
}

// actor returns ctx carrying the writer given by --user and --as.
func (a *app) actor(ctx context.Context) (context.Context, error) {
	if a.served != nil {
		return store.WithActor(ctx, *a.served), nil
	}
	role, err := store.ParseRole(a.as)
	if err != nil {
		return nil, usageErr(err)
	}
	if err := a.userFromRole(ctx); err != nil {
		return nil, err
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

// libpqKeyword finds a keyword of a libpq key=value connection string ("host=db
// dbname=tandem password=…") at the start of a word.
var libpqKeyword = regexp.MustCompile(`(?i)(^|\s)(host|hostaddr|port|dbname|user|password|passfile|` +
	`require_auth|channel_binding|connect_timeout|client_encoding|options|application_name|` +
	`fallback_application_name|keepalives|keepalives_idle|keepalives_interval|keepalives_count|` +
	`tcp_user_timeout|replication|gssencmode|sslmode|requiressl|sslcompression|sslcert|sslkey|` +
	`sslpassword|sslcertmode|sslrootcert|sslcrl|sslcrldir|sslsni|requirepeer|` +
	`ssl_min_protocol_version|ssl_max_protocol_version|krbsrvname|gsslib|gssdelegation|service|` +
	`target_session_attrs|load_balance_hosts|search_path)\s*=`)

// isPostgresDSN reports whether dsn names a PostgreSQL server rather than a SQLite file: a
// postgres:// or postgresql:// URL, or a libpq key=value connection string (a word that
// starts with one of libpq's keywords and "=", such as "host=db dbname=tandem").
func isPostgresDSN(dsn string) bool {
	return isPostgresURL(dsn)
}

// isFileDSN reports whether dsn names a SQLite file: neither a PostgreSQL server nor a team
// server (ssh://).
func isFileDSN(dsn string) bool { return !isPostgresDSN(dsn) && !isSSHDSN(dsn) }

// isPostgresURL is isPostgresDSN's test.
func isPostgresURL(dsn string) bool {
	l := strings.ToLower(strings.TrimSpace(dsn))
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://") || libpqKeyword.MatchString(dsn)
}

// checkDSN refuses a --db that is neither a file path nor a PostgreSQL DSN tandem would use.
func checkDSN(dsn string) error { return checkDSNAs("--db", dsn) }

// checkDSNAs is checkDSN for a DSN given as label (a flag or an argument), which its
// messages name.
func checkDSNAs(label, dsn string) error {
	if strings.TrimSpace(dsn) == "" {
		return store.Errorf(store.EINVALID, "%s is empty: give a SQLite file path or a postgres:// DSN", label)
	}
	if l := strings.ToLower(dsn); strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://") {
		// In postgres://u:p@ss@host the password holds an '@'. The URL parser takes the
		// password to end at the first '@' and the rest for the host, which then shows up
		// in every message: refuse before anything parses or prints it.
		rest, _, _ := strings.Cut(dsn[strings.Index(dsn, "://")+3:], "?")
		if strings.Count(rest, "@") > 1 {
			return store.Errorf(store.EINVALID, "%s: the postgres:// DSN has more than one '@' before its query; write an '@' in the user name or password as %%40", label)
		}
	}
	if isSSHDSN(dsn) {
		_, err := parseSSHDSN(label, dsn)
		return err
	}
	if !isPostgresDSN(dsn) && strings.Contains(strings.ToLower(dsn), "password=") {
		// Never a file whose name holds a password.
		return store.Errorf(store.EINVALID, "%s looks like a connection string with a password but is not one tandem understands; give a postgres:// URL or a key=value string such as \"host=H dbname=D\"", label)
	}
	return nil
}

// openStore opens the existing store a DSN names: postgres://, postgresql:// or a libpq
// key=value string is a PostgreSQL server (whose empty schema gets tandem's tables), anything
// else a SQLite file, which must exist: a missing one is ENOTFOUND (exit 5) and is not
// created. A malformed DSN or path is EINVALID (exit 2), a server that cannot be reached
// EUNAVAILABLE (exit 1). Messages never contain the DSN's password.
func openStore(ctx context.Context, dsn string, opts store.Options) (store.Store, error) {
	st, _, err := openOrCreate(ctx, dsn, opts, false, nil)
	return st, err
}

// createStore is openStore that creates a SQLite file that does not exist, filled by fill
// (nil: empty) before it appears at its path (see openSQLite); created reports
// whether this call made it. On PostgreSQL it is openStore, and fill is not called.
func createStore(ctx context.Context, dsn string, opts store.Options, fill func(context.Context, store.Store) error) (st store.Store, created bool, err error) {
	return openOrCreate(ctx, dsn, opts, true, fill)
}

func openOrCreate(ctx context.Context, dsn string, opts store.Options, create bool, fill func(context.Context, store.Store) error) (store.Store, bool, error) {
	if err := checkDSN(dsn); err != nil {
		return nil, false, err
	}
	var (
		st      store.Store
		created bool
		err     error
	)
	switch {
	case isSSHDSN(dsn):
		st, err = openRemote(ctx, dsn)
	case isPostgresDSN(dsn):
		st, err = openPostgres(ctx, dsn, opts)
	default:
		st, created, err = openSQLite(ctx, dsn, opts, create, fill)
	}
	if err != nil {
		// The stores' messages name the file or server (without a password) already.
		return nil, false, redactErr(err)
	}
	return st, created, nil
}

var (
	// userinfoPassword matches the password of a URL's user:password@. It runs to the last
	// '@' of the word: a password may hold an '@' (only what follows the last one is the
	// host), and hiding too much of a message is harmless where too little is not.
	userinfoPassword = regexp.MustCompile(`(://[^:/@\s]*):\S*@`)
	// keywordPassword matches password=... in keyword/value DSNs (quoted or not, spaces
	// around '=' allowed) and in query strings.
	keywordPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)`)
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

// flushing is a.stdout written through at once, for output that reports progress.
type flushing struct{ a *app }

func (f flushing) Write(p []byte) (int, error) {
	n, err := f.a.stdout.Write(p)
	if err == nil {
		err = f.a.flush()
	}
	return n, err
}

// flush writes out what the command printed so far: commands whose output is read line by
// line while they run (watch, lease --hold, worker) call it after each line.
func (a *app) flush() error { return a.out.Flush() }

// printVersion prints the release and the schema version this binary writes on each backend
// (their migrations are numbered apart), then the schema version of the store --db names,
// opened as every command opens it (which migrates an older one), beside the latest for its
// backend. No store there is said, not an error.
func (a *app) printVersion(ctx context.Context) error {
	type storeVersion struct {
		DB            string `json:"db"`
		Backend       string `json:"backend"`
		SchemaVersion int    `json:"schema_version,omitempty"`
		Error         string `json:"error,omitempty"`
	}
	backend := "sqlite"
	switch {
	case isPostgresDSN(a.dsn):
		backend = "postgres"
	case isSSHDSN(a.dsn):
		backend = "ssh"
	}
	latest := schemaVersions()
	v := struct {
		Version string `json:"version"`
		// SchemaVersion is the latest for the backend --db names: a store that is up to
		// date has it.
		SchemaVersion  int            `json:"schema_version"`
		SchemaVersions map[string]int `json:"schema_versions"`
		Store          storeVersion   `json:"store"`
	}{Version: releaseVersion(), SchemaVersion: latest[backend], SchemaVersions: latest,
		Store: storeVersion{DB: dsnWhere(a.dsn), Backend: backend}}
	reg, err := a.registry()
	if err != nil {
		return err
	}
	st, err := openStore(ctx, a.dsn, store.Options{Registry: reg})
	if err == nil {
		defer st.Close()
		if sv, ok := st.(interface{ SchemaVersion() int }); ok {
			v.Store.SchemaVersion = sv.SchemaVersion()
		}
	} else {
		v.Store.Error = err.Error()
	}
	if a.versionJSON {
		return writeJSON(a.stdout, v)
	}
	fmt.Fprintln(a.stdout, versionString())
	if v.Store.Error != "" {
		_, err := fmt.Fprintf(a.stdout, "store %s: not opened: %s\n", safe.Line(v.Store.DB), safe.Line(v.Store.Error))
		return err
	}
	if isSSHDSN(a.dsn) {
		// The server's tandem migrates its store; this one only speaks to it.
		_, err = fmt.Fprintf(a.stdout, "store %s: a team server's store at schema version %d\n", safe.Line(v.Store.DB), v.Store.SchemaVersion)
		return err
	}
	state := "up to date"
	if v.Store.SchemaVersion != v.SchemaVersion {
		state = fmt.Sprintf("this tandem writes %d", v.SchemaVersion)
	}
	_, err = fmt.Fprintf(a.stdout, "store %s: %s schema version %d (%s)\n",
		safe.Line(v.Store.DB), backendNames[backend], v.Store.SchemaVersion, state)
	return err
}

// backendNames are the backends' names in messages, by their keys in schemaVersions.
var backendNames = map[string]string{"sqlite": "SQLite", "postgres": "PostgreSQL"}

// releaseVersion is the release: set with -ldflags, else the module version, else "dev".
func releaseVersion() string {
	v := version
	if v == "" {
		v = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	return v
}

// versionString is the first line --version prints: the release and the schema version
// this binary writes on each backend.
func versionString() string {
	v := schemaVersions()
	return fmt.Sprintf("tandem %s (schema version: SQLite %d, PostgreSQL %d)", releaseVersion(), v["sqlite"], v["postgres"])
}

// schemaVersions is the schema version this binary writes on each backend, by backend.
func schemaVersions() map[string]int {
	return map[string]int{"sqlite": sqlite.LatestSchemaVersion(), "postgres": postgres.LatestSchemaVersion()}
}
