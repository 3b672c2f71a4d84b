-- tandem schema version 10 (PostgreSQL): a relative save is one statement, and the save path
-- maintains no index it does not read.
--
-- save_change_id is the id of a save's change row, taken as next_change_id() takes it, after
-- checking that no lease row concerns the save: it raises SQLSTATE TL001 when a row of
-- leases exists for the record and one of the written groups (live or not: the full save
-- decides what such a row means). relativeSave (store/postgres/record.go) calls it from the
-- change row's INSERT, which reads the row the UPDATE wrote, so it runs after the record's
-- row lock is held; being VOLATILE, its query takes a snapshot of its own then, and sees
-- every lease committed before the lock was granted: the check the full save makes with a
-- read after its locking read. An error rolls the whole statement back.
CREATE FUNCTION save_change_id(k text, r bigint, g text[]) RETURNS bigint LANGUAGE plpgsql VOLATILE
    SECURITY DEFINER SET search_path FROM CURRENT
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM leases WHERE kind = k AND record_id = r AND grp = ANY(g)) THEN
        RAISE EXCEPTION 'a lease row concerns % % (groups %)', k, r, g USING ERRCODE = 'TL001';
    END IF;
    PERFORM pg_current_xact_id();
    RETURN nextval('changes_id_seq');
END
$$;

-- Every keyed save inserts a key row. The index on expires_at made that two b-tree inserts
-- per save for the benefit of PurgeKeys alone, an explicit maintenance call that nothing on
-- the save path makes; a purge now reads the key table once (as SQLite's, schema 10 there).
DROP INDEX idempotency_expires_at;
