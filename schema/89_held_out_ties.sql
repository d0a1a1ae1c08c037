-- Tie calibration with the threshold chosen on held-out data (`metaeval held-out-ties`;
-- analyses/held_out_ties.py; Perrella et al., ACL 2024): per metric and level, epsilon chosen on
-- a calibration part (a seeded split of the inputs, or another dataset), the coefficient on the
-- evaluation part with it, beside the value tuned on the evaluation part itself.
CREATE TABLE IF NOT EXISTS held_out_ties (
    result_id       BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id          INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset         VARCHAR NOT NULL,
    human           VARCHAR NOT NULL,
    metric          VARCHAR NOT NULL,
    level           VARCHAR NOT NULL,
    coefficient     VARCHAR NOT NULL,
    calibration     VARCHAR NOT NULL,
    fraction        DOUBLE,
    seed            BIGINT,
    n_calibration   INTEGER NOT NULL,
    n_evaluation    INTEGER NOT NULL,
    epsilon         DOUBLE,
    value           DOUBLE,
    epsilon_on_test DOUBLE,
    value_on_test   DOUBLE,
    value_untied    DOUBLE,
    fingerprint     VARCHAR NOT NULL,
    conventions     JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_held_out_ties AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, human, metric, level, coefficient, calibration, fraction, seed)
        AS latest_run
    FROM held_out_ties
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE held_out_ties IS '`metaeval held-out-ties`: acc-eq (or tau-23) with its tie threshold chosen on a calibration part (a seeded split of the inputs, or another dataset) and reported on the evaluation part, beside the value tuned on the evaluation part itself (Perrella et al. 2024).';
COMMENT ON VIEW latest_held_out_ties IS 'The rows of the finished run written last for each dataset, human, metric, level, coefficient and calibration (split fraction and seed, or dataset).';
COMMENT ON COLUMN held_out_ties.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN held_out_ties.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN held_out_ties.dataset IS 'The evaluated dataset (datasets.name).';
COMMENT ON COLUMN held_out_ties.human IS 'The human judgment (measures.name).';
COMMENT ON COLUMN held_out_ties.metric IS 'The metric (measures.name).';
COMMENT ON COLUMN held_out_ties.level IS 'summary (per input over the systems, then the mean: items grouped), global or system.';
COMMENT ON COLUMN held_out_ties.coefficient IS 'acc-23 (acc-eq) or kendall-23 (tau-23), whose tie threshold is calibrated.';
COMMENT ON COLUMN held_out_ties.calibration IS '''split'': a seeded split of the dataset''s inputs (fraction, seed); else the dataset that calibrated (every input of this one evaluates).';
COMMENT ON COLUMN held_out_ties.fraction IS 'Share of the inputs in the calibration part (the first round(fraction M) of a seeded permutation); NULL with a calibration dataset.';
COMMENT ON COLUMN held_out_ties.seed IS 'Seed of the split (numpy default_rng(seed).permutation of the inputs); NULL with a calibration dataset.';
COMMENT ON COLUMN held_out_ties.n_calibration IS 'Inputs of the calibration part.';
COMMENT ON COLUMN held_out_ties.n_evaluation IS 'Inputs of the evaluation part.';
COMMENT ON COLUMN held_out_ties.epsilon IS 'The tie threshold chosen on the calibration part (in the metric''s units); NULL when no pair there is valid.';
COMMENT ON COLUMN held_out_ties.value IS 'The coefficient on the evaluation part with that threshold: the held-out value; NULL when undefined.';
COMMENT ON COLUMN held_out_ties.epsilon_on_test IS 'The threshold tuned on the evaluation part itself (the usual protocol).';
COMMENT ON COLUMN held_out_ties.value_on_test IS 'The coefficient on the evaluation part with the threshold tuned there (optimistic: value_on_test - value is what tuning on the test adds).';
COMMENT ON COLUMN held_out_ties.value_untied IS 'The coefficient on the evaluation part with no tie threshold (epsilon 0).';
COMMENT ON COLUMN held_out_ties.fingerprint IS 'sha256 of the cells read (of both datasets with a calibration dataset).';
COMMENT ON COLUMN held_out_ties.conventions IS 'JSON: the calibration protocol, the split, the variant and the orientation.';
