-- tandem schema: an outside write's fields reach outside_values as JSON arrays, by position.
--
-- Every connection to the file parses every trigger when it opens it (issue 24: a schema of
-- 50 kinds of 40 fields opens in under 100 ms). A kind's trigger named each field twice in
-- an object of its values (json_object('f', NEW."f", ...)), and an update once more for the
-- old ones: most of the parsed trigger text. Now the trigger gives the values as arrays in
-- the order of its field names (sorted), the new ones read from the row itself (one bare
-- column each), and the names and type codes once each as two texts: names, a JSON array,
-- and codes, one character a field (typeCodes in outside.go). The checks and their messages
-- are those of 0018_outside_values. The table is empty but while a kind's trigger runs, so
-- it is made again; the kinds' triggers are made again by the migration that runs this.
DROP VIEW IF EXISTS outside_values_written;
DROP TRIGGER IF EXISTS outside_values_check;
DROP TABLE IF EXISTS outside_values;

CREATE TABLE outside_values (
    kind  TEXT NOT NULL, -- the kind of the row another program wrote
    names TEXT NOT NULL, -- JSON array: the names of the fields in vals, in order
    codes TEXT NOT NULL, -- each field's type code, one character a field in the order of names
    vals  TEXT NOT NULL, -- JSON array: the row's fields
    old   TEXT           -- JSON array: an update's old fields; NULL for an insert
);

CREATE TRIGGER outside_values_check BEFORE INSERT ON outside_values BEGIN
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

-- The fields written, in name order: an update's that changed, an insert's all. An insert's
-- trigger may fire the update trigger (its own update of updated_at), whose row is then there
-- beside the insert's: created tells them apart.
CREATE VIEW outside_values_written AS
    SELECT v.kind, v.old IS NULL AS created, (SELECT json_group_array(json_extract(v.names, '$[' || k || ']')) FROM (SELECT n.key AS k FROM json_each(v.vals) n
        LEFT JOIN json_each(v.old) o ON o.key = n.key
        WHERE v.old IS NULL OR n.type IS NOT o.type OR n.value IS NOT o.value ORDER BY n.key)) AS fields
    FROM outside_values v;
