-- Metrics judged as detectors on binary labels (`metaeval detection`, issue 26 item 3): a cell
-- is positive ("consistent") when its human value is >= `positive`; per metric, ROC-AUC and the
-- balanced accuracy at a threshold tuned on a tune subset (or fixed), with percentile bootstrap
-- intervals over the cells, per group of `--by` and their macro average; and paired bootstrap
-- tests between the metrics. Formulas: analyses/detection.py; rows' conventions say the rest.

CREATE TABLE IF NOT EXISTS detection (
    result_id               BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id                  INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset                 VARCHAR NOT NULL,
    metric                  VARCHAR NOT NULL,
    human                   VARCHAR NOT NULL,
    positive                DOUBLE NOT NULL,    -- a cell is positive when its human value >= positive
    subset                  VARCHAR NOT NULL,   -- the evaluated cells: --where and by=group ('' every cell; by=* the macro row)
    "by"                    VARCHAR NOT NULL,   -- the --by attribute ('' none)
    "group"                 VARCHAR NOT NULL,   -- its value ('' without --by; '*' the macro average)
    tune                    VARCHAR,            -- the --tune subset; '' tuned on the evaluated cells; NULL: a fixed threshold
    fixed_threshold         DOUBLE,             -- --threshold; NULL when tuned
    k                       INTEGER NOT NULL,
    alpha                   DOUBLE NOT NULL,
    seed                    BIGINT NOT NULL,
    n                       INTEGER NOT NULL,   -- evaluated cells (metric and human present)
    n_positive              INTEGER NOT NULL,
    n_tune                  INTEGER,            -- tune cells (NULL with a fixed threshold)
    n_tune_positive         INTEGER,
    roc_auc                 DOUBLE,             -- NULL when undefined (one class only)
    roc_auc_lower           DOUBLE,
    roc_auc_upper           DOUBLE,
    threshold               DOUBLE,             -- predicted positive when score > threshold; -inf: all; NULL: undefined or macro
    balanced_accuracy       DOUBLE,
    balanced_accuracy_lower DOUBLE,
    balanced_accuracy_upper DOUBLE,
    tune_balanced_accuracy  DOUBLE,             -- on the tune cells at the tuned threshold
    n_valid                 INTEGER NOT NULL,   -- resamples with a defined balanced accuracy
    n_valid_auc             INTEGER NOT NULL,   -- resamples with a defined ROC-AUC
    fingerprint             VARCHAR NOT NULL,
    conventions             JSON NOT NULL
);

CREATE TABLE IF NOT EXISTS detection_tests (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    metric_a          VARCHAR NOT NULL,
    metric_b          VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    positive          DOUBLE NOT NULL,
    subset            VARCHAR NOT NULL,
    "by"              VARCHAR NOT NULL,
    "group"           VARCHAR NOT NULL,
    tune              VARCHAR,
    fixed_threshold   DOUBLE,
    statistic         VARCHAR NOT NULL,     -- balanced_accuracy | roc_auc
    alternative       VARCHAR NOT NULL,
    k                 INTEGER NOT NULL,
    seed              BIGINT NOT NULL,
    value_a           DOUBLE,
    value_b           DOUBLE,
    delta             DOUBLE,               -- value_a - value_b
    p_value           DOUBLE,               -- paired bootstrap, count / k; NULL when undefined
    n                 INTEGER NOT NULL,     -- evaluated cells both metrics scored
    n_valid           INTEGER NOT NULL,
    correction        VARCHAR NOT NULL,
    correction_group  VARCHAR NOT NULL,     -- metric (family = same metric_a, group, statistic) | all
    family_size       INTEGER,
    alpha             DOUBLE NOT NULL,
    p_adjusted        DOUBLE,
    significant       BOOLEAN,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_detection AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, metric, human, positive, subset, "by", "group", tune,
                                              fixed_threshold, alpha
                                 ORDER BY result_id DESC) AS rn
    FROM detection)
WHERE rn = 1;

