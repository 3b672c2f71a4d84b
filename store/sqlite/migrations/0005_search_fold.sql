-- tandem schema, version 5: search finds the same records on every store, for all of Unicode.
-- Each searched field has a column with its text folded by store.SearchFold (format
-- characters removed, NFKC, full case folding: "Straße" and "STRASSE" are both "strasse"), and
-- a search is a substring test of the folded query on these columns. SQLite's lower() folds
-- ASCII only, so the folding is tandem's, in Go: the rows that exist get their values right
-- after this script, in the same transaction (fillFolds in record.go), and every write of a
-- searched field writes its folded column. A row another program writes without them (NULL)
-- is not found by a search until tandem saves the field again.
--
-- No index: a substring test reads every row either way (a full-text index is issue 13's).

ALTER TABLE products ADD COLUMN sku_fold TEXT;
ALTER TABLE products ADD COLUMN name_fold TEXT;
ALTER TABLE documents ADD COLUMN title_fold TEXT;
