-- The hypothesis tests the ranking analyses read (`metaeval winners`, `metaeval replicability`):
-- the latest completed row of each (metric_a, metric_b, level, coefficient) of one dataset,
-- human, method and alternative; with $correction NULL, the newest whatever its correction
-- (its raw p_value is the same), else only that correction and group. Only tests written by
-- a metaeval version with the same results ($versions) count: older ones are recomputed by `compare`, not reused.
-- $family (with a correction): only tests corrected within exactly this family of metrics. Only tests on
-- every cell (subset ''), of one $aggregate (a system's mean or median over its inputs).
SELECT * EXCLUDE (rn) FROM (
    SELECT metric_a, metric_b, level, coefficient, delta, p_value, p_adjusted, significant, alpha, risk, k, k_used,
           seed, fingerprint,
           family, family_size, CAST(json_extract(conventions, '$.n_valid_samples') AS BIGINT) AS n_valid,
           row_number() OVER (PARTITION BY metric_a, metric_b, level, coefficient ORDER BY result_id DESC) AS rn
    FROM latest_hypothesis_tests
    WHERE dataset = $dataset AND subset = '' AND aggregate = $aggregate AND human = $human AND method = $method
      AND alternative = $alternative
      AND ($correction IS NULL OR (correction = $correction AND correction_group = $correction_group))
      AND ($family IS NULL OR family = $family)
      AND run_id IN (SELECT run_id FROM analysis_runs WHERE list_contains($versions, version)))
WHERE rn = 1;
