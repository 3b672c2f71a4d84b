-- tandem schema: three outside-write triggers per record table in place of one per field.
--
-- Every connection to the file parses every trigger in it, and every save of tandem's ran
-- those of the fields it wrote: the triggers of one field each (0015_outside_writes) made
-- a schema of 50 kinds of 40 fields slow to open and tandem's saves slower. The triggers
-- are made in Go (OutsideTriggers in outside.go) and installed after every migration, the
-- old ones and their staging tables (<table>_outside_written) dropped first (dropOutside),
-- so this step has nothing of its own to do beyond bringing the store to a version that
-- says it has the new ones.
SELECT 1;
