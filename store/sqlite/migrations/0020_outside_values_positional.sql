-- tandem schema: what every kind's outside-write triggers did alike, done once.
--
-- Every connection to the file parses every trigger when it opens it (issue 24: a schema of
-- 50 kinds of 40 fields opens in under 100 ms), and a kind's triggers were most of a wide
-- schema's parsed text: each field named twice in an object of its values
-- (json_object('f', NEW."f", ...)), an update's once more for the old ones; the statements
-- that write history, the change and the refold queue, alike but for the kind's name; and a
-- view of the row's snapshot. Now a kind's trigger (OutsideTriggers in outside.go) puts one
-- row here: the record, the version to log it at and the event, and its fields as JSON
-- arrays in the order of their names, the new values read from the row itself (one bare
-- column each), with the names and type codes once each as two texts (names, a JSON array;
-- codes, one character a field). The triggers below check the values (as
-- 0018_outside_values did, with the same messages) and log the row: the history version
-- with the snapshot made from the values, its change, and outside_refold. The table is
-- empty but while a kind's trigger runs, so it is made again; the kinds' triggers are made
-- again by the migration that runs this, and their views dropped.
DROP VIEW IF EXISTS outside_values_written;
DROP TRIGGER IF EXISTS outside_values_check;
DROP TABLE IF EXISTS outside_values;

CREATE TABLE outside_values (
    kind      TEXT NOT NULL,    -- the kind of the row another program wrote
    record_id INTEGER NOT NULL, -- its id
    version   INTEGER,          -- the history version to write
    event     TEXT NOT NULL,    -- created, saved or deleted
    refold    TEXT,             -- JSON array: the fields whose derived columns only tandem writes (outside_refold), NULL for none
    names     TEXT NOT NULL,    -- JSON array: the names of the fields in vals, in order
    codes     TEXT NOT NULL,    -- each field's type code, one character a field in the order of names
    vals      TEXT NOT NULL,    -- JSON array: the row's fields
    old       TEXT              -- JSON array: an update's old fields; NULL for an insert or a delete
);

-- The values written: an insert's, and the ones an update changed. A delete's are not.
CREATE TRIGGER outside_values_check BEFORE INSERT ON outside_values WHEN NEW.event <> 'deleted' BEGIN
    SELECT json_extract('{}', 'tandem: ' || NEW.kind || '.' || json_extract(NEW.names, '$[' || n.key || ']') || ' must be ' || CASE substr(NEW.codes, n.key + 1, 1)
            WHEN 's' THEN 'text' WHEN 'i' THEN 'a whole number' WHEN 'm' THEN 'a whole number of cents, not negative'
            WHEN 'r' THEN 'a record id or NULL' WHEN 't' THEN 'NULL or a time like 2006-01-02T15:04:05Z'
            ELSE 'a JSON array of strings like ["a","b"]' END)
        FROM json_each(NEW.vals) n
        LEFT JOIN json_each(NEW.old) o ON o.key = n.key
        WHERE (NEW.old IS NULL OR n.type IS NOT o.type OR n.value IS NOT o.value) AND CASE substr(NEW.codes, n.key + 1, 1)
            WHEN 's' THEN n.type <> 'text'
            WHEN 'i' THEN n.type <> 'integer'
            WHEN 'm' THEN n.type <> 'integer' OR n.value < 0
            WHEN 'r' THEN n.type NOT IN ('integer', 'null')
            WHEN 't' THEN n.type <> 'null' AND NOT (n.type = 'text' AND n.value GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
                AND (n.value GLOB '*Z' OR n.value GLOB '*[+-][0-9][0-9]:[0-9][0-9]') AND julianday(n.value) IS NOT NULL)
            WHEN 'a' THEN CASE WHEN n.type = 'text' AND json_valid(n.value) AND json_type(n.value) = 'array'
                THEN EXISTS (SELECT 1 FROM json_each(n.value) WHERE type <> 'text') ELSE 1 END
            ELSE 0
        END;
END;

-- Of each row: the fields written, in name order (an update's that changed, an insert's
-- all, a delete's none), and the snapshot (store.Registry.EncodeSnapshot's form, money as
-- cents: a set's JSON array as an array, which json() refuses when the column holds no JSON).
CREATE VIEW outside_values_written AS
    SELECT v.rowid AS id, CASE WHEN v.event = 'deleted' THEN '[]' ELSE (SELECT json_group_array(json_extract(v.names, '$[' || k || ']')) FROM (SELECT n.key AS k FROM json_each(v.vals) n
        LEFT JOIN json_each(v.old) o ON o.key = n.key
        WHERE v.old IS NULL OR n.type IS NOT o.type OR n.value IS NOT o.value ORDER BY n.key)) END AS fields,
        (SELECT json_group_object(json_extract(v.names, '$[' || n.key || ']'),
            json(CASE WHEN substr(v.codes, n.key + 1, 1) = 'a' THEN coalesce(n.value, '[]') ELSE json_quote(n.value) END)) FROM json_each(v.vals) n) AS snapshot
    FROM outside_values v;

-- The log of the row: a history version (an update's only when it changed a field, and not
-- over one already there), the change of that version, and the refold queue (an insert, an
-- update of a field in refold) or the record out of it (a delete).
CREATE TRIGGER outside_values_log AFTER INSERT ON outside_values BEGIN
    INSERT INTO history (kind, record_id, version, actor, at, fields, snapshot, event)
        SELECT NEW.kind, NEW.record_id, NEW.version, 'outside', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), w.fields, w.snapshot,
            CASE NEW.event WHEN 'deleted' THEN 'deleted' ELSE '' END
        FROM outside_values_written w WHERE w.id = NEW.rowid AND NEW.event <> 'saved';
    INSERT OR IGNORE INTO history (kind, record_id, version, actor, at, fields, snapshot, event)
        SELECT NEW.kind, NEW.record_id, NEW.version, 'outside', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), w.fields, w.snapshot, ''
        FROM outside_values_written w WHERE w.id = NEW.rowid AND NEW.event = 'saved' AND w.fields <> '[]';
    INSERT INTO changes (event, kind, record_id, version, actor, role, fields, deltas, history, at)
        SELECT NEW.event, kind, record_id, version, actor, 'outside', fields, '{}', 1, at
        FROM history WHERE kind = NEW.kind AND record_id = NEW.record_id AND version = NEW.version;
    INSERT OR IGNORE INTO outside_refold (kind, record_id) SELECT NEW.kind, NEW.record_id
        WHERE NEW.event = 'created' AND NEW.refold IS NOT NULL;
    INSERT OR IGNORE INTO outside_refold (kind, record_id) SELECT NEW.kind, NEW.record_id FROM history h, json_each(h.fields) f
        WHERE NEW.event = 'saved' AND NEW.refold IS NOT NULL AND h.kind = NEW.kind AND h.record_id = NEW.record_id AND h.version = NEW.version
            AND f.value IN (SELECT value FROM json_each(NEW.refold));
    DELETE FROM outside_refold WHERE NEW.event = 'deleted' AND kind = NEW.kind AND record_id = NEW.record_id;
END;
