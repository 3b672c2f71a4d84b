-- tandem schema version 15 (PostgreSQL): what a bulk create writes per record costs less. A
-- search table's rows go with their records by trigger, not by foreign key, and a bulk
-- create takes its change ids n at a time.
--
-- The foreign key of each search table (id REFERENCES the record table ON DELETE CASCADE)
-- checked, for every search row written, that its record exists, with a lookup and a lock of
-- the record's row: half the writing of the rows in a bulk create. Right after this
-- script, in the same transaction (searchGone in search.go), every search table of the
-- schema, whatever kind it serves, loses its foreign key and gets three triggers on its
-- record table instead (searchGoneDDL): one that deletes the search rows of the records a
-- DELETE removed (a transition table of the deleted rows), by tandem or any other program,
-- one that moves a record's rows when another program changes its id, and one that refuses
-- a TRUNCATE of the record table, as the foreign key did (it would drop records without
-- tombstones). Nothing writes a search row
-- but for a record that exists in the same transaction.

-- A bulk create takes its changes' ids in one call, not one next_change_id() call (a
-- SECURITY DEFINER plpgsql call with its own search_path) per change row: the same writer
-- lock first, then the sequence's next n values, in order (see feed.go).
CREATE OR REPLACE FUNCTION next_change_ids(n integer) RETURNS SETOF bigint LANGUAGE plpgsql VOLATILE
    SECURITY DEFINER SET search_path FROM CURRENT
    AS $$
BEGIN
    PERFORM hold_change_log();
    RETURN QUERY SELECT nextval('changes_id_seq') FROM generate_series(1, n);
END
$$;
