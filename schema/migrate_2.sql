-- Schema 2 -> 3, run by `metaeval init` before the table scripts (which then add any table
-- version 2 did not have and re-create the views). Keeps every row.
-- analysis_runs gained the owner process of each run (rows of version 2 have none recorded).
ALTER TABLE IF EXISTS analysis_runs ADD COLUMN IF NOT EXISTS owner_pid INTEGER;
ALTER TABLE IF EXISTS analysis_runs ADD COLUMN IF NOT EXISTS owner_host VARCHAR;
ALTER TABLE IF EXISTS analysis_runs ADD COLUMN IF NOT EXISTS owner_start VARCHAR;
-- correlations, confidence intervals and tests record the inputs a system score averages
-- (--system-inputs); rows of version 2 have none recorded (they averaged every input: all).
ALTER TABLE IF EXISTS correlations ADD COLUMN IF NOT EXISTS system_inputs VARCHAR;
ALTER TABLE IF EXISTS confidence_intervals ADD COLUMN IF NOT EXISTS system_inputs VARCHAR;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS system_inputs VARCHAR;
ALTER TABLE IF EXISTS confidence_intervals ADD COLUMN IF NOT EXISTS resample_annotators VARCHAR;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS resample_annotators VARCHAR;
-- hypothesis_tests gained early stopping (issue 17): the block size and the resamples drawn.
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS k_block INTEGER;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS k_used INTEGER;
-- measures gained its declared scale (NULL: unknown, as for every measure of version 2).
ALTER TABLE IF EXISTS measures ADD COLUMN IF NOT EXISTS scale VARCHAR;
-- conventions.method now uses the names of the method column (boot-both, not bootstrap-both).
UPDATE confidence_intervals SET conventions = json_merge_patch(conventions, json_object('method', method))
WHERE json_extract_string(conventions, '$.method') IS DISTINCT FROM method;
UPDATE hypothesis_tests SET conventions = json_merge_patch(conventions, json_object('method', method))
WHERE json_extract_string(conventions, '$.method') IS DISTINCT FROM method;
