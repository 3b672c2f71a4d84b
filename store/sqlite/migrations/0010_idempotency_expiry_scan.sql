-- tandem schema, version 10: the save path maintains no index it does not read.
--
-- Every keyed save (every save of a worker, every CLI save with --idempotency-key) inserts a
-- key row. The index on expires_at made that two b-tree inserts and one more page written
-- per commit, for the benefit of one statement only: PurgeKeys, an explicit maintenance
-- call that nothing on the save path makes. A purge now reads the key table once (by the
-- primary key), which is what it would read anyway when most keys have expired; a save
-- writes one b-tree for its key instead of two.
DROP INDEX idempotency_expires_at;
