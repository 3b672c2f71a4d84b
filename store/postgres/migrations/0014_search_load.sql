-- tandem schema version 14 (PostgreSQL): a bulk create writes its records' search rows itself.
--
-- Each search table's trigger (searchTableDDL in search.go) gets the condition that a bulk
-- create's COPY has not turned tandem.load on; the create then writes the same rows set-wise,
-- one statement per folded field (loadSearch), instead of a plpgsql call, a foreign key check
-- and a GIN insert per row and field. The triggers of the store's search tables are made
-- again with that condition, as searchTableDDL makes them now.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT g.tgname, c.relname, pg_get_triggerdef(g.oid) AS def
        FROM pg_trigger g
        JOIN pg_class c ON c.oid = g.tgrelid
        JOIN pg_namespace s ON s.oid = c.relnamespace
        JOIN pg_proc p ON p.oid = g.tgfoid
        WHERE s.nspname = current_schema() AND NOT g.tgisinternal AND g.tgqual IS NULL
          AND p.prosrc LIKE '%(id, fold) VALUES (NEW.id, NEW.%) ON CONFLICT (id) DO UPDATE SET fold = EXCLUDED.fold; RETURN NULL;%'
    LOOP
        EXECUTE format('DROP TRIGGER %I ON %I', r.tgname, r.relname);
        EXECUTE replace(r.def, ' FOR EACH ROW EXECUTE ',
            ' FOR EACH ROW WHEN (current_setting(''tandem.load'', true) IS DISTINCT FROM ''on'') EXECUTE ');
    END LOOP;
END $$;
