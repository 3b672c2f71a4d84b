package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

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
