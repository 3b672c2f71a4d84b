-- tandem schema, version 1. Record tables have one real column per registry field (same
-- names); sets are JSON arrays of strings, money is INTEGER cents, times are TEXT in UTC
-- ISO-8601 with milliseconds ('2026-12-01T10:05:00.000Z') so they sort as text.

CREATE TABLE products (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    sku          TEXT    NOT NULL UNIQUE,
    name         TEXT    NOT NULL DEFAULT '',
    description  TEXT    NOT NULL DEFAULT '',
    categories   TEXT    NOT NULL DEFAULT '[]',
    price        INTEGER NOT NULL DEFAULT 0,
    stock        INTEGER NOT NULL DEFAULT 0,
    availability TEXT    NOT NULL DEFAULT 'in_stock',
    thumbnail    TEXT    NOT NULL DEFAULT '',
    search_index TEXT    NOT NULL DEFAULT '',
    checksum     TEXT    NOT NULL DEFAULT '',
    last_sync_at TEXT,
    version      INTEGER NOT NULL DEFAULT 1,
    updated_at   TEXT    NOT NULL,
    updated_by   TEXT    NOT NULL
);

CREATE TABLE documents (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_id  INTEGER REFERENCES documents(id),
    title      TEXT    NOT NULL DEFAULT '',
    body       TEXT    NOT NULL DEFAULT '',
    tags       TEXT    NOT NULL DEFAULT '[]',
    word_count INTEGER NOT NULL DEFAULT 0,
    checksum   TEXT    NOT NULL DEFAULT '',
    version    INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT    NOT NULL,
    updated_by TEXT    NOT NULL
);
CREATE INDEX documents_parent_id ON documents(parent_id);

-- history: one row per editor save (a version), with the full snapshot after the save.
CREATE TABLE history (
    kind      TEXT    NOT NULL,
    record_id INTEGER NOT NULL,
    version   INTEGER NOT NULL,
    actor     TEXT    NOT NULL,
    at        TEXT    NOT NULL,
    fields    TEXT    NOT NULL, -- JSON array of changed field names
    snapshot  TEXT    NOT NULL, -- JSON object of every field
    PRIMARY KEY (kind, record_id, version)
);

-- changes: the change log (every committed write and lease event, in commit order); rows
-- with history = 0 and a record event are the operation log.
CREATE TABLE changes (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    event     TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    record_id INTEGER NOT NULL,
    version   INTEGER NOT NULL DEFAULT 0,
    actor     TEXT    NOT NULL,
    role      TEXT    NOT NULL DEFAULT '',
    fields    TEXT    NOT NULL DEFAULT '[]',
    deltas    TEXT    NOT NULL DEFAULT '{}',
    history   INTEGER NOT NULL DEFAULT 0,
    grp       TEXT    NOT NULL DEFAULT '',
    fence     INTEGER NOT NULL DEFAULT 0,
    at        TEXT    NOT NULL
);
CREATE INDEX changes_record ON changes(kind, record_id, version);

CREATE TABLE idempotency (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED')),
    request_hash TEXT NOT NULL,
    result       BLOB,
    owner        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    PRIMARY KEY (scope, key)
) WITHOUT ROWID; -- the key is the only way in: one b-tree to write per save, not two
CREATE INDEX idempotency_expires_at ON idempotency(expires_at);

-- leases: the current lease of each (record, group). token_hash is the SHA-256 of the
-- token, never the token. A released lease has released = 1 and expires_at = its end.
CREATE TABLE leases (
    kind        TEXT    NOT NULL,
    record_id   INTEGER NOT NULL,
    grp         TEXT    NOT NULL,
    holder      TEXT    NOT NULL,
    token_hash  TEXT    NOT NULL,
    fence       INTEGER NOT NULL,
    acquired_at TEXT    NOT NULL,
    expires_at  TEXT    NOT NULL,
    released    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, record_id, grp)
);

-- lease_grants: every token ever granted, so a token whose lease was taken over is told
-- "lost" rather than "unknown".
CREATE TABLE lease_grants (
    token_hash TEXT    PRIMARY KEY,
    kind       TEXT    NOT NULL,
    record_id  INTEGER NOT NULL,
    grp        TEXT    NOT NULL,
    fence      INTEGER NOT NULL
);
