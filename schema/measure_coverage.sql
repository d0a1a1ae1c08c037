-- The measures of one dataset ($dataset; $kind: 'automatic', 'human' or NULL for both) with
-- their coverage (`metaeval measures`, Store.measures): the rows of the view measure_summary
-- (14_catalog.sql) of that dataset, counted on the ids of the dataset's measures' scores and
-- judgments instead of on the names of every cell of the warehouse (the view cells), a
-- fraction of the CPU (issue 47 item 5). A cell is a (system, input) with a score, or with
-- judgments (averaged over annotators, as in cells); system and input names are unique within a
-- dataset, so distinct ids count distinct names. tests/test_catalog_queries.py: the same rows.
WITH chosen AS (
    SELECT m.measure_id, d.name AS dataset, m.name AS measure, m.kind, m.direction, m.scale
    FROM measures AS m
    JOIN datasets AS d USING (dataset_id)
    WHERE d.name = $dataset AND ($kind IS NULL OR m.kind = $kind)
),
values_by_cell AS (
    SELECT system_id, input_id, measure_id, 1 AS n_annotators
    FROM score_means WHERE measure_id IN (SELECT measure_id FROM chosen)
    UNION ALL
    SELECT system_id, input_id, measure_id, count(*)
    FROM judgments WHERE measure_id IN (SELECT measure_id FROM chosen)
    GROUP BY system_id, input_id, measure_id
),
known AS (                  -- as the view cells: the cells of systems and inputs that exist
    SELECT v.* FROM values_by_cell AS v
    WHERE v.system_id IN (SELECT system_id FROM systems) AND v.input_id IN (SELECT input_id FROM inputs)
),
per_measure AS (
    SELECT measure_id, count(*) AS n_cells, max(n_annotators) AS max_annotators
    FROM known GROUP BY measure_id
),
n_systems AS (              -- count(DISTINCT ...) as a grouping of its own, on integers: faster
    SELECT measure_id, count(*) AS n FROM (SELECT DISTINCT measure_id, system_id FROM known) GROUP BY measure_id
),
n_inputs AS (
    SELECT measure_id, count(*) AS n FROM (SELECT DISTINCT measure_id, input_id FROM known) GROUP BY measure_id
)
SELECT c.dataset, c.measure, c.kind, c.direction, c.scale,
       coalesce(p.n_cells, 0) AS n_cells,
       coalesce(s.n, 0) AS n_systems,
       coalesce(i.n, 0) AS n_inputs,
       p.max_annotators
FROM chosen AS c
LEFT JOIN per_measure AS p USING (measure_id)
LEFT JOIN n_systems AS s USING (measure_id)
LEFT JOIN n_inputs AS i USING (measure_id)
ORDER BY c.dataset, c.kind, c.measure
