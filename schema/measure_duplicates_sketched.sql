-- The rows of measure_duplicates_of.sql (the same measures, duplicate_of, relation and n_shared),
-- for a dataset whose self-join of cells is large (Store.measures picks it from the coverage: about
-- a million pairs of cells of the same kind or more): most pairs of measures are settled without
-- the self-join, from a sketch of each measure (issue 47 item 5). tests/test_catalog_queries.py:
-- the same rows as the view and as a computation in Python, with and without shared grids.
--
-- Two measures of one kind with the very same cells S (n of them, each once) are a duplicate pair
-- only if both vary and, with z = (value - mean) / sd (population sd) over S, r >= 1 - tau: then
-- sum((z_a - z_b)^2) = 2 n (1 - r) <= 2 n tau, so for any signs w = +-1 per cell,
-- |sum(w z_a) - sum(w z_b)| / sqrt(n) <= sqrt(2 n tau) (Cauchy-Schwarz). p0..p7 are those sums for
-- eight sign vectors (bits of the cell's hash); a pair whose |p_a - p_b| exceeds the bound (plus
-- err, a generous bound of the rounding in p) for one of them is no duplicate. tau = 2e-9 plus a
-- bound of the rounding of DuckDB's corr, so that no pair the self-join would accept (r >= 1 - 1e-9
-- as computed) is settled. Measures have the very same cells when their fingerprint (count, sum
-- and xor of the cells' hashes) is the same and, checked exactly (uniform), every cell of the
-- class holds each of its members once (classes of 2 to 64 measures: a bit each). The pairs not
-- settled (other cells, larger classes, near duplicates) go through the self-join as in
-- measure_duplicates_of.sql.
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
oriented AS MATERIALIZED (
    SELECT v.system_id, v.input_id, c.pos, c.human,
           CASE WHEN c.direction = 'lower' THEN -v.value ELSE v.value END AS value,
           hash(v.system_id::INTEGER, v.input_id::INTEGER) AS h
    FROM values_by_cell AS v
    JOIN chosen AS c USING (measure_id)
    WHERE v.system_id IN (SELECT system_id FROM systems) AND v.input_id IN (SELECT input_id FROM inputs)
),
spread AS (                 -- each measure over its own cells: h_sum, h_xor a fingerprint of them; s0..s7
    SELECT pos, human, count(*) AS n, avg(value) AS mean, stddev_pop(value) AS sd,
           min(value) < max(value) AS varies, max(abs(value)) AS largest, bool_and(isfinite(value)) AS finite,
           sum(h::HUGEINT) AS h_sum, bit_xor(h) AS h_xor,
           sum(CASE WHEN h & 1 = 0 THEN value ELSE -value END) AS s0, sum(CASE WHEN h & 1 = 0 THEN 1 ELSE -1 END) AS w0,
           sum(CASE WHEN h & 2 = 0 THEN value ELSE -value END) AS s1, sum(CASE WHEN h & 2 = 0 THEN 1 ELSE -1 END) AS w1,
           sum(CASE WHEN h & 4 = 0 THEN value ELSE -value END) AS s2, sum(CASE WHEN h & 4 = 0 THEN 1 ELSE -1 END) AS w2,
           sum(CASE WHEN h & 8 = 0 THEN value ELSE -value END) AS s3, sum(CASE WHEN h & 8 = 0 THEN 1 ELSE -1 END) AS w3,
           sum(CASE WHEN h & 16 = 0 THEN value ELSE -value END) AS s4, sum(CASE WHEN h & 16 = 0 THEN 1 ELSE -1 END) AS w4,
           sum(CASE WHEN h & 32 = 0 THEN value ELSE -value END) AS s5, sum(CASE WHEN h & 32 = 0 THEN 1 ELSE -1 END) AS w5,
           sum(CASE WHEN h & 64 = 0 THEN value ELSE -value END) AS s6, sum(CASE WHEN h & 64 = 0 THEN 1 ELSE -1 END) AS w6,
           sum(CASE WHEN h & 128 = 0 THEN value ELSE -value END) AS s7, sum(CASE WHEN h & 128 = 0 THEN 1 ELSE -1 END) AS w7
    FROM oriented GROUP BY pos, human
),
classes AS (                -- measures whose cells may be the same: the same kind and fingerprint
    SELECT *, min(pos) OVER same AS rep, count(*) OVER same AS k,
           (row_number() OVER (PARTITION BY human, n, h_sum, h_xor ORDER BY pos) - 1)::UBIGINT AS idx
    FROM spread WINDOW same AS (PARTITION BY human, n, h_sum, h_xor)
),
uniform AS (                -- the classes (of 2..64 measures) whose members have the very same cells, each once
    SELECT rep FROM (
        SELECT c.rep, any_value(c.k) AS k, any_value(c.n) AS n, count(*) AS n_rows, bit_or(1::UBIGINT << c.idx) AS seen
        FROM oriented AS o JOIN classes AS c USING (pos)
        WHERE c.k BETWEEN 2 AND 64
        GROUP BY c.rep, o.system_id, o.input_id
    )
    GROUP BY rep
    HAVING bool_and(n_rows = k AND seen = (CASE WHEN k = 64 THEN 18446744073709551615::UBIGINT
                                                ELSE (1::UBIGINT << k::UBIGINT) - 1 END))
       AND count(*) = any_value(n)
),
sketch AS (                 -- p_j = sum over the cells of +-z (z the standardised value) / sqrt(n); err bounds its rounding
    SELECT pos, rep, n, varies, largest / sd AS kappa,
           8 * pow(n, 1.5) * 2.220446049250313e-16 * pow(1 + largest / sd, 2) AS err,
           (s0 - mean * w0) / (sd * sqrt(n)) AS p0, (s1 - mean * w1) / (sd * sqrt(n)) AS p1,
           (s2 - mean * w2) / (sd * sqrt(n)) AS p2, (s3 - mean * w3) / (sd * sqrt(n)) AS p3,
           (s4 - mean * w4) / (sd * sqrt(n)) AS p4, (s5 - mean * w5) / (sd * sqrt(n)) AS p5,
           (s6 - mean * w6) / (sd * sqrt(n)) AS p6, (s7 - mean * w7) / (sd * sqrt(n)) AS p7
    FROM classes
    WHERE rep IN (SELECT rep FROM uniform) AND finite
),
settled AS (                -- pairs of one uniform class (finite values) that cannot be duplicates
    SELECT a.pos, b.pos AS pos_of
    FROM sketch AS a JOIN sketch AS b ON b.rep = a.rep AND b.pos < a.pos
    WHERE NOT (a.varies AND b.varies)
       OR greatest(abs(a.p0 - b.p0), abs(a.p1 - b.p1), abs(a.p2 - b.p2), abs(a.p3 - b.p3),
                   abs(a.p4 - b.p4), abs(a.p5 - b.p5), abs(a.p6 - b.p6), abs(a.p7 - b.p7))
          > sqrt(2 * a.n * (2e-9 + 64 * a.n * 2.220446049250313e-16 * (1 + a.kappa) * (1 + b.kappa))) + a.err + b.err
),
open_pairs AS (
    SELECT a.pos, b.pos AS pos_of FROM spread AS a JOIN spread AS b ON b.human = a.human AND b.pos < a.pos
    EXCEPT SELECT pos, pos_of FROM settled
),
involved AS (
    SELECT pos FROM open_pairs UNION SELECT pos_of FROM open_pairs
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
    WHERE a.pos IN (SELECT pos FROM involved) AND b.pos IN (SELECT pos FROM involved)
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
