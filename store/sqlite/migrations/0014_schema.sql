-- tandem schema: the store keeps its own schema (issue 24). Each row is one version of the
-- schema (store.Registry.YAML(), the canonical file form); the newest is the store's. A store
-- made before this version gets the sample schema recorded as version 1 when it is next
-- opened with write access (recordSchema in schema.go), with every record as it was. The
-- tables of a recorded schema's kinds, their indexes and search tables are made from the
-- schema itself (schema.go), in the transaction that records it.
CREATE TABLE tandem_schema (
    version    INTEGER PRIMARY KEY,
    yaml       TEXT    NOT NULL,
    applied_at TEXT    NOT NULL,
    applied_by TEXT    NOT NULL
);
