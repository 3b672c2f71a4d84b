-- tandem schema (PostgreSQL): find in text (issue 13). A search looks in descriptions,
-- categories, bodies and tags as well as skus, names and titles, through an index, not a
-- scan.
--
-- The new folded columns hold store.FoldValue of their field (store.SearchFold; a set's items
-- one per line); the rows that exist get them right after this script, in the same
-- transaction, and every write of the field writes its column.
--
-- Then, in Go (searchIndexes in search.go), every folded column gets a GIN index of pg_trgm's
-- trigrams, which answers LIKE '%…%' (the folded query, its wildcards escaped) without
-- reading every row. The extension is one per database while tandem stores may live in
-- several schemas of it: the migration uses it wherever it is installed and installs it in
-- the public schema when it is not (never in the store's own schema, whose DROP would take
-- every other store's indexes with it), so the opening role needs CREATE on the database the
-- first time (pg_trgm is a trusted extension), or a DBA runs CREATE EXTENSION pg_trgm first.
-- Queries shorter than a trigram (store.IndexedQuery) use strpos() and read every row.

ALTER TABLE products ADD COLUMN description_fold text, ADD COLUMN categories_fold text;
ALTER TABLE documents ADD COLUMN body_fold text, ADD COLUMN tags_fold text;

-- The planner chooses, for a page of search results in id order, between reading the primary
-- key in order until the page is full (a common word) and the trigram indexes (a rare one),
-- by its estimate of how many rows match, which it takes from the column's statistics. The
-- default sample (a 100-value histogram) puts a word in 1 record of 500 anywhere from 0.01%
-- to 1%; a 400-value one brings the estimate close enough to choose well.
ALTER TABLE products ALTER COLUMN sku_fold SET STATISTICS 400, ALTER COLUMN name_fold SET STATISTICS 400,
    ALTER COLUMN description_fold SET STATISTICS 400, ALTER COLUMN categories_fold SET STATISTICS 400;
ALTER TABLE documents ALTER COLUMN title_fold SET STATISTICS 400, ALTER COLUMN body_fold SET STATISTICS 400,
    ALTER COLUMN tags_fold SET STATISTICS 400;
