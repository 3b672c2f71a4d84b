-- tandem schema: the outside-write triggers begin with a gate.
--
-- A kind's insert, update and delete triggers (OutsideTriggers in outside.go) test first
-- that their row's id is not NULL, which it never is, and tandem's write connection has an
-- authorizer that compiles that read as NULL: on it the triggers end at once. Its saves
-- no longer read the writer mark (pragma_database_list, prepared anew at each read), which
-- the update trigger did for every save that kept the record's time (saves of one record
-- within a millisecond). No table changes: every migration installs the triggers of the
-- store's tables again (installOutside), and that gives them the gate.
SELECT 1;
