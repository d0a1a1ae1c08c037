-- Schema 2 -> 3, run by `metaeval init` before the table scripts (which then add any table
-- version 2 did not have and re-create the views). Keeps every row.
-- measures gained its declared scale (NULL: unknown, as for every measure of version 2).
ALTER TABLE IF EXISTS measures ADD COLUMN IF NOT EXISTS scale VARCHAR;
-- conventions.method now uses the names of the method column (boot-both, not bootstrap-both).
UPDATE confidence_intervals SET conventions = json_merge_patch(conventions, json_object('method', method))
WHERE json_extract_string(conventions, '$.method') IS DISTINCT FROM method;
UPDATE hypothesis_tests SET conventions = json_merge_patch(conventions, json_object('method', method))
WHERE json_extract_string(conventions, '$.method') IS DISTINCT FROM method;
