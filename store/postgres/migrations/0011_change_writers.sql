-- tandem schema version 11 (PostgreSQL): a reader of the change log waits only for this
-- store's own writers, not for every transaction on the server (store/postgres/feed.go has
-- the argument). A transaction that takes a change id first takes, and holds until it ends,
-- a shared advisory lock that names this schema's change log: class 1952542308 ("tand"),
-- object the oid of changes_id_seq. Writers never conflict on it (they all share it, and
-- nobody takes it exclusively); readers find the writers in flight in pg_locks, which every
-- role may read.
--
-- hold_change_log takes the lock. A relative save (relativeSave in store/postgres/record.go)
-- calls it from the change row's INSERT before the row takes its id; next_change_id, the
-- default of changes.id, calls it for every other write. No SECURITY DEFINER and no SET on
-- hold_change_log, as on no_lease_row: the sequence is found on the caller's search_path,
-- the store's schema, or on next_change_id's.
CREATE FUNCTION hold_change_log() RETURNS boolean LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared((1952542308::bigint << 32) | 'changes_id_seq'::regclass::oid::bigint);
    RETURN true;
END
$$;
CREATE OR REPLACE FUNCTION next_change_id() RETURNS bigint LANGUAGE plpgsql VOLATILE
    SECURITY DEFINER SET search_path FROM CURRENT
    AS $$
BEGIN
    PERFORM hold_change_log();
    RETURN nextval('changes_id_seq');
END
$$;
