package cli

import (
	"slices"
	"testing"
)

// A TANDEM_SSH of blanks is no command: ssh runs, not the first of tandem's own options.
func TestSSHArgs_BlankCommandEnv(t *testing.T) {
	t.Setenv(sshCommandEnv, "  ")
	args := sshTarget{host: "team", port: "2222", user: "-bob"}.sshArgs()
	want := []string{"ssh", "-T", "-o", "ConnectTimeout=15", "-p", "2222", "-l", "-bob", "--", "team", "store-protocol"}
	if !slices.Equal(args, want) {
		t.Fatalf("ssh args = %q, want %q", args, want)
	}
}
