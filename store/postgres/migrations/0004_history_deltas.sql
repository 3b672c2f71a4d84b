-- tandem schema version 4 (PostgreSQL): history stores what changed, and the change log no
-- longer makes every writer wait for the one before it.

-- History: a row is a snapshot (every field, as before) or a delta: the fields that differ
-- from the record's previous history version, on top of the chain that starts at snapshot
-- version base. store.Registry.NewHistoryRow decides which, RebuildHistory reads them back.
-- Every row written before this version is a snapshot, and stays one; no row is rewritten.
ALTER TABLE history
    ALTER COLUMN snapshot DROP NOT NULL,
    ADD COLUMN base bigint,  -- delta rows: the version of their chain's snapshot; NULL for a snapshot
    ADD COLUMN delta jsonb,  -- delta rows: {"set": {field: value}, "patch": {field: line patch}}
    ADD CONSTRAINT history_snapshot_or_delta
        CHECK ((snapshot IS NULL) = (delta IS NOT NULL) AND (base IS NULL) = (delta IS NULL));

-- The change log. Ids came from change_counter, whose one row every write locked until its
-- COMMIT: writers of the whole schema queued behind each other. Now an id is a sequence value
-- taken by the change row's insert, the last statement of a write, and readers deliver an id
-- only once nothing below it can still commit (store/postgres/feed.go has the argument).
-- next_change_id first makes sure the transaction has its xid: a reader's horizon relies on
-- every transaction that holds an id having had an xid before it took the id. It runs with
-- its owner's rights (and search path), so roles that may only write the tables need no
-- grant on the sequence.
DROP TABLE change_counter;
CREATE SEQUENCE changes_id_seq AS bigint CACHE 1 OWNED BY changes.id;  -- CACHE 1: values in time order across sessions
SELECT setval('changes_id_seq', coalesce(max(id), 0) + 1, false) FROM changes;
CREATE FUNCTION next_change_id() RETURNS bigint LANGUAGE plpgsql VOLATILE
    SECURITY DEFINER SET search_path FROM CURRENT
    AS $$
BEGIN
    PERFORM pg_current_xact_id();
    RETURN nextval('changes_id_seq');
END
$$;
ALTER TABLE changes
    ALTER COLUMN id SET DEFAULT next_change_id(),
    ADD COLUMN xid xid8;  -- the writing transaction; NULL for rows from before version 4
ALTER TABLE changes ALTER COLUMN xid SET DEFAULT pg_current_xact_id();

-- Writes of one record are found by version, as on SQLite: a history version reads the
-- operation log since the previous one, and a conflict the writes since its base version.
DROP INDEX changes_record;
CREATE INDEX changes_record ON changes (kind, record_id, version);
