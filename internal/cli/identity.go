package cli

import (
	"context"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// identityDatabase is the config's identity that takes who writes from the database role.
const identityDatabase = "database"

// userFromRole makes the database role the store is connected as (session_user) the user,
// when --user-from-db is given, or the config's identity is database and --db names a
// PostgreSQL store: the server proved that name, so history, leases and presence carry it
// and --user cannot change it (a --user naming anyone else is refused). The flag on a
// store without database roles (a SQLite file, a local copy) is refused too; the config's
// identity leaves a local copy to --user.
func (a *app) userFromRole(ctx context.Context) error {
	on := a.userFromDB
	if !on {
		c, err := readUserConfig()
		if err != nil {
			return err
		}
		on = c.Identity == identityDatabase && isPostgresDSN(a.dsn)
	}
	if !on {
		return nil
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	rs, ok := st.(store.RoleStore)
	if !ok && !a.userFromDB {
		return nil // the config's identity, on a local copy of the PostgreSQL store
	}
	if !ok {
		return usagef("--user-from-db: %s has no database roles to tell who you are; it needs a PostgreSQL store (--db postgres://…)",
			safe.Line(a.dsn))
	}
	name, err := rs.SessionUser(ctx)
	if err != nil {
		return err
	}
	if f := a.userFlagDef; f != nil && f.Changed && a.user != name {
		return usagef("--user %s cannot be given: on this store you are the database role you connect as, %s "+
			"(--user-from-db, or identity: database in the config file); connect as another role to write as another",
			store.Quote(safe.Line(a.user)), store.Quote(safe.Line(name)))
	}
	a.user = name
	return nil
}
