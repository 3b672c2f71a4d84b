-- tandem schema, version 7: presence, who has a record open in an editor right now
-- (store/presence.go). One row per open editor session, refreshed by the editor and ignored
-- once expires_at (database clock) has passed; an expired row is removed by a later
-- announce. Nothing checks it before a write: presence never blocks anyone.
CREATE TABLE presence (
    session    TEXT    PRIMARY KEY,
    kind       TEXT    NOT NULL,
    record_id  INTEGER NOT NULL,
    holder     TEXT    NOT NULL,
    since      TEXT    NOT NULL,
    expires_at TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX presence_record ON presence(kind, record_id);
