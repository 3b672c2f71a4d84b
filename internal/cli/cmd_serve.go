package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/internal/serve"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/tui"
)

func newServeCmd(a *app) *cobra.Command {
	var listen, users, hostKey, draftDir, logFormat string
	limits := serve.DefaultLimits
	stopWait := 10 * time.Second
	cmd := &cobra.Command{
		Use:   "serve --users FILE [--listen ADDR] [--host-key FILE]",
		Short: "Serve the store over SSH to the people of a users file: the editor, and the CLI for scripts",
		Long: `serve runs tandem's team server: people connect with ssh and get the editor on the
store --db names, with no database credentials of their own. Each is known by their key
from the users file (name, role, authorized_keys lines), and that name is theirs in
history, leases and presence: --user cannot change it in a session. Unknown keys are
refused; there is no password login, no shell, no port, agent or X11 forwarding.

A viewer reads only; an editor writes records (editor and shared fields); an admin also
changes the schema (schema apply - over SSH) and restores others' deletes. A user's
kinds: [..] and subtrees: {KIND: [ID, ..]} limit which records they may write (a tree
kind's subtree: the record and everything below it). The store refuses every write
outside them (exit 6, saying what the user may write), and the editor shows such
records read-only before anyone types.

"ssh -p 2222 HOST" opens the editor; "ssh -p 2222 HOST list product --json" runs that
command as the user and exits with its exit code. Commands that read or write files of
the server (import FILE, export -o, field=@path, clone, sync, worker …) are refused.
A laptop works offline on a copy cloned through the server ("tandem clone
ssh://HOST:2222 FILE"): the clone and each sync log in with the person's key and write
as that user, under that user's role.

The users file is read again when it changes or on SIGHUP, without dropping sessions; the
sessions of a user removed from it end with a message. A bad file is refused: serve does
not start, or keeps the old one. The host key is made on first start (ed25519, mode 0600,
default: tandem_host_ed25519 beside the users file) and its fingerprint printed.
SIGTERM or Ctrl-C tells every session ("the server is stopping"), keeps their drafts,
releases their leases, waits at most --stop-wait for them to end and exits 0.

Limits (each refused or ended with a message to the client): --max-sessions in all and
--max-sessions-per-user open at once; an editor session with no input for --idle ends,
and so does one that sends more than --max-input bytes in one line or paste; an address
that offers --auth-per-minute unknown keys in a minute is refused for the rest of it.

A log line (log/slog, text or --log-format json) goes to stderr per connection (user, key
fingerprint, address, outcome, duration), per session and per write (user, key, kind, id,
outcome); never a field's value.

Exit codes: 0 stopped, 1 the server failed, 2 bad users file or flags.`,
		Example: `  tandem serve --db postgres://tandem@db/tandem --users users.yaml
  tandem serve --db team.db --users users.yaml --listen 0.0.0.0:2222 --host-key /etc/tandem/host_ed25519`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if users == "" {
				return usagef("serve needs --users FILE: who may connect, by key (see tandem serve --help)")
			}
			if hostKey == "" {
				hostKey = filepath.Join(filepath.Dir(users), "tandem_host_ed25519")
			}
			if err := limits.Check(); err != nil {
				return usageErr(err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The server's own writes (none today) are the operator's: a session
			// carries its own user.
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			opts := tui.Options{StoreID: st.StoreID(), OnConflict: tui.OnConflictAsk, DraftDir: draftDir}
			logger, err := serveLogger(a.stderr, logFormat)
			if err != nil {
				return err
			}
			srv, err := serve.New(serve.Config{
				Listen:  listen,
				HostKey: hostKey,
				Users:   users,
				Store:   st,
				TUI:     opts,
				Command: func(ctx context.Context, st store.Store, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
					return runServed(ctx, a.dsn, st, args, stdin, stdout, stderr)
				},
				Limits:   limits,
				StopWait: stopWait,
				Log:      logger,
				Out:      flushing{a},
			})
			if err != nil {
				return usageErr(err)
			}
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go func() {
				for range hup {
					if err := srv.Reload(); err != nil {
						fmt.Fprintf(a.stderr, "tandem serve: users file not reloaded, the old one stays: %s\n", safe.Line(err.Error()))
					}
				}
			}()
			return srv.Serve(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:2222", "address to listen on for SSH")
	fl.StringVar(&users, "users", "", "the users file: name, role (viewer, editor, admin) and keys of each person")
	fl.StringVar(&hostKey, "host-key", "", "the server's private key, made when missing (default: tandem_host_ed25519 beside --users)")
	fl.StringVar(&draftDir, "draft-dir", "", "where sessions' unsaved edits are kept (default: tandem/drafts in the server's cache directory)")
	fl.IntVar(&limits.Sessions, "max-sessions", limits.Sessions, "sessions open at once, all users together")
	fl.IntVar(&limits.PerUser, "max-sessions-per-user", limits.PerUser, "sessions one user may have open at once")
	fl.DurationVar(&limits.Idle, "idle", limits.Idle, "an editor session with no input for this long ends (its edits kept as a draft)")
	fl.IntVar(&limits.AuthPerMinute, "auth-per-minute", limits.AuthPerMinute, "unknown keys an address may offer in a minute before it is refused for the rest of it")
	fl.IntVar(&limits.Input, "max-input", limits.Input, "bytes an editor session may send in one line or paste")
	fl.DurationVar(&stopWait, "stop-wait", stopWait, "on SIGTERM, how long to wait for sessions to end before closing them")
	fl.StringVar(&logFormat, "log-format", "text", "the log's format on stderr: text or json")
	fl.Bool("json", false, "accepted for uniformity: serve prints no result")
	return cmd
}

// serveLogger is serve's log on w, in format text or json.
func serveLogger(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, usagef("--log-format %s: want text or json", safe.Line(format))
}

// servedCommands are the commands a session of tandem serve may run: those that read and
// write the server's store and nothing else of the server.
var servedCommands = map[string]bool{
	"list": true, "get": true, "create": true, "set": true, "adjust": true, "history": true,
	"move": true, "delete": true, "restore": true, "lease": true, "locks": true, "watch": true,
	"export": true, "import": true, "schema show": true, "schema diff": true, "schema apply": true, "help": true,
}

// runServed runs a CLI command for a session of tandem serve: on the server's store st
// (dsn names it in messages), as the actor the session proved (in ctx), with the session's
// streams. It returns the exit code.
func runServed(ctx context.Context, dsn string, st store.Store, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	act, err := store.ActorFrom(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tandem: %s\n", err)
		return exitFailure
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	a := &app{args: args, stdin: stdin, stdout: out, stderr: stderr, out: out, st: st, dsn: dsn, served: &act}
	return a.run(ctx, args, stderr)
}

// checkServed refuses, in a session of tandem serve, what would change who writes or
// which store, or touch the server's files.
func (a *app) checkServed(cmd *cobra.Command) error {
	for _, name := range []string{"db", "user", "user-from-db", "as", "fields", "create", "local"} {
		// The global flag, not a command's own of the same name (export --fields).
		if f := cmd.Root().PersistentFlags().Lookup(name); f != nil && f.Changed {
			return usagef("--%s cannot be given over SSH: you are %s (your key says so), on the server's store",
				name, a.served.Name)
		}
	}
	path := strings.TrimPrefix(cmd.CommandPath(), "tandem")
	path = strings.TrimSpace(path)
	top, _, _ := strings.Cut(path, " ")
	if path == "" {
		return usagef("over SSH give a command (%s), or connect with a terminal for the editor", servedList())
	}
	if !servedCommands[top] && !servedCommands[path] {
		return usagef("%s is not served over SSH: it works with files or processes of the server; commands here: %s", path, servedList())
	}
	if top == "import" && cmd.Flags().NArg() > 0 && cmd.Flags().Arg(0) != "-" {
		return usagef("import over SSH reads stdin only: ssh HOST import - < %s", safe.Line(cmd.Flags().Arg(0)))
	}
	if (path == "schema apply" || path == "schema diff") && cmd.Flags().Arg(0) != "-" {
		return usagef("%s over SSH reads the schema from stdin only: ssh HOST %s - < %s", path, path, safe.Line(cmd.Flags().Arg(0)))
	}
	if f := cmd.Flags().Lookup("allow-destructive"); path == "schema apply" && f.Changed {
		return usagef("--allow-destructive cannot be given over SSH: it writes the dropped values to a file on the server; apply it there")
	}
	if f := cmd.Flags().Lookup("output"); top == "export" && f != nil && f.Changed && f.Value.String() != "-" {
		return usagef("export over SSH writes to stdout only: ssh HOST export KIND > %s", safe.Line(f.Value.String()))
	}
	return nil
}

// servedList names the commands a session may run.
func servedList() string {
	return "list, get, create, set, adjust, history, move, delete, restore, lease, locks, watch, export, import -, schema show, schema diff -, schema apply -"
}
