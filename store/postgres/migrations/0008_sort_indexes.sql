-- tandem schema: sorted listings read from an index. The list sorts by any of these columns
-- (store.Registry.SortFields) and pages by keyset on (column, id), so every page is a range
-- of one index read forwards or backwards, never a sort of the whole table. Text columns are
-- indexed and compared COLLATE "C" (byte order), the order SQLite's BINARY gives, so both
-- stores list in the same order whatever the database's collation.
CREATE INDEX products_sku_id ON products (sku COLLATE "C", id);
CREATE INDEX products_name_id ON products (name COLLATE "C", id);
CREATE INDEX products_price_id ON products (price, id);
CREATE INDEX products_stock_id ON products (stock, id);
CREATE INDEX products_availability_id ON products (availability COLLATE "C", id);
CREATE INDEX documents_title_id ON documents (title COLLATE "C", id);
