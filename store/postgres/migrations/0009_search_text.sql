-- tandem schema (PostgreSQL): find in text (issue 13). A search looks in descriptions,
-- categories, bodies and tags as well as skus, names and titles, through an index, not a
-- scan.
--
-- The new folded columns hold store.FoldValue of their field (store.SearchFold; a set's items
-- one per line); the rows that exist get them right after this script, in the same
-- transaction, and every write of the field writes its column.
--
-- Then, in Go (searchIndexes in search.go), every folded column gets a search table
-- (<table>_<field>_search: id, fold) with a GIN index of pg_trgm's trigrams, which answers
-- LIKE '%…%' (the folded query, its wildcards escaped) without reading every row, and a
-- trigger that copies the column there on every insert and every write of it. Not an index on
-- the record table: every new row version there (a title edit, a stock change) would add the
-- whole body's trigrams to it again. The search tables have a 400-value statistics target:
-- with the default, a word in 1 record of 500 is estimated anywhere from 0.01% to 1%, and the
-- planner may walk the primary key through every row for a rare word. The extension is one per database while tandem stores may live in
-- several schemas of it: the migration uses it wherever it is installed and installs it in
-- the public schema when it is not (never in the store's own schema, whose DROP would take
-- every other store's indexes with it), so the opening role needs CREATE on the database the
-- first time (pg_trgm is a trusted extension), or a DBA runs CREATE EXTENSION pg_trgm first.
-- Queries shorter than a trigram (store.IndexedQuery) use strpos() and read every row.

ALTER TABLE products ADD COLUMN description_fold text, ADD COLUMN categories_fold text;
ALTER TABLE documents ADD COLUMN body_fold text, ADD COLUMN tags_fold text;

