-- Schema 9 -> 10, run by `metaeval init` before the table scripts. Keeps every row.
-- span-eval's family resolution (issue 44 item 3) as typed columns of span_tests rather than JSON
-- text within the conventions JSON: set from the rows' conventions (by a type change's USING,
-- which skips an absent table as UPDATE cannot). The conventions of the rows written before are
-- left as they were.
ALTER TABLE IF EXISTS span_tests ADD COLUMN IF NOT EXISTS pvalue_formula VARCHAR;
ALTER TABLE IF EXISTS span_tests ALTER COLUMN pvalue_formula SET DATA TYPE VARCHAR
    USING json_extract_string(json_extract_string(conventions, '$.resolution'), '$.pvalue_formula');
ALTER TABLE IF EXISTS span_tests ADD COLUMN IF NOT EXISTS family_tests INTEGER;
ALTER TABLE IF EXISTS span_tests ALTER COLUMN family_tests SET DATA TYPE INTEGER
    USING CAST(json_extract_string(json_extract_string(conventions, '$.resolution'), '$.family_tests') AS INTEGER);
ALTER TABLE IF EXISTS span_tests ADD COLUMN IF NOT EXISTS smallest_p DOUBLE;
ALTER TABLE IF EXISTS span_tests ALTER COLUMN smallest_p SET DATA TYPE DOUBLE
    USING CAST(json_extract_string(json_extract_string(conventions, '$.resolution'), '$.smallest_p') AS DOUBLE);
ALTER TABLE IF EXISTS span_tests ADD COLUMN IF NOT EXISTS needed_p DOUBLE;
ALTER TABLE IF EXISTS span_tests ALTER COLUMN needed_p SET DATA TYPE DOUBLE
    USING CAST(json_extract_string(json_extract_string(conventions, '$.resolution'), '$.needed_p') AS DOUBLE);
ALTER TABLE IF EXISTS span_tests ADD COLUMN IF NOT EXISTS k_needed INTEGER;
ALTER TABLE IF EXISTS span_tests ALTER COLUMN k_needed SET DATA TYPE INTEGER
    USING CAST(json_extract_string(json_extract_string(conventions, '$.resolution'), '$.k_needed') AS INTEGER);
