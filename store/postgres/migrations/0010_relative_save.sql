-- tandem schema version 10 (PostgreSQL): a relative save is one statement, and the save path
-- maintains no index it does not read.
--
-- no_lease_row is the lease check of a relative save (relativeSave in
-- store/postgres/record.go): it raises SQLSTATE TL001 when a row of leases exists for the
-- record and one of the written groups (live or not: the full save decides what such a row
-- means), and is true otherwise. The save calls it from the change row's INSERT, on the row
-- the UPDATE wrote, so it runs once the record's row lock is held; being VOLATILE, its query
-- takes a snapshot of its own then, and sees every lease committed before the lock was
-- granted: the check the full save makes with a read after its locking read. The error rolls
-- the whole statement back. No SECURITY DEFINER and no SET: both would make every call save
-- and restore settings, and the caller reads leases with its own rights on the full save's
-- path anyway; the table is found on the caller's search_path, the store's schema.
CREATE FUNCTION no_lease_row(k text, r bigint, g text[]) RETURNS boolean LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM leases WHERE kind = k AND record_id = r AND grp = ANY(g)) THEN
        RAISE EXCEPTION 'a lease row concerns % % (groups %)', k, r, g USING ERRCODE = 'TL001';
    END IF;
    RETURN true;
END
$$;

-- Every keyed save inserts a key row. The index on expires_at made that two b-tree inserts
-- per save for the benefit of PurgeKeys alone, an explicit maintenance call that nothing on
-- the save path makes; a purge now reads the key table once (as SQLite's, schema 10 there).
DROP INDEX idempotency_expires_at;

-- The keys of a key row and the kind of a change row are compared byte by byte (COLLATE "C",
-- SQLite's BINARY), not by the database's collation: they are only ever looked up by
-- equality, and each save descends both b-trees with a dozen comparisons, which under a
-- libc or ICU collation are strcoll calls. Only the indexes on these columns are rebuilt;
-- the tables are not rewritten.
ALTER TABLE idempotency ALTER COLUMN scope TYPE text COLLATE "C", ALTER COLUMN key TYPE text COLLATE "C";
ALTER TABLE changes ALTER COLUMN kind TYPE text COLLATE "C";
