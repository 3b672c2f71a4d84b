-- tandem schema version 3 (PostgreSQL): SKUs are unique by their key, not by their bytes.
-- sku_key holds store.SKUKey(sku) (invisible characters removed, NFKC, case-folded, trimmed):
-- "ABC-1", "abc-1 " and "ABC\u200b-1" share one key, and the unique index lets only one of
-- them in, also when two transactions create them at the same moment (the second waits for
-- the first and then fails with 23505). The key uses Go's Unicode tables, which PostgreSQL's
-- normalize() and lower() do not match exactly, so the existing rows get their keys from
-- tandem, in Go, right after this script and in the same transaction (fillSKUKeys in
-- record.go); every write of a sku writes its key.

ALTER TABLE products ADD COLUMN sku_key text;
CREATE UNIQUE INDEX products_sku_key_unique ON products (sku_key);
