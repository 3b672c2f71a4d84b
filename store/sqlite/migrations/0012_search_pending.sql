-- tandem schema: a clone may leave its search index to be built later (issue 12).
--
-- Building the FTS5 trigram indexes is most of what a clone of many products costs, and a
-- search does not need them to find the right records: the folded text is in the side
-- tables (search_side_tables), and a search without the index scans them with the same
-- substring test. So a working copy's bulk load (LoadCopy) leaves each FTS5 table empty
-- and without the triggers that keep it current, and writes a row here, in the load's
-- transaction: the FTS5 table, the kind whose search it serves, and the DDL of its
-- triggers. While a kind has rows here its searches scan; the first open with write access
-- rebuilds each index from its side table, makes its triggers and deletes the rows, in one
-- transaction (workcopy_search.go). Every other store never has a row here.
--
-- A table of its own in a numbered migration, not a working copy's wc_ table: a tandem
-- that predates it would search the empty index and find nothing, so it must refuse the
-- file (a schema newer than it), which the version number does.

CREATE TABLE search_pending (
    fts      TEXT NOT NULL PRIMARY KEY, -- a full-text index left empty
    kind     TEXT NOT NULL,             -- the kind whose search it serves
    triggers TEXT NOT NULL              -- JSON array: the DDL of the triggers that keep it current
) WITHOUT ROWID;
