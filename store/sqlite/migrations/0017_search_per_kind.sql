-- tandem schema: one search table per kind, not per searched field (issue 24: a schema of
-- 50 kinds of 40 fields opens in under 100 ms).
--
-- Until now every searched field had a side table of folds (<table>_<field>_search), an
-- FTS5 trigram index over it (<table>_<field>_fts, with its shadow tables) and three
-- triggers: ten searched fields made some fifty tables and thirty triggers of a kind, all
-- of which every connection parses when it first reads the file. Now a kind has one side
-- table (<table>_search: key, fold), one row per record and folded field, and one FTS5
-- index over it (<table>_fts). A row's key is the record's id shifted left by 10 bits,
-- or'ed with the field's slot, which this table keeps: keys sort as ids do, a record's rows
-- are one range of keys, and a search keeps the rows of the searched fields' slots.
--
-- The Go part of this migration (mergeSearchTables in search_migrate.go) moves every kind's
-- folds from its fields' side tables into its own, with their slots, builds the kind's
-- index from them and drops the old tables and triggers, in the migration's transaction.

CREATE TABLE IF NOT EXISTS search_slots (
    tbl   TEXT    NOT NULL, -- a kind's table
    field TEXT    NOT NULL, -- one of its folded fields
    slot  INTEGER NOT NULL, -- the field's slot in the table's search keys: 0 to 1023
    PRIMARY KEY (tbl, field),
    UNIQUE (tbl, slot)
) WITHOUT ROWID;
