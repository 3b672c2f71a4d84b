-- tandem schema, version 3: SKUs are unique by their key, not by their bytes. sku_key holds
-- store.SKUKey(sku) (invisible characters removed, NFKC, case-folded, trimmed): "ABC-1",
-- "abc-1 " and "ABC\u200b-1" share one key, and the unique index lets only one of them in,
-- also when two writers create them at the same moment. The key needs Unicode tables that SQL
-- does not have, so the rows that exist are given their keys by tandem itself, in Go, right
-- after this script and in the same transaction (fillSKUKeys in record.go); every write of a
-- sku writes its key. NULL (a row another program inserted) is never equal to a key.

ALTER TABLE products ADD COLUMN sku_key TEXT;
CREATE UNIQUE INDEX products_sku_key_unique ON products(sku_key);