-- Corrected p-values are comparable within one family only: for each setting the view keeps
-- the rows of the finished run written last (its metrics' family), not a mix of runs.
CREATE OR REPLACE VIEW latest_detection_tests AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, human, positive, subset, "by", tune, fixed_threshold,
                                             alternative, correction, correction_group) AS latest_run
    FROM detection_tests
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE detection IS '`metaeval detection`: each metric judged as a detector of the cells whose human value is >= positive: ROC-AUC and balanced accuracy at a tuned (or fixed) threshold, with percentile bootstrap intervals, per group of --by and their macro average.';
COMMENT ON VIEW latest_detection IS 'The latest detection row of each dataset, metric, human, positive, subset, group, tune subset, fixed threshold and alpha.';
COMMENT ON TABLE detection_tests IS '`metaeval detection`: paired bootstrap tests of the difference between two metrics in balanced accuracy and in ROC-AUC on the cells both scored, corrected within each family.';
COMMENT ON VIEW latest_detection_tests IS 'The detection_tests rows of the finished run written last for each setting (one family of corrected p-values).';
COMMENT ON COLUMN detection.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN detection.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN detection.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN detection.metric IS 'Automatic measure judged as a detector (measures.name); oriented so that higher is better (direction ''lower'' negated).';
COMMENT ON COLUMN detection.human IS 'Human judgment giving the labels (measures.name, kind human), mean over annotators per cell.';
COMMENT ON COLUMN detection.positive IS 'A cell is positive (consistent) when its human value is >= positive (a 0/1 label: 1).';
COMMENT ON COLUMN detection.subset IS 'The evaluated cells: the --where conditions and by=group, attr=value joined by '' & '' ('''' every cell; by=* for the macro average).';
COMMENT ON COLUMN detection."by" IS 'The --by attribute whose values are the groups ('''' for none).';
COMMENT ON COLUMN detection."group" IS 'The group: the --by attribute''s value ('''' without --by; ''*'' the unweighted macro average over the groups).';
COMMENT ON COLUMN detection.tune IS 'The subset the threshold is tuned on (--tune; within each group with --by); '''' tuned on the evaluated cells themselves (optimistic); NULL with a fixed threshold.';
COMMENT ON COLUMN detection.fixed_threshold IS '--threshold: the fixed threshold; NULL when the threshold is tuned.';
COMMENT ON COLUMN detection.k IS 'Bootstrap resamples of the intervals (each re-tunes the threshold on its resampled tune cells).';
COMMENT ON COLUMN detection.alpha IS 'The intervals are two-sided 1 - alpha.';
COMMENT ON COLUMN detection.seed IS 'Seed of the resampling.';
COMMENT ON COLUMN detection.n IS 'Evaluated cells: metric and human present, in the subset.';
COMMENT ON COLUMN detection.n_positive IS 'Positive evaluated cells.';
COMMENT ON COLUMN detection.n_tune IS 'Tune cells (NULL with a fixed threshold).';
COMMENT ON COLUMN detection.n_tune_positive IS 'Positive tune cells.';
COMMENT ON COLUMN detection.roc_auc IS 'ROC-AUC: (#{positive > negative} + 1/2 #{ties}) / (P N); 0.5 for constant scores; NULL with one class only.';
COMMENT ON COLUMN detection.roc_auc_lower IS 'Percentile bootstrap lower bound of roc_auc.';
COMMENT ON COLUMN detection.roc_auc_upper IS 'Percentile bootstrap upper bound of roc_auc.';
COMMENT ON COLUMN detection.threshold IS 'A cell is predicted positive when score > threshold (-inf: every cell); for a lower-is-better measure, in its own scale, when score < threshold (+inf: every cell); NULL when undefined and on the macro row.';
COMMENT ON COLUMN detection.balanced_accuracy IS '(TP / P + TN / N) / 2 of the evaluated cells at the threshold; NULL with one class only.';
COMMENT ON COLUMN detection.balanced_accuracy_lower IS 'Percentile bootstrap lower bound of balanced_accuracy.';
COMMENT ON COLUMN detection.balanced_accuracy_upper IS 'Percentile bootstrap upper bound of balanced_accuracy.';
COMMENT ON COLUMN detection.tune_balanced_accuracy IS 'Balanced accuracy of the tune cells at the tuned threshold (its maximum); NULL with a fixed threshold.';
COMMENT ON COLUMN detection.n_valid IS 'Resamples with a defined balanced accuracy (a resample with one class only is undefined).';
COMMENT ON COLUMN detection.n_valid_auc IS 'Resamples with a defined ROC-AUC.';
COMMENT ON COLUMN detection.fingerprint IS 'sha256 of the cells read (metric, human, the subsets'' attributes): a repeated command on the same data computes nothing.';
COMMENT ON COLUMN detection.conventions IS 'JSON: definitions, the threshold''s source and search, tie rule, bootstrap scheme, seed and RNG.';
COMMENT ON COLUMN detection_tests.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN detection_tests.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN detection_tests.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN detection_tests.metric_a IS 'The first detector (delta = value_a - value_b).';
COMMENT ON COLUMN detection_tests.metric_b IS 'The second detector.';
COMMENT ON COLUMN detection_tests.human IS 'Human judgment giving the labels (measures.name, kind human).';
COMMENT ON COLUMN detection_tests.positive IS 'A cell is positive when its human value is >= positive.';
COMMENT ON COLUMN detection_tests.subset IS 'The evaluated cells (as detection.subset).';
COMMENT ON COLUMN detection_tests."by" IS 'The --by attribute ('''' for none).';
COMMENT ON COLUMN detection_tests."group" IS 'The group ('''' without --by; ''*'' the macro averages).';
COMMENT ON COLUMN detection_tests.tune IS 'The tune subset (as detection.tune).';
COMMENT ON COLUMN detection_tests.fixed_threshold IS 'The fixed threshold; NULL when tuned.';
COMMENT ON COLUMN detection_tests.statistic IS 'balanced_accuracy | roc_auc: the statistic compared.';
COMMENT ON COLUMN detection_tests.alternative IS 'H1: two-sided (value_a != value_b), greater or less.';
COMMENT ON COLUMN detection_tests.k IS 'Paired bootstrap resamples (the cells drawn once for both metrics).';
COMMENT ON COLUMN detection_tests.seed IS 'Seed of the resampling.';
COMMENT ON COLUMN detection_tests.value_a IS 'metric_a''s statistic on the cells both scored.';
COMMENT ON COLUMN detection_tests.value_b IS 'metric_b''s statistic on the cells both scored.';
COMMENT ON COLUMN detection_tests.delta IS 'value_a - value_b; NULL when either is undefined.';
COMMENT ON COLUMN detection_tests.p_value IS 'Paired bootstrap p (count / k; two-sided count #{|delta_b - delta| >= |delta|}); NULL when undefined.';
COMMENT ON COLUMN detection_tests.n IS 'Evaluated cells both metrics scored.';
COMMENT ON COLUMN detection_tests.n_valid IS 'Resamples with a defined delta.';
COMMENT ON COLUMN detection_tests.correction IS 'none | bonferroni | holm | bh.';
COMMENT ON COLUMN detection_tests.correction_group IS 'metric: a family is one metric_a''s tests of one group and statistic; all: every pair''s.';
COMMENT ON COLUMN detection_tests.family_size IS 'Defined p-values corrected together (NULL for none).';
COMMENT ON COLUMN detection_tests.alpha IS 'Significance level.';
COMMENT ON COLUMN detection_tests.p_adjusted IS 'The corrected p-value; NULL when p_value is.';
COMMENT ON COLUMN detection_tests.significant IS 'p_adjusted <= alpha, and the family can resolve that at k resamples.';
COMMENT ON COLUMN detection_tests.fingerprint IS 'sha256 of the cells read (both metrics, the human, the subsets'' attributes).';
COMMENT ON COLUMN detection_tests.conventions IS 'JSON: the procedure, p-value formula, threshold source, the family''s resolution, seed and RNG.';
