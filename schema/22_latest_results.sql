-- The latest result of each key: what a user usually wants.
CREATE OR REPLACE VIEW latest_correlations AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, aggregate, metric, human, level, coefficient
                                 ORDER BY result_id DESC) AS rn
    FROM correlations)
WHERE rn = 1;

CREATE OR REPLACE VIEW latest_confidence_intervals AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, aggregate, metric, human, level, coefficient, method, alpha
                                 ORDER BY result_id DESC) AS rn
    FROM confidence_intervals)
WHERE rn = 1;

-- Tests: corrected p-values are only comparable within one family, so for each dataset, human,
-- level, coefficient, method, alternative and correction the view keeps the rows of the family
-- (metric set) written last -- after `compare` on a subset of metrics it shows that subset,
-- not a mix of Bonferroni factors from different runs; earlier families stay in
-- hypothesis_tests. Without a correction (family NULL) every pair's latest row is shown.
-- Only finished runs count: a compare that is running, was interrupted or failed has not
-- corrected its family (its raw p-values are reused when the command is run again).
CREATE OR REPLACE VIEW latest_hypothesis_tests AS
WITH complete AS (
    SELECT *, first_value(family) OVER (PARTITION BY dataset, subset, aggregate, human, level, coefficient, method, alternative,
                                                     correction, correction_group
                                        ORDER BY result_id DESC) AS latest_family
    FROM hypothesis_tests
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
SELECT * EXCLUDE (rn, latest_family) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, aggregate, metric_a, metric_b, human, level, coefficient,
                                              method, alternative, correction, correction_group
                                 ORDER BY result_id DESC) AS rn
    FROM complete
    WHERE family IS NOT DISTINCT FROM latest_family)
WHERE rn = 1;
