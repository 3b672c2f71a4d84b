package serve

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	gossh "golang.org/x/crypto/ssh"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Role is what a user of the server may do: read (viewer), write as an editor (editor), or
// that and more (admin).
type Role string

// The roles a users file may give.
const (
	RoleViewer Role = "viewer"
	RoleEditor Role = "editor"
	RoleAdmin  Role = "admin"
)

// User is one person of the users file: the name history, leases and presence show, the
// role, and the public keys that prove who they are.
type User struct {
	Name string
	Role Role
	// Keys are the user's public keys, in wire format (ssh.PublicKey.Marshal), as strings.
	Keys []string
	// Kinds and Subtrees limit what the user may write (see store.Permissions); empty: no
	// limit.
	Kinds    []store.Kind
	Subtrees map[store.Kind][]int64
}

// Permissions are what the user may write, as the store checks them.
func (u *User) Permissions() *store.Permissions {
	return &store.Permissions{Access: store.Access(u.Role), Kinds: u.Kinds, Subtrees: u.Subtrees}
}

// Grant says, in one string, everything that decides what the user may do: a session
// whose user's grant changes on a reload ends.
func (u *User) Grant() string { return u.Permissions().Allows(u.Name) }

// Users is the parsed users file: who may connect, by key.
type Users struct {
	byKey  map[string]*User // by the key's wire format
	byName map[string]*User
}

// Lookup returns the user whose key k is, or nil.
func (u *Users) Lookup(k gossh.PublicKey) *User {
	if u == nil {
		return nil
	}
	return u.byKey[string(k.Marshal())]
}

// Has reports whether the user name still holds the key k with the grant grant (User.Grant:
// role and limits): a session whose answer turns false after a reload ends.
func (u *Users) Has(name, grant string, k gossh.PublicKey) bool {
	got := u.Lookup(k)
	return got != nil && got.Name == name && got.Grant() == grant
}

// Len is the number of users.
func (u *Users) Len() int { return len(u.byName) }

// LoadUsers reads and checks the users file at path. Its form:
//
//	users:
//	  - name: alice
//	    role: editor          # viewer, editor or admin
//	    keys:
//	      - ssh-ed25519 AAAA... alice@laptop
//	    kinds: [part, supplier]   # optional: the only kinds alice may write
//	    subtrees:                 # optional: tree kinds only at these records and below
//	      area: [12, 40]
//
// Kinds and subtrees are checked against reg, the store's schema (nil: not checked). Any
// error names the file and line; nothing is half loaded.
func LoadUsers(path string, reg *store.Registry) (*Users, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	return parseUsers(path, data, reg)
}

// fileError is an error at a line of the users file.
func fileError(path string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
}

func parseUsers(path string, data []byte, reg *store.Registry) (*Users, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		// yaml's messages say "line N: …".
		return nil, fmt.Errorf("%s: %v", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:1: want a mapping with users: a list of {name, role, keys}", path)
	}
	root := doc.Content[0]
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "users" {
			return nil, fileError(path, k.Line, "unknown key %q (want users)", k.Value)
		}
		if list != nil {
			// YAML keeps the last of two: the people of the first list would go unnoticed.
			return nil, fileError(path, k.Line, "users is given twice: make it one list")
		}
		list = v
	}
	if list == nil {
		return nil, fileError(path, root.Line, "no users: list the people who may connect")
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fileError(path, list.Line, "users: want a list of {name, role, keys}")
	}
	us := &Users{byKey: map[string]*User{}, byName: map[string]*User{}}
	for _, n := range list.Content {
		u, err := parseUser(path, n, us, reg)
		if err != nil {
			return nil, err
		}
		us.byName[u.Name] = u
	}
	return us, nil
}

