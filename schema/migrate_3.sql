-- Schema 3 -> 4, run by `metaeval init` before the table scripts (which then add any table
-- version 3 did not have and re-create the views). Keeps every row.
-- hypothesis_tests gained sequential tests (issue 24, compare --sequential): the risk bound of
-- MMCTest; rows of version 3 drew a fixed k (NULL).
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS risk DOUBLE;
