package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestCLI_ExitCodes checks the exit code of every error class, that the message on stderr
// starts with "tandem: ", and that a refused command changed nothing.
func TestCLI_ExitCodes(t *testing.T) {
	besideOthers(t)
	dsn := newSQLiteStore(t)
	dir := filepath.Dir(dsn)
	p := mustCreate(t, dsn, "product", "sku=EXIT-1", "name=Exit codes", "price=5.00", "stock=10")
	leased := mustCreate(t, dsn, "product", "sku=EXIT-2", "name=Leased", "stock=10")
	d := mustCreate(t, dsn, "document", "title=Exit codes", "body=one line")
	pid, lid, did := fmt.Sprint(p.ID), fmt.Sprint(leased.ID), fmt.Sprint(d.ID)
	// A second save makes version 1 stale for the conflict case.
	mustTandem(t, dsn, "set", "product", pid, "name=Exit codes, v2", "--expect-version", "1")

	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("a", 16<<20+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	badFields := filepath.Join(dir, "fields.yaml")
	if err := os.WriteFile(badFields, []byte("product:\n  - {name: sku, type: int}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	leaseToken := mustLease(t, dsn, leased.ID, "alice")

	tests := []struct {
		name string
		args []string
		want int
	}{
		{"unknown command", []string{"frobnicate"}, exitUsage},
		{"unknown flag", []string{"list", "products", "--colour"}, exitUsage},
		{"too few arguments", []string{"adjust", "product", pid, "stock"}, exitUsage},
		{"unknown kind", []string{"get", "widget", "1"}, exitUsage},
		{"bad id", []string{"get", "product", "forty-two"}, exitUsage},
		{"unknown field", []string{"set", "product", pid, "colour=red", "--expect-version", "2"}, exitUsage},
		{"wrong type", []string{"set", "product", pid, "stock=abc", "--expect-version", "2"}, exitUsage},
		{"bad money", []string{"set", "product", pid, "price=12.345", "--expect-version", "2"}, exitUsage},
		{"bad enum", []string{"set", "product", pid, "availability=maybe", "--expect-version", "2"}, exitUsage},
		{"name over 1000 characters", []string{"set", "product", pid, "name=" + strings.Repeat("n", 1001), "--expect-version", "2"}, exitUsage},
		{"body over 16 MiB", []string{"set", "document", did, "body=@" + big, "--expect-version", "1"}, exitUsage},
		{"invalid UTF-8", []string{"set", "product", pid, "name=bad \xff byte", "--expect-version", "2"}, exitUsage},
		{"control character", []string{"set", "product", pid, "name=bell\a", "--expect-version", "2"}, exitUsage},
		{"no equals sign", []string{"set", "product", pid, "name", "--expect-version", "2"}, exitUsage},
		{"missing expect-version", []string{"set", "product", pid, "name=x"}, exitUsage},
		{"adjust a non-counter", []string{"adjust", "product", pid, "price", "1"}, exitUsage},
		{"create without required name", []string{"create", "product", "sku=NEW-1"}, exitUsage},
		{"duplicate sku", []string{"create", "product", "sku=EXIT-1", "name=Twin"}, exitUsage},
		{"control character in user", []string{"--user", "eve\x1b[2J", "adjust", "product", pid, "stock", "1"}, exitUsage},
		{"bad role", []string{"--as", "robot", "adjust", "product", pid, "stock", "1"}, exitUsage},
		{"broken field registry", []string{"--fields", badFields, "get", "product", pid}, exitUsage},
		{"missing directory", []string{"--db", filepath.Join(dir, "no", "such", "dir.db"), "list", "products"}, exitUsage},
		{"conflict", []string{"set", "product", pid, "name=stale", "--expect-version", "1"}, exitConflict},
		{"lease held by alice", []string{"set", "product", lid, "name=mine", "--expect-version", "1"}, exitLease},
		{"lease held by alice, adjust", []string{"adjust", "product", lid, "stock", "1"}, exitLease},
		{"wrong lease token", []string{"adjust", "product", lid, "stock", "1", "--lease", "not-a-token"}, exitLease},
		{"not found", []string{"get", "product", "99999"}, exitNotFound},
		{"set not found", []string{"set", "product", "99999", "name=x", "--expect-version", "1"}, exitNotFound},
		{"history not found", []string{"history", "document", "99999"}, exitNotFound},
		{"editor writes a system field", []string{"set", "product", pid, "checksum=abc", "--expect-version", "2"}, exitForbidden},
		{"system writes an editor field", []string{"--as", "system", "set", "product", pid, "name=x", "--expect-version", "2"}, exitForbidden},
	}
	beforeP, beforeD := mustGet(t, dsn, "product", p.ID), mustGet(t, dsn, "document", d.ID)
	beforeL := mustGet(t, dsn, "product", leased.ID)
	beforeN := countRecords(t, dsn, "product")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tandem(t, dsn, tt.args...)
			if r.code != tt.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.want, r.stdout, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, "tandem: ") {
				t.Errorf("stderr %q does not start with \"tandem: \"", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("a refused command printed to stdout: %q", r.stdout)
			}
		})
	}
	if got := mustGet(t, dsn, "product", p.ID); !sameJSON(t, got, beforeP) {
		t.Errorf("refused commands changed product %d:\nbefore %+v\nafter  %+v", p.ID, beforeP, got)
	}
	if got := mustGet(t, dsn, "product", leased.ID); !sameJSON(t, got, beforeL) {
		t.Errorf("refused commands changed product %d:\nbefore %+v\nafter  %+v", leased.ID, beforeL, got)
	}
	if got := mustGet(t, dsn, "document", d.ID); !sameJSON(t, got, beforeD) {
		t.Errorf("refused commands changed document %d:\nbefore %+v\nafter  %+v", d.ID, beforeD, got)
	}
	if got := countRecords(t, dsn, "product"); got != beforeN {
		t.Errorf("refused creates added products: %d, want %d", got, beforeN)
	}

	t.Run("lease token lets the holder write", func(t *testing.T) {
		r := tandem(t, dsn, "--user", "alice", "set", "product", lid, "name=by the holder", "--expect-version", "1", "--lease", leaseToken)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	})
}

