-- tandem schema, version 7: presence, who has a record open in an editor right now
-- (store/presence.go). One row per open editor session, refreshed by the editor and ignored
-- once expires_at (database clock) has passed; an expired row is removed by a later
-- announce. Nothing checks it before a write: presence never blocks anyone.
CREATE TABLE presence (
    session    text        PRIMARY KEY,
    kind       text        NOT NULL,
    record_id  bigint      NOT NULL,
    holder     text        NOT NULL,
    since      timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX presence_record ON presence (kind, record_id);
