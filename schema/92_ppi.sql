-- Prediction-powered estimates (`metaeval ppi`; analyses/ppi.py, PPI++ in ppi_py's conventions):
-- what the humans would give on every cell, from a human measure on some cells and a metric or an
-- automatic judge on all of them; each row beside the classical estimate from the humans alone.
CREATE TABLE IF NOT EXISTS ppi_estimates (
    result_id        BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id           INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset          VARCHAR NOT NULL,
    estimand         VARCHAR NOT NULL,
    human            VARCHAR NOT NULL,
    predictor        VARCHAR NOT NULL,
    system           VARCHAR NOT NULL,
    other            VARCHAR NOT NULL,
    estimate         DOUBLE,
    se               DOUBLE,
    lower            DOUBLE,
    upper            DOUBLE,
    classical        DOUBLE,
    classical_lower  DOUBLE,
    classical_upper  DOUBLE,
    lam              DOUBLE,
    n_labelled       INTEGER NOT NULL,
    n_unlabelled     INTEGER NOT NULL,
    effective_labels DOUBLE,
    p_value          DOUBLE,
    p_adjusted       DOUBLE,
    significant      BOOLEAN,
    cluster          DOUBLE,
    lam_given        DOUBLE,
    labelled_share   DOUBLE,
    label_seed       BIGINT NOT NULL,
    alpha            DOUBLE NOT NULL,
    correction       VARCHAR NOT NULL,
    fingerprint      VARCHAR NOT NULL,
    conventions      JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_ppi_estimates AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, estimand, human, predictor, lam_given, labelled_share,
                                             label_seed) AS latest_run
    FROM ppi_estimates
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE ppi_estimates IS '`metaeval ppi`: prediction-powered (PPI++) estimates of the human scores of every system, their paired differences, win rates against a baseline or Bradley-Terry scores, from a metric or judge on every cell and a human measure on some; the intervals assume the labelled cells are a uniform random sample.';
COMMENT ON VIEW latest_ppi_estimates IS 'The rows of the finished run written last for each dataset, estimand, human measure, predictor, lambda and labelled share.';
COMMENT ON COLUMN ppi_estimates.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN ppi_estimates.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN ppi_estimates.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN ppi_estimates.estimand IS 'mean (a system''s mean human score), difference (system minus other, paired on inputs), winrate (the share of items preferring system to other, a tie 1/2), bradley-terry (system''s log-odds score, other the reference at 0) or bradley-terry-difference (system''s score minus other''s).';
COMMENT ON COLUMN ppi_estimates.human IS 'The human measure (measures.name); '''' for pairwise votes (every human verdict).';
COMMENT ON COLUMN ppi_estimates.predictor IS 'The metric (measures.name) or automatic judge (preferences.judge) that predicts the human labels on every cell.';
COMMENT ON COLUMN ppi_estimates.system IS 'The system (systems.name).';
COMMENT ON COLUMN ppi_estimates.other IS 'The second system of a difference, the baseline of a win rate, the reference of a Bradley-Terry score; '''' for a mean.';
COMMENT ON COLUMN ppi_estimates.estimate IS 'The prediction-powered estimate; NULL when undefined (fewer than 2 labelled cells, no unlabelled one, no finite fit).';
COMMENT ON COLUMN ppi_estimates.se IS 'Its standard error.';
COMMENT ON COLUMN ppi_estimates.lower IS 'Lower bound of the 1 - alpha normal interval (estimate - z se).';
COMMENT ON COLUMN ppi_estimates.upper IS 'Upper bound of that interval.';
COMMENT ON COLUMN ppi_estimates.classical IS 'The classical estimate from the labelled cells'' human labels alone (lambda 0).';
COMMENT ON COLUMN ppi_estimates.classical_lower IS 'Lower bound of the classical 1 - alpha normal interval.';
COMMENT ON COLUMN ppi_estimates.classical_upper IS 'Upper bound of the classical interval.';
COMMENT ON COLUMN ppi_estimates.lam IS 'The lambda used: PPI++''s variance-minimising estimate clipped to [0, 1] (lam_given NULL) or the one given; near 0: the predictor does not help.';
COMMENT ON COLUMN ppi_estimates.n_labelled IS 'n: cells (inputs for a difference, items for votes) with both the human label and the prediction.';
COMMENT ON COLUMN ppi_estimates.n_unlabelled IS 'N: cells with the prediction only.';
COMMENT ON COLUMN ppi_estimates.effective_labels IS 'n (classical width / PPI width)^2: the human labels the classical interval would need for the same width; NULL when a width is 0 or undefined.';
COMMENT ON COLUMN ppi_estimates.p_value IS 'Differences (of means or of Bradley-Terry scores): two-sided normal p of estimate = 0; win rates: of estimate = 1/2; NULL otherwise.';
COMMENT ON COLUMN ppi_estimates.p_adjusted IS 'That p corrected (correction) over every pair, or over the systems for win rates, by the conclusion layer.';
COMMENT ON COLUMN ppi_estimates.significant IS 'The conclusion layer''s verdict on the test; NULL when untested.';
COMMENT ON COLUMN ppi_estimates.cluster IS 'Means and Bradley-Terry scores: the rank group (1 = best) of the conclusion layer''s clusters over the corrected differences; NULL when not determined.';
COMMENT ON COLUMN ppi_estimates.lam_given IS 'The lambda asked for; NULL: estimated from the data (PPI++).';
COMMENT ON COLUMN ppi_estimates.labelled_share IS 'The share of inputs kept labelled by a uniform draw (label_seed); NULL: the labels as stored.';
COMMENT ON COLUMN ppi_estimates.label_seed IS 'Seed of that draw.';
COMMENT ON COLUMN ppi_estimates.alpha IS 'Intervals at 1 - alpha; tests at alpha.';
COMMENT ON COLUMN ppi_estimates.correction IS 'The multiple-comparison correction over the differences.';
COMMENT ON COLUMN ppi_estimates.fingerprint IS 'sha256 of the cells or items read (and of the labels kept).';
COMMENT ON COLUMN ppi_estimates.conventions IS 'JSON: the estimator, lambda''s formula, the interval, the assumption, the cells used and the groups.';
