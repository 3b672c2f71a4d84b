-- tandem schema: the checks of other programs' writes, shared by every kind.
--
-- The outside-write triggers (OutsideTriggers in outside.go) checked each field of another
-- program's write in a statement of its own, two per field of every kind, and listed the
-- fields an update changed with a test per field: every connection to the file parses
-- every trigger when it opens it, and on a schema of 50 kinds of 40 fields these were most
-- of the schema's text. Now a kind's trigger puts the row's fields as JSON in
-- outside_values (with each field's type code, and the old fields of an update), whose
-- trigger below refuses the first value that its field's column cannot hold as tandem reads
-- it, with the same message as before, and whose view lists the fields written.
-- The row lives only while the kind's trigger runs, in the other program's transaction.
--
-- RAISE takes a fixed text only, so the refusal that names the field is json_extract's
-- error for the message given as a path: "bad JSON path: 'tandem: part.status must be
-- text'" (older SQLite: "JSON path error near '...'").
CREATE TABLE IF NOT EXISTS outside_values (
    kind  TEXT NOT NULL, -- the kind of the row another program wrote
    codes TEXT NOT NULL, -- JSON: each field's type code (typeCodes in outside.go)
    vals  TEXT NOT NULL, -- JSON: the row's fields
    old   TEXT           -- JSON: an update's old fields; NULL for an insert
);

CREATE TRIGGER IF NOT EXISTS outside_values_check BEFORE INSERT ON outside_values BEGIN
    SELECT json_extract('{}', 'tandem: ' || NEW.kind || '.' || n.key || ' must be ' || CASE c.value
            WHEN 's' THEN 'text' WHEN 'i' THEN 'a whole number' WHEN 'm' THEN 'a whole number of cents, not negative'
            WHEN 'r' THEN 'a record id or NULL' WHEN 't' THEN 'NULL or a time like 2006-01-02T15:04:05Z'
            ELSE 'a JSON array of strings like ["a","b"]' END)
        FROM json_each(NEW.vals) n JOIN json_each(NEW.codes) c ON c.key = n.key
        LEFT JOIN json_each(NEW.old) o ON o.key = n.key
        WHERE (NEW.old IS NULL OR n.type IS NOT o.type OR n.value IS NOT o.value) AND CASE c.value
            WHEN 's' THEN n.type <> 'text'
            WHEN 'i' THEN n.type <> 'integer'
            WHEN 'm' THEN n.type <> 'integer' OR n.value < 0
            WHEN 'r' THEN n.type NOT IN ('integer', 'null')
            WHEN 't' THEN n.type <> 'null' AND NOT (n.type = 'text' AND n.value GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
                AND (n.value GLOB '*Z' OR n.value GLOB '*[+-][0-9][0-9]:[0-9][0-9]') AND julianday(n.value) IS NOT NULL)
            WHEN 'a' THEN CASE WHEN n.type = 'text' AND json_valid(n.value) AND json_type(n.value) = 'array'
                THEN EXISTS (SELECT 1 FROM json_each(n.value) WHERE type <> 'text') ELSE 1 END
        END;
END;

-- The fields written, in name order: an update's that changed, an insert's all. An insert's
-- trigger may fire the update trigger (its own update of updated_at), whose row is then there
-- beside the insert's: created tells them apart.
CREATE VIEW IF NOT EXISTS outside_values_written AS
    SELECT v.kind, v.old IS NULL AS created, (SELECT json_group_array(key) FROM (SELECT n.key FROM json_each(v.vals) n LEFT JOIN json_each(v.old) o ON o.key = n.key
        WHERE v.old IS NULL OR n.type IS NOT o.type OR n.value IS NOT o.value ORDER BY n.key)) AS fields
    FROM outside_values v;
