-- tandem schema version 5 (PostgreSQL): search finds the same records on every store, for all
-- of Unicode. Each searched field has a column with its text folded by store.SearchFold
-- (format characters removed, NFKC, full case folding: "Straße" and "STRASSE" are both
-- "strasse"), and a search is a substring test of the folded query on these columns. ILIKE
-- and lower() follow the database's collation and Unicode tables, not Go's (ILIKE does not
-- find "STRASSE" for "straße"), so the folding is tandem's, in Go: the rows that exist get
-- their values right after this script, in the same transaction (fillFolds in record.go), and
-- every write of a searched field writes its folded column. A row another program writes
-- without them (NULL) is not found by a search until tandem saves the field again.
--
-- No pg_trgm index here: the extension lives in one schema of the database while tandem
-- stores may live in several (each with its own search_path), and a trigram index is the
-- full-text search issue 13 builds; strpos() on the folded column reads every row, as SQLite.

ALTER TABLE products ADD COLUMN sku_fold text;
ALTER TABLE products ADD COLUMN name_fold text;
ALTER TABLE documents ADD COLUMN title_fold text;
