-- Placeholder for migration 0002 (store metadata), which is written on another branch.
-- This runner needs contiguous numbers; the lead replaces this file by the real 0002 when
-- the branches are merged. It changes nothing.
SELECT 1;
