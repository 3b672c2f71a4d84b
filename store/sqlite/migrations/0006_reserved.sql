-- Placeholder for migration 0006, which another branch of issue 13 adds: PostgreSQL's
-- migrations are numbered without gaps. Drop this file when merging that branch.
SELECT 1;
