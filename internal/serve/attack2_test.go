package serve

import (
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/store"
)

// A users file the operator got wrong in a way that reads as a limit, or hides a user, is
// refused, naming its line: an authorized_keys option (from=, restrict, command=,
// cert-authority…) tandem would not apply, a second users: list that would silently replace
// the first, a name with spaces around it (two users who read the same in history), and
// kinds: [] or subtrees: {} (which would limit nothing, not everything).
func TestLoadUsers_Attack2(t *testing.T) {
	k := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(testKey(t).PublicKey())))
	k2 := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(testKey(t).PublicKey())))
	user := func(name, extra, key string) string {
		return "  - name: " + name + "\n    role: editor\n" + extra + "    keys: ['" + key + "']\n"
	}
	for _, tc := range []struct{ file, want string }{
		{"users:\n" + user("a", "", `from="10.0.0.0/8" `+k), "u.yaml:4: key of \"a\": options"},
		{"users:\n" + user("a", "", `restrict,command="list" `+k), "u.yaml:4: key of \"a\": options"},
		{"users:\n" + user("a", "", `cert-authority `+k), "u.yaml:4: key of \"a\": options"},
		{"users:\n" + user("a", "", k+" a@laptop"), ""},
		{"users:\n" + user("a", "", k) + "users:\n" + user("b", "", k2), "u.yaml:5: users is given twice"},
		{"users:\n" + user("'alice '", "", k), "u.yaml:2: name: spaces around it"},
		{"users:\n" + user("a", "    kinds: []\n", k), "u.yaml:4: kinds: an empty list"},
		{"users:\n" + user("a", "    subtrees: {}\n", k), "u.yaml:4: subtrees: an empty mapping"},
	} {
		_, err := parseUsers("u.yaml", []byte(tc.file), store.DefaultRegistry())
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v; want it accepted", tc.file, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v; want %q", tc.file, err, tc.want)
		}
	}
}
