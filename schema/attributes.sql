-- Statements of the attributes of inputs and cells (warehouse/attributes.py), one per `-- name:`
-- section (schema.statements), run with bound parameters. `_staged_attributes` is the ingest's
-- temporary table of the file's rows: system ('' = input-level), input, attribute, value, line.

-- name: dataset_names
-- The systems and inputs of the dataset, to refuse ids it lacks.
SELECT 'system' AS kind, s.name FROM systems AS s JOIN datasets AS d USING (dataset_id) WHERE d.name = $dataset
UNION ALL
SELECT 'input', i.name FROM inputs AS i JOIN datasets AS d USING (dataset_id) WHERE d.name = $dataset;

-- name: conflicts
-- Rows of the file whose key the warehouse holds with another value, in the file's order.
SELECT f.line, f.system, f.input, f.attribute, a.value AS stored, f.value AS given
FROM _staged_attributes AS f
JOIN attributes AS a ON a.dataset = $dataset AND a.system = f.system AND a.input = f.input
                    AND a.attribute = f.attribute
WHERE a.value <> f.value
ORDER BY f.line;

-- name: counts
-- How many rows of the file are new to the warehouse, and how many give another value.
SELECT count(*) FILTER (WHERE a.value IS NULL) AS inserted,
       count(*) FILTER (WHERE a.value IS NOT NULL AND a.value <> f.value) AS replaced
FROM _staged_attributes AS f
LEFT JOIN attributes AS a ON a.dataset = $dataset AND a.system = f.system AND a.input = f.input
                         AND a.attribute = f.attribute;

-- name: replace
UPDATE attributes AS a SET value = f.value
FROM _staged_attributes AS f
WHERE a.dataset = $dataset AND a.system = f.system AND a.input = f.input AND a.attribute = f.attribute
  AND a.value <> f.value;

-- name: insert
INSERT INTO attributes (dataset, system, input, attribute, value)
SELECT $dataset, f.system, f.input, f.attribute, f.value
FROM _staged_attributes AS f
WHERE NOT EXISTS (SELECT 1 FROM attributes AS a WHERE a.dataset = $dataset AND a.system = f.system
                  AND a.input = f.input AND a.attribute = f.attribute)
ORDER BY f.line;

-- name: ingest
INSERT INTO ingests (dataset_id, format, file, sha256, options, rows, inserted, replaced, command)
SELECT dataset_id, 'attributes', $file, $sha256, $options, $rows, $inserted, $replaced, $command
FROM datasets WHERE name = $dataset
RETURNING ingest_id;

-- name: names
-- The dataset's attributes, sorted.
SELECT DISTINCT attribute FROM attributes WHERE dataset = $dataset ORDER BY attribute;

-- name: values
-- The distinct values of one attribute, sorted.
SELECT DISTINCT value FROM attributes WHERE dataset = $dataset AND attribute = $attribute ORDER BY value;

-- name: cells
-- Every stored value of one attribute: input-level rows (system '') first, so that a cell-level
-- value written after them overrides them.
SELECT system, input, value FROM attributes
WHERE dataset = $dataset AND attribute = $attribute
ORDER BY system <> '', system, input;

-- name: system_types
-- Each system of the dataset and its type (systems.type; $untyped where none is stored).
SELECT s.name, coalesce(s.type, $untyped) FROM systems AS s JOIN datasets AS d USING (dataset_id)
WHERE d.name = $dataset;
