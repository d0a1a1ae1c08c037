-- Statements of `metaeval drop` and `metaeval rename` (warehouse/housekeeping.py), one per
-- `-- name:` section, run in one transaction with bound parameters. The result rows that depend
-- on a measure or a dataset are found from the catalog (`result_tables`), not from a fixed list.

-- name: result_tables
-- Every result table: a base table with result_id and run_id columns, with its column names.
SELECT t.table_name, list(c.column_name ORDER BY c.ordinal_position) AS columns
FROM information_schema.tables AS t
JOIN information_schema.columns AS c USING (table_catalog, table_schema, table_name)
WHERE t.table_type = 'BASE TABLE' AND t.table_schema = current_schema()
GROUP BY t.table_name
HAVING list_contains(list(c.column_name), 'result_id') AND list_contains(list(c.column_name), 'run_id')
ORDER BY t.table_name;

-- name: dataset
SELECT dataset_id FROM datasets WHERE name = $dataset;

-- name: measure
SELECT m.measure_id, m.kind
FROM measures AS m JOIN datasets AS d USING (dataset_id)
WHERE d.name = $dataset AND m.name = $measure;

-- name: measure_cells
SELECT (SELECT count(*) FROM scores WHERE measure_id = $measure_id),
       (SELECT count(*) FROM judgments WHERE measure_id = $measure_id);

-- name: drop_measure_scores
DELETE FROM scores WHERE measure_id = $measure_id;

-- name: drop_measure_judgments
DELETE FROM judgments WHERE measure_id = $measure_id;

-- name: drop_measure_statistics
-- (run only where the table exists: see dataset_statistics)
DELETE FROM bleu_statistics WHERE measure_id = $measure_id;

-- name: drop_measure
DELETE FROM measures WHERE measure_id = $measure_id;

-- name: rename_measure
UPDATE measures SET name = $new WHERE measure_id = $measure_id;

-- name: dataset_rows
-- What `drop dataset` removes from the data tables, in the order it deletes them (children first).
SELECT * FROM (VALUES
    ('scores', (SELECT count(*) FROM scores WHERE measure_id IN
                   (SELECT measure_id FROM measures WHERE dataset_id = $dataset_id))),
    ('judgments', (SELECT count(*) FROM judgments WHERE measure_id IN
                      (SELECT measure_id FROM measures WHERE dataset_id = $dataset_id))),
    ('summaries', (SELECT count(*) FROM summaries WHERE system_id IN
                      (SELECT system_id FROM systems WHERE dataset_id = $dataset_id))),
    ('documents', (SELECT count(*) FROM documents WHERE input_id IN
                      (SELECT input_id FROM inputs WHERE dataset_id = $dataset_id))),
    ('references', (SELECT count(*) FROM "references" WHERE input_id IN
                       (SELECT input_id FROM inputs WHERE dataset_id = $dataset_id))),
    ('measures', (SELECT count(*) FROM measures WHERE dataset_id = $dataset_id)),
    ('preferences', (SELECT count(*) FROM preferences WHERE dataset_id = $dataset_id)),
    ('systems', (SELECT count(*) FROM systems WHERE dataset_id = $dataset_id)),
    ('inputs', (SELECT count(*) FROM inputs WHERE dataset_id = $dataset_id)),
    ('attributes', (SELECT count(*) FROM attributes WHERE dataset =
                       (SELECT name FROM datasets WHERE dataset_id = $dataset_id))),
    ('ingests', (SELECT count(*) FROM ingests WHERE dataset_id = $dataset_id))
) AS t (table_name, n);

-- name: drop_dataset_scores
DELETE FROM scores WHERE measure_id IN (SELECT measure_id FROM measures WHERE dataset_id = $dataset_id);

-- name: drop_dataset_judgments
DELETE FROM judgments WHERE measure_id IN (SELECT measure_id FROM measures WHERE dataset_id = $dataset_id);

-- name: dataset_statistics
-- (bleu_statistics: a table a warehouse made before it lacks until `metaeval init`; read only where it exists)
SELECT count(*) FROM bleu_statistics WHERE measure_id IN (SELECT measure_id FROM measures WHERE dataset_id = $dataset_id);

-- name: drop_dataset_statistics
DELETE FROM bleu_statistics WHERE measure_id IN (SELECT measure_id FROM measures WHERE dataset_id = $dataset_id);

-- name: drop_dataset_summaries
DELETE FROM summaries WHERE system_id IN (SELECT system_id FROM systems WHERE dataset_id = $dataset_id);

-- name: drop_dataset_documents
DELETE FROM documents WHERE input_id IN (SELECT input_id FROM inputs WHERE dataset_id = $dataset_id);

-- name: drop_dataset_references
DELETE FROM "references" WHERE input_id IN (SELECT input_id FROM inputs WHERE dataset_id = $dataset_id);

-- name: drop_dataset_measures
DELETE FROM measures WHERE dataset_id = $dataset_id;

-- name: drop_dataset_preferences
DELETE FROM preferences WHERE dataset_id = $dataset_id;

-- name: drop_dataset_systems
DELETE FROM systems WHERE dataset_id = $dataset_id;

-- name: drop_dataset_inputs
DELETE FROM inputs WHERE dataset_id = $dataset_id;

-- name: drop_dataset_attributes
DELETE FROM attributes WHERE dataset = (SELECT name FROM datasets WHERE dataset_id = $dataset_id);

-- name: drop_dataset_ingests
DELETE FROM ingests WHERE dataset_id = $dataset_id;

-- name: drop_dataset
DELETE FROM datasets WHERE dataset_id = $dataset_id;
