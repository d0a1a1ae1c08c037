-- Schema 2 -> 3, run by `metaeval init` before the table scripts (which then add any table
-- version 2 did not have and re-create the views). Keeps every row.
-- hypothesis_tests gained early stopping (issue 17): the block size and the resamples drawn.
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS k_block INTEGER;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS k_used INTEGER;
