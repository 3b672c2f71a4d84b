-- tandem schema version 2: the store's own metadata. store_id is the store's identity: 128
-- random bits made once, when the store is created (or, for a store made by an older tandem,
-- when it is first opened with write access). It never derives from the file's path, so a
-- moved file keeps it; drafts and working copies that belong to this store carry it.
CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO store_meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));
