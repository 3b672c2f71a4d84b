package postgres

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tandem-editor/tandem/store"
)

// What tandem shows and keeps of a connection string. The string is parsed by the driver
// (pgconn.ParseConfig), and messages name the server by what the parse gave, never by the
// text: a password written with an escape or quotes (password=pass\ word, password='it\'s')
// defeats any search for it in the text. The driver's own parse errors quote the text, so
// they are never shown either.

// ErrNoPassword is the cause of Open's EUNAVAILABLE error when the server asks for a password
// and none was found: not in the connection string, nor in PGPASSWORD, nor in the password
// file (~/.pgpass, or the file PGPASSFILE names).
var ErrNoPassword = errors.New("the server asks for a password and none was given")

// parseDSN parses dsn with the driver's parser. Its error is EINVALID and holds nothing of
// dsn: the driver's message quotes the string, password and all, when it cannot tell the
// password apart.
func parseDSN(dsn string) (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "not a usable PostgreSQL connection string: %s "+
			"(the string is not repeated here, as it may hold a password)", parseProblem(dsn))
	}
	return cfg, nil
}

// parseProblem says in general terms what may be wrong with a connection string the driver
// refused, from its form alone.
func parseProblem(dsn string) string {
	l := strings.ToLower(dsn)
	if strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://") {
		return "a URL postgres://USER@HOST:PORT/DATABASE?PARAM=VALUE is expected, with a number for the port " +
			"and any reserved character in the user or password %-escaped"
	}
	return "key=value pairs are expected (host=H port=5432 dbname=D user=U), with a number for the port, " +
		"values that hold spaces in single quotes and quotes or backslashes in them escaped with a backslash"
}

// Describe names the server and store dsn points to, for messages and output:
// user@host:port/database, and the search_path when the string sets one. It is built from
// the parsed string and never holds the password. EINVALID when dsn cannot be parsed.
func Describe(dsn string) (string, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return "", err
	}
	return describe(*cfg), nil
}

// describe names a server for messages: user@host:port/database, then the search_path when
// one is set; never the password.
func describe(c pgconn.Config) string {
	s := fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
	if p := c.RuntimeParams["search_path"]; p != "" {
		s += "?search_path=" + url.QueryEscape(p)
	}
	return s
}

// WithoutPassword returns dsn with its password taken out and everything else kept, in the
// same form (a URL stays a URL; a key=value string comes back with each value quoted). It is
// what may be written to disk: at connection time the driver finds the password in
// PGPASSWORD or the password file. EINVALID when dsn cannot be parsed, or when the result
// would not name the same server, user, database and parameters.
func WithoutPassword(dsn string) (string, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return "", err
	}
	var out string
	if isURL(dsn) {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", store.Errorf(store.EINVALID, "not a usable PostgreSQL connection string: %s", parseProblem(dsn))
		}
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		q := u.Query()
		q.Del("password")
		u.RawQuery = q.Encode()
		out = u.String()
	} else {
		pairs, err := keywordValues(dsn)
		if err != nil {
			return "", store.Errorf(store.EINVALID, "not a usable PostgreSQL connection string: %s", parseProblem(dsn))
		}
		var b strings.Builder
		for _, p := range pairs {
			if p[0] == "password" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p[0] + "=" + quoteValue(p[1]))
		}
		out = b.String()
	}
	// The driver must read the same connection from what is kept (the password aside).
	kept, err := pgconn.ParseConfig(out)
	if err != nil || !sameConnection(cfg, kept) {
		return "", store.Errorf(store.EINVALID, "the connection string to %s cannot be kept without its password; "+
			"give the password in PGPASSWORD or the password file instead of the string", describe(*cfg))
	}
	return out, nil
}

// WithPassword returns dsn with password as its password, in dsn's form. EINVALID when dsn
// cannot be parsed.
func WithPassword(dsn, password string) (string, error) {
	if _, err := parseDSN(dsn); err != nil {
		return "", err
	}
	if isURL(dsn) {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", store.Errorf(store.EINVALID, "not a usable PostgreSQL connection string: %s", parseProblem(dsn))
		}
		name := ""
		if u.User != nil {
			name = u.User.Username()
		}
		u.User = url.UserPassword(name, password)
		q := u.Query()
		q.Del("password")
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " password=" + quoteValue(password), nil // the last one counts
}

func isURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// sameConnection reports whether two parsed strings reach the same server as the same user,
// database and parameters, passwords aside.
func sameConnection(a, b *pgconn.Config) bool {
	return a.Host == b.Host && a.Port == b.Port && a.User == b.User && a.Database == b.Database &&
		a.ConnectTimeout == b.ConnectTimeout && (a.TLSConfig == nil) == (b.TLSConfig == nil) &&
		len(a.Fallbacks) == len(b.Fallbacks) && maps.Equal(a.RuntimeParams, b.RuntimeParams)
}

// quoteValue writes a key=value value as libpq reads it back: as it is when it holds no
// space, quote or backslash, else in single quotes with quotes and backslashes escaped.
func quoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\v\f'\\") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// keywordValues splits a key=value connection string into its keys and unescaped values, in
// order, by libpq's rules as the driver applies them: a value runs to the next space unless it
// is quoted, and a backslash takes the next character literally.
func keywordValues(s string) ([][2]string, error) {
	const space = " \t\n\r\v\f"
	var out [][2]string
	s = strings.TrimLeft(s, space)
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, errors.New("a keyword without '='")
		}
		key := strings.Trim(s[:eq], space)
		if key == "" || strings.ContainsAny(key, space) {
			return nil, errors.New("a malformed keyword")
		}
		s = strings.TrimLeft(s[eq+1:], space)
		var raw string
		switch {
		case s == "":
		case s[0] != '\'':
			end := 0
			for ; end < len(s) && !strings.ContainsRune(space, rune(s[end])); end++ {
				if s[end] == '\\' {
					end++
					if end == len(s) {
						break
					}
				}
			}
			end = min(end, len(s))
			raw, s = s[:end], s[end:]
		default:
			s = s[1:]
			end := 0
			for ; end < len(s) && s[end] != '\''; end++ {
				if s[end] == '\\' {
					end++
				}
			}
			if end >= len(s) {
				return nil, errors.New("an unterminated quoted value")
			}
			raw, s = s[:end], s[end+1:]
		}
		out = append(out, [2]string{key, unescape(raw)})
		s = strings.TrimLeft(s, space)
	}
	return out, nil
}

// unescape drops each backslash and keeps the character after it.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i == len(s) {
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
