-- tandem schema, version 4: history stores what changed, and change ids need no AUTOINCREMENT.
--
-- SQLite cannot relax a NOT NULL or drop AUTOINCREMENT in place, so both tables are rebuilt
-- (create, copy, drop, rename). legacy_alter_table keeps the rename from re-checking triggers
-- of other tables that name these tables (they resolve by name at run time, to the new one).

PRAGMA legacy_alter_table = ON;

-- history: a row is a snapshot (every field, as before) or a delta: the fields that differ
-- from the record's previous history version, on top of the chain that starts at snapshot
-- version base. store.Registry.NewHistoryRow decides which, RebuildHistory reads them back.
-- Every row written before this version is a snapshot, and stays one.
CREATE TABLE history_v4 (
    kind      TEXT    NOT NULL,
    record_id INTEGER NOT NULL,
    version   INTEGER NOT NULL,
    actor     TEXT    NOT NULL,
    at        TEXT    NOT NULL,
    fields    TEXT    NOT NULL, -- JSON array of the fields the save wrote
    base      INTEGER,          -- delta rows: the version of their chain's snapshot; NULL for a snapshot
    snapshot  TEXT,             -- snapshot rows: JSON object of every field
    delta     TEXT,             -- delta rows: {"set": {field: value}, "patch": {field: line patch}}
    CHECK ((snapshot IS NULL) = (delta IS NOT NULL) AND (base IS NULL) = (delta IS NULL)),
    PRIMARY KEY (kind, record_id, version)
);
INSERT INTO history_v4 (kind, record_id, version, actor, at, fields, snapshot)
    SELECT kind, record_id, version, actor, at, fields, snapshot FROM history;
DROP TABLE history;
ALTER TABLE history_v4 RENAME TO history;

-- changes: id is a plain INTEGER PRIMARY KEY, which saves AUTOINCREMENT's write of
-- sqlite_sequence on every save. Ids stay increasing in commit order: SQLite gives a new row
-- max(id) + 1, writers are serialized by SQLite's write lock (so the max a writer sees is
-- the max of every commit before it), and change rows are never deleted, so the max never
-- goes back and no id is handed out twice. (A pruning of the log would have to keep its
-- newest row, or bring AUTOINCREMENT back.) sqlite_sequence's old row for changes is left:
-- SQLite reads it only for AUTOINCREMENT tables.
CREATE TABLE changes_v4 (
    id        INTEGER PRIMARY KEY,
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
INSERT INTO changes_v4 (id, event, kind, record_id, version, actor, role, fields, deltas, history, grp, fence, at)
    SELECT id, event, kind, record_id, version, actor, role, fields, deltas, history, grp, fence, at FROM changes;
DROP TABLE changes;
ALTER TABLE changes_v4 RENAME TO changes;
CREATE INDEX changes_record ON changes(kind, record_id, version);

PRAGMA legacy_alter_table = OFF;
