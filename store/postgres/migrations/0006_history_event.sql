-- tandem schema, version 6: deletes and restores. A delete removes the record's row and
-- leaves a tombstone in history: a snapshot row of event 'deleted' holding every field as the
-- delete found it, which is what a restore brings back (store/delete.go). A restore writes a
-- snapshot row of event 'restored'. Every other row (creates, saves, moves) has event ''.
ALTER TABLE history ADD COLUMN event text NOT NULL DEFAULT '';
