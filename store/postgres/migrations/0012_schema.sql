-- tandem schema version 12 (PostgreSQL): the store keeps its schema (issue 24). Every version
-- of the kinds and fields a store holds is a row here, its YAML in the canonical form
-- store.Registry.YAML gives; the newest row is the store's schema, which every client of a
-- shared store reads when it opens. The first open after this migration records the schema
-- the store was made with (the sample's, for a store made before schemas were data), in Go
-- (recordSchema in store/postgres/schema.go), under the same advisory lock as migrations.
CREATE TABLE tandem_schema (
    version    bigint PRIMARY KEY,
    yaml       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    applied_by text NOT NULL DEFAULT current_user
);
