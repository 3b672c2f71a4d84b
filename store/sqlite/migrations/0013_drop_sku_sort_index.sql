-- tandem schema: the sorted listing by sku reads the index of sku's UNIQUE constraint.
--
-- That index (sqlite_autoindex_products_1) holds sku and, as every SQLite index does, the
-- rowid, which is id: it is ordered by (sku, id) already, and SQLite reads it for the
-- listing's ORDER BY sku, id and its keyset (sku, id) > (?, ?) (EXPLAIN QUERY PLAN chose it
-- over products_sku_id even while both existed). products_sku_id (0008) was a second copy
-- of the same order that every product write kept current and every clone built.
-- PostgreSQL keeps its products_sku_id: its sku constraint's index compares by the
-- database's collation, the listing's by bytes (COLLATE "C").

DROP INDEX IF EXISTS products_sku_id;