func parseUser(path string, n *yaml.Node, us *Users, reg *store.Registry) (*User, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fileError(path, n.Line, "a user is a mapping with name, role and keys")
	}
	u := &User{}
	var keys *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, fileError(path, k.Line, "%s is given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			if v.Kind != yaml.ScalarNode {
				return nil, fileError(path, v.Line, "name: want text")
			}
			if err := checkName(v.Value); err != nil {
				return nil, fileError(path, v.Line, "name: %v", err)
			}
			if us.byName[v.Value] != nil {
				return nil, fileError(path, v.Line, "name %q is given to two users", v.Value)
			}
			u.Name = v.Value
		case "role":
			switch r := Role(v.Value); r {
			case RoleViewer, RoleEditor, RoleAdmin:
				u.Role = r
			default:
				return nil, fileError(path, v.Line, "role %q: want viewer, editor or admin", v.Value)
			}
		case "keys":
			if v.Kind != yaml.SequenceNode {
				return nil, fileError(path, v.Line, "keys: want a list of authorized_keys lines")
			}
			keys = v
		case "kinds":
			var kinds []string
			if err := v.Decode(&kinds); err != nil {
				return nil, fileError(path, v.Line, "kinds: want a list of kind names")
			}
			if len(kinds) == 0 {
				// No limit is written by leaving kinds out: an empty list reads as "none"
				// but would give every kind.
				return nil, fileError(path, v.Line, "kinds: an empty list limits nothing: name kinds, leave kinds out for all, or make the user a viewer")
			}
			for _, kind := range kinds {
				u.Kinds = append(u.Kinds, store.Kind(kind))
			}
		case "subtrees":
			if err := v.Decode(&u.Subtrees); err != nil {
				return nil, fileError(path, v.Line, "subtrees: want a mapping of a tree kind to a list of record ids ({area: [12, 40]})")
			}
			if len(u.Subtrees) == 0 {
				return nil, fileError(path, v.Line, "subtrees: an empty mapping limits nothing: name a tree kind and its records, or leave subtrees out")
			}
		default:
			return nil, fileError(path, k.Line, "unknown key %q (want name, role, keys, kinds, subtrees)", k.Value)
		}
	}
	if u.Name == "" {
		return nil, fileError(path, n.Line, "a user without a name")
	}
	if u.Role == "" {
		return nil, fileError(path, n.Line, "user %q has no role (viewer, editor or admin)", u.Name)
	}
	if err := checkLimits(u, reg); err != nil {
		return nil, fileError(path, n.Line, "%v", err)
	}
	if keys == nil || len(keys.Content) == 0 {
		return nil, fileError(path, n.Line, "user %q has no keys", u.Name)
	}
	for _, kn := range keys.Content {
		if kn.Kind != yaml.ScalarNode {
			return nil, fileError(path, kn.Line, "a key is one authorized_keys line")
		}
		pk, _, options, _, err := gossh.ParseAuthorizedKey([]byte(kn.Value))
		if err != nil {
			return nil, fileError(path, kn.Line, "key of %q: %v", u.Name, err)
		}
		if len(options) > 0 {
			// from=, restrict, command=, expiry-time=, cert-authority: OpenSSH would
			// apply them, tandem does not; a limit that is written but not kept is worse
			// than none.
			return nil, fileError(path, kn.Line, "key of %q: options (%s) are not applied here: give the key alone (type, key, comment); limit the user with role, kinds and subtrees",
				u.Name, safe.Line(strings.Join(options, ",")))
		}
		wire := string(pk.Marshal())
		if other := us.byKey[wire]; other != nil || containsKey(u.Keys, wire) {
			owner := u.Name
			if other != nil {
				owner = other.Name
			}
			return nil, fileError(path, kn.Line, "key %s is given twice (to %q): a key proves one person", gossh.FingerprintSHA256(pk), owner)
		}
		u.Keys = append(u.Keys, wire)
	}
	for _, k := range u.Keys {
		us.byKey[k] = u
	}
	return u, nil
}

// checkLimits refuses limits of u that name a kind reg does not have, subtrees of a kind
// that is not a tree, or a subtree without roots; reg nil checks only the last.
func checkLimits(u *User, reg *store.Registry) error {
	known := func(k store.Kind) error {
		if reg != nil && !reg.Has(k) {
			return fmt.Errorf("user %q: unknown kind %s (kinds: %s)", u.Name, store.Quote(safe.Line(string(k))), kindList(reg))
		}
		return nil
	}
	for _, k := range u.Kinds {
		if err := known(k); err != nil {
			return err
		}
	}
	for k, roots := range u.Subtrees {
		if err := known(k); err != nil {
			return err
		}
		if reg != nil && !reg.Tree(k) {
			return fmt.Errorf("user %q: subtrees of %s: %s records are not a tree", u.Name, k, k)
		}
		if len(roots) == 0 {
			return fmt.Errorf("user %q: subtrees of %s: name the records at the top of each", u.Name, k)
		}
	}
	return nil
}

// kindList names reg's kinds, for a message.
func kindList(reg *store.Registry) string {
	var names []string
	for _, k := range reg.Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

func containsKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// checkName refuses a user name that cannot stand in history and on a terminal: empty, with
// spaces around it, too long, not UTF-8, or with characters that change what a terminal
// shows (an escape sequence or a bidirectional override in a name would reach every session
// that shows it).
func checkName(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("empty")
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("spaces around it: %q and %q would read the same in history", s, strings.TrimSpace(s))
	case !utf8.ValidString(s):
		return fmt.Errorf("not valid UTF-8")
	case utf8.RuneCountInString(s) > 200:
		return fmt.Errorf("longer than 200 characters")
	case strings.ContainsFunc(s, safe.Unsafe):
		return fmt.Errorf("holds control characters (escape sequences, bidirectional overrides)")
	}
	return nil
}
