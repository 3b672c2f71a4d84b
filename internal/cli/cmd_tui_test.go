package cli

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/tui"
)

func TestTUIFlags_Options(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	root := newRootCmd(a)
	if err := root.ParseFlags([]string{"--lease-on-edit", "--no-color", "--draft-dir", "/tmp/d",
		"--on-conflict", "merge", "--lease-ttl", "30s"}); err != nil {
		t.Fatal(err)
	}
	got := a.tui.options(store.Actor{Name: "alice", Role: store.RoleEditor})
	want := tui.Options{User: "alice", Role: store.RoleEditor, LeaseOnEdit: true, NoColor: true,
		DraftDir: "/tmp/d", OnConflict: tui.OnConflictMerge, LeaseTTL: 30 * time.Second}
	if got.User != want.User || got.Role != want.Role || got.Lease != want.Lease || got.LeaseOnEdit != want.LeaseOnEdit ||
		got.NoColor != want.NoColor || got.DraftDir != want.DraftDir || got.OnConflict != want.OnConflict || got.LeaseTTL != want.LeaseTTL {
		t.Errorf("options = %+v, want %+v", got, want)
	}
}
