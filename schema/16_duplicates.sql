-- Measures of one dataset that correlate identically with anything: `measure` has the same
-- value as `duplicate_of` in every cell they share ('identical'), or is a positive affine
-- transform of it once both are oriented so that higher is better ('affine': Pearson
-- r >= 1 - 1e-9 over the shared cells, i.e. equal up to the rounding of the stored values, as
-- SummEval's NPowER = 0.83 AutoSummENG + 0.06), so every correlation, CI and test gives them
-- the same numbers (up to that rounding, which may break or make ties). `duplicate_of` is the first such measure by name. Computed when queried
-- (a self-join of the dataset's cells); `metaeval measures` and Store.duplicates read the same rows
-- of one dataset, faster, from measure_duplicates_of.sql (tests/test_catalog_queries.py).
-- A measure constant over the shared cells is nobody's duplicate, nor has one: its correlations are
-- undefined, not equal to anything's (DuckDB's corr of a constant is NaN, and NaN >= x is true: so
-- both must vary, and r must be a number), and duplicates never chain through a constant.
CREATE OR REPLACE VIEW measure_duplicates AS
WITH oriented AS (
    SELECT c.dataset, c.measure, c.system, c.input, c.kind,
           CASE WHEN m.direction = 'lower' THEN -c.value ELSE c.value END AS value
    FROM cells AS c
    JOIN measures AS m ON m.name = c.measure
    JOIN datasets AS d ON d.dataset_id = m.dataset_id AND d.name = c.dataset
),
pairs AS (
    SELECT a.dataset, a.measure, b.measure AS duplicate_of, a.kind,
           count(*) AS n_shared,
           count(*) FILTER (WHERE a.value = b.value) AS n_equal,
           corr(a.value, b.value) AS r,
           min(a.value) < max(a.value) AND min(b.value) < max(b.value) AS both_vary
    FROM oriented AS a
    JOIN oriented AS b ON b.dataset = a.dataset AND b.system = a.system AND b.input = a.input
                      AND b.kind = a.kind AND b.measure < a.measure
    GROUP BY a.dataset, a.measure, b.measure, a.kind
)
SELECT dataset, measure, duplicate_of, kind,
       CASE WHEN n_equal = n_shared THEN 'identical' ELSE 'affine' END AS relation, n_shared
FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, measure ORDER BY duplicate_of) AS rn
    FROM pairs
    WHERE n_shared >= 2 AND both_vary AND (n_equal = n_shared OR (NOT isnan(r) AND r >= 1 - 1e-9))
)
WHERE rn = 1;
