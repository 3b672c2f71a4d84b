-- tandem schema: find in text (issue 13). A search looks in descriptions, categories, bodies
-- and tags as well as skus, names and titles, through a full-text index, not a scan.
--
-- The new folded columns hold store.FoldValue of their field (store.SearchFold; a set's items
-- one per line); the rows that exist get them right after this script, in the same
-- transaction (fillFolds in search.go), and every write of the field writes its column.
--
-- One FTS5 table per folded column (<table>_<field>_fts), with the trigram tokenizer: it
-- answers substring queries (a phrase of trigrams), which word tokenizers cannot ("amme" in
-- "hammer"). The text it indexes is already folded by tandem, so it compares characters as
-- they are (case_sensitive 1). Each is an external-content table: the text lives once, in the
-- record table, and triggers keep the index current on every insert, delete and write of its
-- column, whoever writes (a save, a migration, another program). One table per column, not
-- one per kind, so that a title edit does not re-index a megabyte of body. The store checks
-- every candidate with instr() on the folded columns, so what it finds is the same exact
-- substring test as on the other stores. Queries shorter than a trigram cannot use the index
-- and scan the folded columns (store.IndexedQuery).

ALTER TABLE products ADD COLUMN description_fold TEXT;
ALTER TABLE products ADD COLUMN categories_fold TEXT;
ALTER TABLE documents ADD COLUMN body_fold TEXT;
ALTER TABLE documents ADD COLUMN tags_fold TEXT;

