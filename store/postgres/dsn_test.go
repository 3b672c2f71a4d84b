package postgres

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// TestWithoutPassword: what a working copy keeps of a connection string is the string the
// driver reads as the same connection, less its password, however the password is written;
// the same string given without a password comes out the same.
func TestWithoutPassword(t *testing.T) {
	for _, c := range []struct{ with, without string }{
		{`host=db port=5433 password=pass\ wordTAIL dbname=team`, `host=db port=5433 dbname=team`},
		{`password='it\'s horse battery' host=db dbname='my db'`, `host=db dbname='my db'`},
		{`host=db password=sec@ret user=o\'neil`, `host=db user=o\'neil`},
		{`postgres://alice:sec%40ret@db:5432/team?sslmode=disable`, `postgres://alice@db:5432/team?sslmode=disable`},
		{`postgres://alice@db/team?password=syntax&search_path=s`, `postgres://alice@db/team?search_path=s`},
	} {
		got, err := WithoutPassword(c.with)
		if err != nil {
			t.Fatalf("WithoutPassword(%q): %v", c.with, err)
		}
		want, err := WithoutPassword(c.without)
		if err != nil {
			t.Fatalf("WithoutPassword(%q): %v", c.without, err)
		}
		if got != want {
			t.Errorf("WithoutPassword(%q) = %q, want %q (as without the password)", c.with, got, want)
		}
		back, err := parseDSN(got)
		if err != nil || back.Host != "db" {
			t.Errorf("the kept string %q does not parse to host db: %v", got, err)
		}
	}
}

// TestOpen_UnparsableKeepsPasswordOut: a connection string the driver cannot parse is
// refused (EINVALID) with a message that holds no piece of the password (three characters
// or more) that the message for the same string without a password does not hold, whatever
// the spelling, including words of the message itself.
func TestOpen_UnparsableKeepsPasswordOut(t *testing.T) {
	for _, c := range []struct{ dsn, password, without string }{
		{`host=db port=notaport password=pass\ wordTAIL`, `pass\ wordTAIL`, `host=db port=notaport`},
		{`host=db port=notaport password='it\'s battery'`, `it\'s battery`, `host=db port=notaport`},
		{`host=db password=syntax port=x`, "syntax", `host=db port=x`},
		{`postgres://alice:syntax@db:notaport/team`, "syntax", `postgres://alice@db:notaport/team`},
		{`host=db password='unterminated horse battery`, "unterminated horse battery", `host=db port=x`},
		{`postgres://alice:sec%40ret@db:5432/team?port=1x2`, "sec%40ret", `postgres://alice@db:5432/team?port=1x2`},
	} {
		_, err := Open(t.Context(), c.dsn, store.Options{})
		_, ref := Open(t.Context(), c.without, store.Options{})
		if store.ErrorCode(err) != store.EINVALID || ref == nil {
			t.Fatalf("Open(%q) = %v, want EINVALID (and an error for %q: %v)", c.dsn, err, c.without, ref)
		}
		for i := range len(c.password) - 2 {
			if p := c.password[i : i+3]; strings.Contains(err.Error(), p) && !strings.Contains(ref.Error(), p) {
				t.Errorf("Open(%q): the message shows %q, a piece of the password: %v", c.dsn, p, err)
			}
		}
	}
}

// TestOpen_NoPassword: a server that asks for a password gets the one in PGPASSWORD, else
// the password file's; with neither, Open's error is ErrNoPassword and names both.
func TestOpen_NoPassword(t *testing.T) {
	port, received := pgtest.PasswordServer(t)
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=alice dbname=team sslmode=disable", port)
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, fmt.Appendf(nil, "127.0.0.1:%d:team:alice:from the file\n", port), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Setenv("PGPASSWORD", "")
	t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))
	_, err := Open(t.Context(), dsn, store.Options{})
	if !errors.Is(err, ErrNoPassword) || store.ErrorCode(err) != store.EUNAVAILABLE ||
		!strings.Contains(err.Error(), "PGPASSWORD") || !strings.Contains(err.Error(), "PGPASSFILE") {
		t.Fatalf("Open without a password = %v; want ErrNoPassword (EUNAVAILABLE) naming PGPASSWORD and PGPASSFILE", err)
	}

	t.Setenv("PGPASSFILE", passfile)
	if _, err := Open(t.Context(), dsn, store.Options{}); errors.Is(err, ErrNoPassword) || err == nil {
		t.Fatalf("Open with a password file = %v; want the server's refusal", err)
	}
	t.Setenv("PGPASSWORD", "from the environment")
	if _, err := Open(t.Context(), dsn, store.Options{}); errors.Is(err, ErrNoPassword) || err == nil {
		t.Fatalf("Open with PGPASSWORD = %v; want the server's refusal", err)
	}
	got := received()
	if len(got) < 3 || got[len(got)-2] != "from the file" || got[len(got)-1] != "from the environment" {
		t.Errorf("the server received %q; want the file's password, then the environment's", got)
	}
}
