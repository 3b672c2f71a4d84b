package cli

import (
	"encoding/json"
	"testing"
)

// TestLocal_LeaseOnSource: with --local, tandem lease works on the source, where the others
// edit (the copy has no leases): a lease taken holds the source's record against bob, and
// its release frees it. With the connection cut, acquire says why it cannot and what to do.
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

	e.proxy.Cut()
	wantExit(t, "lease acquire with the source cut", e.run(t, "--user", "alice", "lease", "acquire", "product", "4"), 1,
		"a lease is taken on the source", "does not answer", "try again once it answers")
	e.proxy.Restore()

	wantExit(t, "lease release with --local", e.run(t, "--user", "alice", "lease", "release", l.Token), 0, "released")
	mustTandem(t, e.direct, "--user", "bob", "set", "product", "3", "name=Bob's", "--expect-version", "1")
}