CREATE VIRTUAL TABLE products_sku_fts USING fts5(sku_fold, content = 'products', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO products_sku_fts (products_sku_fts) VALUES ('rebuild');
CREATE TRIGGER products_sku_fts_insert AFTER INSERT ON products BEGIN
    INSERT INTO products_sku_fts (rowid, sku_fold) VALUES (new.id, new.sku_fold);
END;
CREATE TRIGGER products_sku_fts_delete AFTER DELETE ON products BEGIN
    INSERT INTO products_sku_fts (products_sku_fts, rowid, sku_fold) VALUES ('delete', old.id, old.sku_fold);
END;
CREATE TRIGGER products_sku_fts_update AFTER UPDATE OF id, sku_fold ON products BEGIN
    INSERT INTO products_sku_fts (products_sku_fts, rowid, sku_fold) VALUES ('delete', old.id, old.sku_fold);
    INSERT INTO products_sku_fts (rowid, sku_fold) VALUES (new.id, new.sku_fold);
END;

CREATE VIRTUAL TABLE products_name_fts USING fts5(name_fold, content = 'products', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO products_name_fts (products_name_fts) VALUES ('rebuild');
CREATE TRIGGER products_name_fts_insert AFTER INSERT ON products BEGIN
    INSERT INTO products_name_fts (rowid, name_fold) VALUES (new.id, new.name_fold);
END;
CREATE TRIGGER products_name_fts_delete AFTER DELETE ON products BEGIN
    INSERT INTO products_name_fts (products_name_fts, rowid, name_fold) VALUES ('delete', old.id, old.name_fold);
END;
CREATE TRIGGER products_name_fts_update AFTER UPDATE OF id, name_fold ON products BEGIN
    INSERT INTO products_name_fts (products_name_fts, rowid, name_fold) VALUES ('delete', old.id, old.name_fold);
    INSERT INTO products_name_fts (rowid, name_fold) VALUES (new.id, new.name_fold);
END;

CREATE VIRTUAL TABLE products_description_fts USING fts5(description_fold, content = 'products', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO products_description_fts (products_description_fts) VALUES ('rebuild');
CREATE TRIGGER products_description_fts_insert AFTER INSERT ON products BEGIN
    INSERT INTO products_description_fts (rowid, description_fold) VALUES (new.id, new.description_fold);
END;
CREATE TRIGGER products_description_fts_delete AFTER DELETE ON products BEGIN
    INSERT INTO products_description_fts (products_description_fts, rowid, description_fold) VALUES ('delete', old.id, old.description_fold);
END;
CREATE TRIGGER products_description_fts_update AFTER UPDATE OF id, description_fold ON products BEGIN
    INSERT INTO products_description_fts (products_description_fts, rowid, description_fold) VALUES ('delete', old.id, old.description_fold);
    INSERT INTO products_description_fts (rowid, description_fold) VALUES (new.id, new.description_fold);
END;

CREATE VIRTUAL TABLE products_categories_fts USING fts5(categories_fold, content = 'products', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO products_categories_fts (products_categories_fts) VALUES ('rebuild');
CREATE TRIGGER products_categories_fts_insert AFTER INSERT ON products BEGIN
    INSERT INTO products_categories_fts (rowid, categories_fold) VALUES (new.id, new.categories_fold);
END;
CREATE TRIGGER products_categories_fts_delete AFTER DELETE ON products BEGIN
    INSERT INTO products_categories_fts (products_categories_fts, rowid, categories_fold) VALUES ('delete', old.id, old.categories_fold);
END;
CREATE TRIGGER products_categories_fts_update AFTER UPDATE OF id, categories_fold ON products BEGIN
    INSERT INTO products_categories_fts (products_categories_fts, rowid, categories_fold) VALUES ('delete', old.id, old.categories_fold);
    INSERT INTO products_categories_fts (rowid, categories_fold) VALUES (new.id, new.categories_fold);
END;

CREATE VIRTUAL TABLE documents_title_fts USING fts5(title_fold, content = 'documents', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO documents_title_fts (documents_title_fts) VALUES ('rebuild');
CREATE TRIGGER documents_title_fts_insert AFTER INSERT ON documents BEGIN
    INSERT INTO documents_title_fts (rowid, title_fold) VALUES (new.id, new.title_fold);
END;
CREATE TRIGGER documents_title_fts_delete AFTER DELETE ON documents BEGIN
    INSERT INTO documents_title_fts (documents_title_fts, rowid, title_fold) VALUES ('delete', old.id, old.title_fold);
END;
CREATE TRIGGER documents_title_fts_update AFTER UPDATE OF id, title_fold ON documents BEGIN
    INSERT INTO documents_title_fts (documents_title_fts, rowid, title_fold) VALUES ('delete', old.id, old.title_fold);
    INSERT INTO documents_title_fts (rowid, title_fold) VALUES (new.id, new.title_fold);
END;

CREATE VIRTUAL TABLE documents_body_fts USING fts5(body_fold, content = 'documents', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO documents_body_fts (documents_body_fts) VALUES ('rebuild');
CREATE TRIGGER documents_body_fts_insert AFTER INSERT ON documents BEGIN
    INSERT INTO documents_body_fts (rowid, body_fold) VALUES (new.id, new.body_fold);
END;
CREATE TRIGGER documents_body_fts_delete AFTER DELETE ON documents BEGIN
    INSERT INTO documents_body_fts (documents_body_fts, rowid, body_fold) VALUES ('delete', old.id, old.body_fold);
END;
CREATE TRIGGER documents_body_fts_update AFTER UPDATE OF id, body_fold ON documents BEGIN
    INSERT INTO documents_body_fts (documents_body_fts, rowid, body_fold) VALUES ('delete', old.id, old.body_fold);
    INSERT INTO documents_body_fts (rowid, body_fold) VALUES (new.id, new.body_fold);
END;

CREATE VIRTUAL TABLE documents_tags_fts USING fts5(tags_fold, content = 'documents', content_rowid = 'id', tokenize = 'trigram case_sensitive 1');
INSERT INTO documents_tags_fts (documents_tags_fts) VALUES ('rebuild');
CREATE TRIGGER documents_tags_fts_insert AFTER INSERT ON documents BEGIN
    INSERT INTO documents_tags_fts (rowid, tags_fold) VALUES (new.id, new.tags_fold);
END;
CREATE TRIGGER documents_tags_fts_delete AFTER DELETE ON documents BEGIN
    INSERT INTO documents_tags_fts (documents_tags_fts, rowid, tags_fold) VALUES ('delete', old.id, old.tags_fold);
END;
CREATE TRIGGER documents_tags_fts_update AFTER UPDATE OF id, tags_fold ON documents BEGIN
    INSERT INTO documents_tags_fts (documents_tags_fts, rowid, tags_fold) VALUES ('delete', old.id, old.tags_fold);
    INSERT INTO documents_tags_fts (rowid, tags_fold) VALUES (new.id, new.tags_fold);
END;
