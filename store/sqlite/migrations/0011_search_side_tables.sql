-- tandem schema: search folds out of the record row (issue 11: history growth).
--
-- Until now every searched field's folded copy (store.FoldValue: the text folded by
-- store.SearchFold, a set's items one per line) was a column of the record's own row
-- (<field>_fold), the external content of its FTS5 index. SQLite rewrites the whole row on
-- every UPDATE, so a title edit of a document rewrote its body and the body's fold: 2 MiB per
-- save for a 1 MiB body, one copy of which stayed on the free list.
--
-- Now, as on PostgreSQL, every searched field has a side table (<table>_<field>_search: id,
-- fold) that holds its folded text, one row per record, and is the external content of the
-- field's FTS5 trigram index (<table>_<field>_fts, its column named fold). A save writes
-- the side row of a field only when it writes that field (a title edit touches the title's
-- side row alone); the record row holds the fields and nothing folded. Triggers on each
-- side table keep its index current; triggers on the record table remove a record's side
-- rows with it (whoever deletes it, whatever the connection's foreign_keys setting) and
-- follow a change of its id. The folds themselves are tandem's (Go), so the store writes
-- them (writeFolds in search.go): a record another program inserts has no side rows and is
-- not found by a search until tandem saves its searched fields, as a NULL fold column was
-- not before.
--
-- On an existing file, field by field: the old index and its triggers go (DROP COLUMN
-- refuses a column that a trigger names), the folds move from the column to the side table
-- (a NULL fold, from a row another program wrote, moves as no side row), the column is
-- dropped, and the index is made again from the side table (FTS5 'rebuild'). All of it in
-- the migration's one transaction: a file is at the old schema or at this one.

DROP TRIGGER products_sku_fts_insert;
DROP TRIGGER products_sku_fts_delete;
DROP TRIGGER products_sku_fts_update;
DROP TABLE products_sku_fts;
CREATE TABLE products_sku_search (id INTEGER PRIMARY KEY, fold TEXT NOT NULL);
INSERT INTO products_sku_search (id, fold) SELECT id, sku_fold FROM products WHERE sku_fold IS NOT NULL;
ALTER TABLE products DROP COLUMN sku_fold;
CREATE VIRTUAL TABLE products_sku_fts USING fts5(fold, content = 'products_sku_search', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO products_sku_fts (products_sku_fts) VALUES ('rebuild');
CREATE TRIGGER products_sku_fts_insert AFTER INSERT ON products_sku_search BEGIN
    INSERT INTO products_sku_fts (rowid, fold) VALUES (new.id, new.fold);
END;
CREATE TRIGGER products_sku_fts_delete AFTER DELETE ON products_sku_search BEGIN
    INSERT INTO products_sku_fts (products_sku_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
END;
CREATE TRIGGER products_sku_fts_update AFTER UPDATE ON products_sku_search BEGIN
    INSERT INTO products_sku_fts (products_sku_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
    INSERT INTO products_sku_fts (rowid, fold) VALUES (new.id, new.fold);
END;

DROP TRIGGER products_name_fts_insert;
DROP TRIGGER products_name_fts_delete;
DROP TRIGGER products_name_fts_update;
DROP TABLE products_name_fts;
CREATE TABLE products_name_search (id INTEGER PRIMARY KEY, fold TEXT NOT NULL);
INSERT INTO products_name_search (id, fold) SELECT id, name_fold FROM products WHERE name_fold IS NOT NULL;
ALTER TABLE products DROP COLUMN name_fold;
CREATE VIRTUAL TABLE products_name_fts USING fts5(fold, content = 'products_name_search', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO products_name_fts (products_name_fts) VALUES ('rebuild');
CREATE TRIGGER products_name_fts_insert AFTER INSERT ON products_name_search BEGIN
    INSERT INTO products_name_fts (rowid, fold) VALUES (new.id, new.fold);
END;
CREATE TRIGGER products_name_fts_delete AFTER DELETE ON products_name_search BEGIN
    INSERT INTO products_name_fts (products_name_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
END;
CREATE TRIGGER products_name_fts_update AFTER UPDATE ON products_name_search BEGIN
    INSERT INTO products_name_fts (products_name_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
    INSERT INTO products_name_fts (rowid, fold) VALUES (new.id, new.fold);
END;

DROP TRIGGER products_description_fts_insert;
DROP TRIGGER products_description_fts_delete;
DROP TRIGGER products_description_fts_update;
DROP TABLE products_description_fts;
CREATE TABLE products_description_search (id INTEGER PRIMARY KEY, fold TEXT NOT NULL);
INSERT INTO products_description_search (id, fold) SELECT id, description_fold FROM products WHERE description_fold IS NOT NULL;
ALTER TABLE products DROP COLUMN description_fold;
CREATE VIRTUAL TABLE products_description_fts USING fts5(fold, content = 'products_description_search', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO products_description_fts (products_description_fts) VALUES ('rebuild');
CREATE TRIGGER products_description_fts_insert AFTER INSERT ON products_description_search BEGIN
    INSERT INTO products_description_fts (rowid, fold) VALUES (new.id, new.fold);
END;
CREATE TRIGGER products_description_fts_delete AFTER DELETE ON products_description_search BEGIN
    INSERT INTO products_description_fts (products_description_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
END;
CREATE TRIGGER products_description_fts_update AFTER UPDATE ON products_description_search BEGIN
    INSERT INTO products_description_fts (products_description_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
    INSERT INTO products_description_fts (rowid, fold) VALUES (new.id, new.fold);
END;

DROP TRIGGER products_categories_fts_insert;
DROP TRIGGER products_categories_fts_delete;
DROP TRIGGER products_categories_fts_update;
DROP TABLE products_categories_fts;
CREATE TABLE products_categories_search (id INTEGER PRIMARY KEY, fold TEXT NOT NULL);
INSERT INTO products_categories_search (id, fold) SELECT id, categories_fold FROM products WHERE categories_fold IS NOT NULL;
ALTER TABLE products DROP COLUMN categories_fold;
CREATE VIRTUAL TABLE products_categories_fts USING fts5(fold, content = 'products_categories_search', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO products_categories_fts (products_categories_fts) VALUES ('rebuild');
CREATE TRIGGER products_categories_fts_insert AFTER INSERT ON products_categories_search BEGIN
    INSERT INTO products_categories_fts (rowid, fold) VALUES (new.id, new.fold);
END;
CREATE TRIGGER products_categories_fts_delete AFTER DELETE ON products_categories_search BEGIN
    INSERT INTO products_categories_fts (products_categories_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
END;
CREATE TRIGGER products_categories_fts_update AFTER UPDATE ON products_categories_search BEGIN
    INSERT INTO products_categories_fts (products_categories_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
    INSERT INTO products_categories_fts (rowid, fold) VALUES (new.id, new.fold);
END;

CREATE TRIGGER products_search_delete AFTER DELETE ON products BEGIN
    DELETE FROM products_sku_search WHERE id = old.id;
    DELETE FROM products_name_search WHERE id = old.id;
    DELETE FROM products_description_search WHERE id = old.id;
    DELETE FROM products_categories_search WHERE id = old.id;
END;
CREATE TRIGGER products_search_id AFTER UPDATE OF id ON products WHEN old.id IS NOT new.id BEGIN
    UPDATE products_sku_search SET id = new.id WHERE id = old.id;
    UPDATE products_name_search SET id = new.id WHERE id = old.id;
    UPDATE products_description_search SET id = new.id WHERE id = old.id;
    UPDATE products_categories_search SET id = new.id WHERE id = old.id;
END;

DROP TRIGGER documents_title_fts_insert;
DROP TRIGGER documents_title_fts_delete;
DROP TRIGGER documents_title_fts_update;
DROP TABLE documents_title_fts;
CREATE TABLE documents_title_search (id INTEGER PRIMARY KEY, fold TEXT NOT NULL);
INSERT INTO documents_title_search (id, fold) SELECT id, title_fold FROM documents WHERE title_fold IS NOT NULL;
ALTER TABLE documents DROP COLUMN title_fold;
CREATE VIRTUAL TABLE documents_title_fts USING fts5(fold, content = 'documents_title_search', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO documents_title_fts (documents_title_fts) VALUES ('rebuild');
CREATE TRIGGER documents_title_fts_insert AFTER INSERT ON documents_title_search BEGIN
    INSERT INTO documents_title_fts (rowid, fold) VALUES (new.id, new.fold);
END;
CREATE TRIGGER documents_title_fts_delete AFTER DELETE ON documents_title_search BEGIN
    INSERT INTO documents_title_fts (documents_title_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
END;
CREATE TRIGGER documents_title_fts_update AFTER UPDATE ON documents_title_search BEGIN
    INSERT INTO documents_title_fts (documents_title_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
    INSERT INTO documents_title_fts (rowid, fold) VALUES (new.id, new.fold);
END;

DROP TRIGGER documents_body_fts_insert;
DROP TRIGGER documents_body_fts_delete;
DROP TRIGGER documents_body_fts_update;
DROP TABLE documents_body_fts;
CREATE TABLE documents_body_search (id INTEGER PRIMARY KEY, fold TEXT NOT NULL);
INSERT INTO documents_body_search (id, fold) SELECT id, body_fold FROM documents WHERE body_fold IS NOT NULL;
ALTER TABLE documents DROP COLUMN body_fold;
CREATE VIRTUAL TABLE documents_body_fts USING fts5(fold, content = 'documents_body_search', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO documents_body_fts (documents_body_fts) VALUES ('rebuild');
CREATE TRIGGER documents_body_fts_insert AFTER INSERT ON documents_body_search BEGIN
    INSERT INTO documents_body_fts (rowid, fold) VALUES (new.id, new.fold);
END;
CREATE TRIGGER documents_body_fts_delete AFTER DELETE ON documents_body_search BEGIN
    INSERT INTO documents_body_fts (documents_body_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
END;
CREATE TRIGGER documents_body_fts_update AFTER UPDATE ON documents_body_search BEGIN
    INSERT INTO documents_body_fts (documents_body_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
    INSERT INTO documents_body_fts (rowid, fold) VALUES (new.id, new.fold);
END;

DROP TRIGGER documents_tags_fts_insert;
DROP TRIGGER documents_tags_fts_delete;
DROP TRIGGER documents_tags_fts_update;
DROP TABLE documents_tags_fts;
CREATE TABLE documents_tags_search (id INTEGER PRIMARY KEY, fold TEXT NOT NULL);
INSERT INTO documents_tags_search (id, fold) SELECT id, tags_fold FROM documents WHERE tags_fold IS NOT NULL;
ALTER TABLE documents DROP COLUMN tags_fold;
CREATE VIRTUAL TABLE documents_tags_fts USING fts5(fold, content = 'documents_tags_search', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO documents_tags_fts (documents_tags_fts) VALUES ('rebuild');
CREATE TRIGGER documents_tags_fts_insert AFTER INSERT ON documents_tags_search BEGIN
    INSERT INTO documents_tags_fts (rowid, fold) VALUES (new.id, new.fold);
END;
CREATE TRIGGER documents_tags_fts_delete AFTER DELETE ON documents_tags_search BEGIN
    INSERT INTO documents_tags_fts (documents_tags_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
END;
CREATE TRIGGER documents_tags_fts_update AFTER UPDATE ON documents_tags_search BEGIN
    INSERT INTO documents_tags_fts (documents_tags_fts, rowid, fold) VALUES ('delete', old.id, old.fold);
    INSERT INTO documents_tags_fts (rowid, fold) VALUES (new.id, new.fold);
END;

CREATE TRIGGER documents_search_delete AFTER DELETE ON documents BEGIN
    DELETE FROM documents_title_search WHERE id = old.id;
    DELETE FROM documents_body_search WHERE id = old.id;
    DELETE FROM documents_tags_search WHERE id = old.id;
END;
CREATE TRIGGER documents_search_id AFTER UPDATE OF id ON documents WHEN old.id IS NOT new.id BEGIN
    UPDATE documents_title_search SET id = new.id WHERE id = old.id;
    UPDATE documents_body_search SET id = new.id WHERE id = old.id;
    UPDATE documents_tags_search SET id = new.id WHERE id = old.id;
END;
