-- The measures of one dataset ($dataset) that duplicate another: the rows of the view
-- measure_duplicates (16_duplicates.sql, which says what a duplicate is) of that dataset, with
-- the self-join of its cells made on integer ids (system_id, input_id) of that dataset's
-- measures only, instead of on the names of every cell of the warehouse (issue 47 item 5).
-- tests/test_catalog_queries.py: the same rows as the view.
WITH chosen AS (            -- pos: the order of the names, so that the join compares integers
    SELECT m.measure_id, m.name AS measure, m.kind, m.direction,
           row_number() OVER (ORDER BY m.name) AS pos, (m.kind = 'human')::INTEGER AS human
    FROM measures AS m
    JOIN datasets AS d USING (dataset_id)
    WHERE d.name = $dataset
),
values_by_cell AS (
    SELECT system_id, input_id, measure_id, value
    FROM score_means WHERE measure_id IN (SELECT measure_id FROM chosen)
    UNION ALL
    SELECT system_id, input_id, measure_id, avg(value)
    FROM judgments WHERE measure_id IN (SELECT measure_id FROM chosen)
    GROUP BY system_id, input_id, measure_id
),
oriented AS (
    SELECT v.system_id, v.input_id, c.pos, c.human,
           CASE WHEN c.direction = 'lower' THEN -v.value ELSE v.value END AS value
    FROM values_by_cell AS v
    JOIN chosen AS c USING (measure_id)
    WHERE v.system_id IN (SELECT system_id FROM systems) AND v.input_id IN (SELECT input_id FROM inputs)
),
pairs AS (
    SELECT a.pos, b.pos AS pos_of,
           count(*) AS n_shared,
           count(*) FILTER (WHERE a.value = b.value) AS n_equal,
           corr(a.value, b.value) AS r,
           min(a.value) < max(a.value) AND min(b.value) < max(b.value) AS both_vary
    FROM oriented AS a
    JOIN oriented AS b ON b.system_id = a.system_id AND b.input_id = a.input_id
                      AND b.human = a.human AND b.pos < a.pos
    GROUP BY a.pos, b.pos
),
first AS (
    SELECT pos, min(pos_of) AS pos_of, arg_min(n_shared, pos_of) AS n_shared, arg_min(n_equal, pos_of) AS n_equal
    FROM pairs
    WHERE n_shared >= 2 AND both_vary AND (n_equal = n_shared OR (NOT isnan(r) AND r >= 1 - 1e-9))
    GROUP BY pos
)
SELECT $dataset AS dataset, a.measure, b.measure AS duplicate_of, a.kind,
       CASE WHEN f.n_equal = f.n_shared THEN 'identical' ELSE 'affine' END AS relation, f.n_shared
FROM first AS f
JOIN chosen AS a ON a.pos = f.pos
JOIN chosen AS b ON b.pos = f.pos_of
ORDER BY a.measure
