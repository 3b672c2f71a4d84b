package cli

import (
	"encoding/json"
	"testing"
)

// TestLocal_LeaseOnSource: with --local, tandem lease works on the source, where the others
// edit (the copy has no leases): a lease taken holds the source's record against bob, and
// its release frees it; a save given its token (--lease) goes to the copy without it and
// is pushed with it; a change to a record bob leased waits, saying so. With the connection cut, acquire says why it cannot and what to do.
func TestLocal_LeaseOnSource(t *testing.T) {
	e := newLocalEnv(t, 5)
	wantExit(t, "the first --local run clones", e.run(t, "list", "products"), 0)

	r := e.run(t, "--user", "alice", "lease", "acquire", "product", "3", "--ttl", "5m")
	wantExit(t, "lease acquire with --local", r, 0)
	var l jsonLease
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || l.Token == "" || l.Holder != "alice" {
		t.Fatalf("lease acquire: %v %q", err, r.stdout)
	}
	wantExit(t, "bob's save on the source while alice holds the lease",
		tandem(t, e.direct, "--user", "bob", "set", "product", "3", "name=Bob's", "--expect-version", "1"), 4, "alice")
	// Her save with the token goes to the copy, and its push presents the token on the source.
	wantExit(t, "alice's save with her lease", e.run(t, "--user", "alice", "set", "product", "3", "name=Alice's",
		"--expect-version", "1", "--lease", l.Token), 0, "pushed to the source (1 change)")
	if got := field(t, e.direct, 3, "name"); got != "Alice's" {
		t.Fatalf("name on the source %v, want alice's save", got)
	}

	// A record bob leased on the source: alice's change waits in the copy, and she is told.
	mustTandem(t, e.direct, "--user", "bob", "lease", "acquire", "product", "5", "--ttl", "5m")
	wantExit(t, "alice's save of a record bob leased", e.run(t, "--user", "alice", "set", "product", "5", "name=Alice's",
		"--expect-version", "1"), 0, "1 change still pending", "product 5 is leased by bob on the source")

	e.proxy.Cut()
	wantExit(t, "lease acquire with the source cut", e.run(t, "--user", "alice", "lease", "acquire", "product", "4"), 1,
		"a lease is taken on the source", "does not answer", "try again once it answers")
	e.proxy.Restore()

	wantExit(t, "lease release with --local", e.run(t, "--user", "alice", "lease", "release", l.Token), 0, "released")
	mustTandem(t, e.direct, "--user", "bob", "set", "product", "3", "name=Bob's", "--expect-version", "2")
}