// TestCLI_UnknownRole: an --as that names no role is exit 2 for every command, reads and
// the TUI as much as writes, before any store is opened or created.
func TestCLI_UnknownRole(t *testing.T) {
	besideOthers(t)
	dsn := seededStore(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--as", "god", "list", "products"},
		{"--as", "sytem", "get", "product", "1"},
		{"history", "product", "1", "--as", "God"},
		{"locks", "--as", ""},
		{"watch", "--as", "editors"},
		{"export", "products", "--as", "root"},
		{"lease", "acquire", "product", "1", "--as", "admin"},
		{"--as", "system ", "set", "product", "1", "name=x", "--expect-version", "1"},
		{"--db", filepath.Join(dir, "new.db"), "--as", "god"},
		{"--db", filepath.Join(dir, "new.db"), "--as", "god", "init"},
	} {
		r := tandem(t, dsn, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--as: unknown role") {
			t.Errorf("%s: exit %d, stderr %q; want %d and --as: unknown role", strings.Join(args, " "), r.code, r.stderr, exitUsage)
		}
	}
	if names := dirNames(t, dir); len(names) > 0 {
		t.Errorf("a refused command made %v", names)
	}
	if got := mustGet(t, dsn, "product", 1); got.Version != 1 {
		t.Errorf("product 1 is at version %d after refused commands, want 1", got.Version)
	}
}

// TestCLI_UsageHintNamesCommand: a command line cobra refuses ends with the help to read,
// that of the command that refused it.
func TestCLI_UsageHintNamesCommand(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "unused.db")
	for _, tc := range []struct {
		args []string
		help string
	}{
		{[]string{"lease", "acquire", "product", "1", "--bogus"}, "tandem lease acquire"},
		{[]string{"lease", "bogus"}, "tandem lease"},
		{[]string{"get", "product"}, "tandem get"},
		{[]string{"lsit"}, "tandem"},
		{[]string{"--bogus"}, "tandem"},
	} {
		r := tandem(t, dsn, tc.args...)
		want := "\nRun '" + tc.help + " --help' for usage.\n"
		if r.code != exitUsage || !strings.HasSuffix(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want %d ending %q", strings.Join(tc.args, " "), r.code, r.stderr, exitUsage, want)
		}
	}
}

