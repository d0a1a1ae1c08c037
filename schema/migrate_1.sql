-- Schema 1 -> 2, run by `metaeval init` before the table scripts (which then add any table
-- version 1 did not have and re-create the views). Keeps every row.
-- hypothesis_tests gained the correction family (rows of version 1 have none recorded).
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS family VARCHAR;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS family_size INTEGER;
