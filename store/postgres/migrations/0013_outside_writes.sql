-- tandem schema version 12 (PostgreSQL): writes by other programs are seen (store/outside.go).
--
-- Triggers on every record table, made in Go from the registry (OutsideTriggers in
-- outside.go) and installed after every migration, give a write that did not come through
-- tandem the next version, a history version and a change. What they cannot compute in SQL,
-- the sku key and the folded search text, they leave to tandem: the record is queued here,
-- and tandem writes them before its next search (refoldOutside). A table of its own in a
-- numbered migration, so that a tandem that predates it refuses the schema rather than
-- write records that the triggers would take for another program's.

CREATE TABLE outside_refold (
    kind      text COLLATE "C" NOT NULL,
    record_id bigint NOT NULL,
    PRIMARY KEY (kind, record_id)
);