// TestCLI_UnreachableServer checks that a PostgreSQL server that cannot be reached is exit 1,
// quickly, and that the password in the DSN never appears in the message.
func TestCLI_UnreachableServer(t *testing.T) {
	r := tandem(t, "postgres://alice:s3cret-pw@127.0.0.1:1/tandem?sslmode=disable&connect_timeout=2", "list", "products")
	if r.code != exitFailure {
		t.Errorf("exit %d, want %d: %s", r.code, exitFailure, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "s3cret-pw") {
		t.Errorf("the password leaked: %s", r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "tandem: ") {
		t.Errorf("stderr %q does not start with \"tandem: \"", r.stderr)
	}
}

func TestExitCode(t *testing.T) {
	rec := &store.Record{Kind: store.KindProduct, ID: 1, Version: 2}
	tests := []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{errors.New("disk on fire"), exitFailure},
		{usagef("bad"), exitUsage},
		{store.Errorf(store.EINVALID, "bad"), exitUsage},
		{fmt.Errorf("save: %w", &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: rec}), exitConflict},
		{&store.LeaseError{}, exitLease},
		{store.Errorf(store.ELEASE, "held"), exitLease},
		{store.Errorf(store.ENOTFOUND, "gone"), exitNotFound},
		{&store.OwnershipError{Kind: store.KindProduct, Field: "checksum", Owner: store.OwnerSystem, Role: store.RoleEditor}, exitForbidden},
		{store.Errorf(store.EBUSY, "busy"), exitFailure},
		{store.Errorf(store.EUNAVAILABLE, "down"), exitFailure},
		{&exitCodeError{code: 1}, 1},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"open postgres://alice:s3cret@db:5432/x: refused", "open postgres://alice:xxxxx@db:5432/x: refused"},
		{"postgresql://bob:p%40ss@h/db?sslmode=disable", "postgresql://bob:xxxxx@h/db?sslmode=disable"},
		{"postgres://h/db?user=a&password=hunter2&sslmode=disable", "postgres://h/db?user=a&password=xxxxx&sslmode=disable"},
		{"host=h password=hunter2 dbname=x", "host=h password=xxxxx dbname=x"},
		{"postgres://alice@db/x", "postgres://alice@db/x"},
		{"./tandem.db", "./tandem.db"},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	err := redactErr(fmt.Errorf("open postgres://a:pw@h/x: %w", store.Errorf(store.EUNAVAILABLE, "down")))
	if strings.Contains(err.Error(), "pw@") || store.ErrorCode(err) != store.EUNAVAILABLE {
		t.Errorf("redactErr = %q (code %s), want the password gone and the code kept", err, store.ErrorCode(err))
	}
}

// TestRedact_PasswordWithAt checks the redaction of every DSN form a message may quote: the
// password of a URL runs to the last '@' before the host.
func TestRedact_PasswordWithAt(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:abc@secretpart@host/x":               "postgres://u:xxxxx@host/x",
		"open postgres://u:a@b@c@h:5432/x: refused":        "open postgres://u:xxxxx@h:5432/x: refused",
		"host=h password='two words' dbname=x":             "host=h password=xxxxx dbname=x",
		"host=h password = hunter2 dbname=x":               "host=h password = xxxxx dbname=x",
		"postgres://u@h/x?sslpassword=k&password=p%40ss":   "postgres://u@h/x?sslpassword=xxxxx&password=xxxxx",
		"postgres://u@h/x?application_name=a@b":            "postgres://u@h/x?application_name=a@b",
		"host=h password='it\\'s' dbname=x":                "host=h password=xxxxx dbname=x",
		"two: postgres://a:p1@h1/x and postgres://b:p2@h2": "two: postgres://a:xxxxx@h1/x and postgres://b:xxxxx@h2",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
