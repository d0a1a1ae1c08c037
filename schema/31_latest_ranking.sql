-- The latest result of each key of the ranking tables (see 22_latest_results.sql).
CREATE OR REPLACE VIEW latest_pairwise_accuracy AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, aggregate, metric, human, level, metric_tolerance,
                                              human_tolerance
                                 ORDER BY result_id DESC) AS rn
    FROM pairwise_accuracy)
WHERE rn = 1;

CREATE OR REPLACE VIEW latest_input_significance AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, metric, human, coefficient, alpha, alternative,
                                              pvalue
                                 ORDER BY result_id DESC) AS rn
    FROM input_significance)
WHERE rn = 1;

CREATE OR REPLACE VIEW latest_system_agreement AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, metric, human, test, alpha
                                 ORDER BY result_id DESC) AS rn
    FROM system_agreement)
WHERE rn = 1;

-- A ranking is a whole: the rows of the newest run of each (dataset, human, level,
-- coefficient, tests, alpha), never rows of rankings over different sets of metrics.
CREATE OR REPLACE VIEW latest_winners AS
SELECT * EXCLUDE (newest) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, human, aggregate, level, coefficient, method, alternative,
                                             correction, correction_group, alpha, cluster_rule) AS newest
    FROM winners)
WHERE run_id = newest;

CREATE OR REPLACE VIEW latest_replicability AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, human, metric_a, metric_b, level, coefficient,
                                              method, alternative, pc_method, alpha
                                 ORDER BY result_id DESC) AS rn
    FROM replicability)
WHERE rn = 1;
