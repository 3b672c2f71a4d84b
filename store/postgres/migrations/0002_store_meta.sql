-- tandem schema version 2 (PostgreSQL): the store's own metadata. store_id is the store's
-- identity: a random id (a version-4 UUID from pg_strong_random, as 32 hex digits) made once,
-- when the schema is first migrated, never derived from the DSN, so the store keeps it when
-- its server, database name or password changes.
CREATE TABLE store_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
INSERT INTO store_meta (key, value) VALUES ('store_id', replace(gen_random_uuid()::text, '-', ''));
