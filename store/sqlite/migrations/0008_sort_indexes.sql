-- tandem schema: sorted listings read from an index. The list sorts by any of these columns
-- (store.Registry.SortFields) and pages by keyset on (column, id), so every page is a range
-- of one index read forwards or backwards, never a sort of the whole table. Text compares
-- byte by byte (BINARY), as PostgreSQL's indexes below do with COLLATE "C".
CREATE INDEX products_sku_id ON products(sku, id);
CREATE INDEX products_name_id ON products(name, id);
CREATE INDEX products_price_id ON products(price, id);
CREATE INDEX products_stock_id ON products(stock, id);
CREATE INDEX products_availability_id ON products(availability, id);
CREATE INDEX documents_title_id ON documents(title, id);
