-- The correlation of two measures with its p-value (`metaeval measure-correlation`;
-- analyses/measure_correlation.py): two human judgments (Louis & Nenkova 2013, §2.3) or two
-- metrics (SERA's Table 3), at the system level (each measure's system scores) or the global
-- level (every cell both measures score), one row per level and coefficient.
CREATE TABLE IF NOT EXISTS measure_correlations (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    measure_a    VARCHAR NOT NULL,
    measure_b    VARCHAR NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT '',
    level        VARCHAR NOT NULL,
    coefficient  VARCHAR NOT NULL,
    alternative  VARCHAR NOT NULL,
    aggregate    VARCHAR NOT NULL DEFAULT 'mean',
    value        DOUBLE,
    p_value      DOUBLE,
    n            INTEGER NOT NULL,
    n_systems    INTEGER NOT NULL,
    n_inputs     INTEGER,
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_measure_correlations AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, measure_a, measure_b, subset, level, coefficient, alternative,
                                             aggregate) AS latest_run
    FROM measure_correlations
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE measure_correlations IS '`metaeval measure-correlation`: the correlation of two measures (two human judgments, two metrics, or one of each) with its p-value, at the system or global level (Louis & Nenkova 2013, §2.3; Cohan & Goharian 2016, Table 3).';
COMMENT ON VIEW latest_measure_correlations IS 'The rows of the finished run written last for each dataset, measure pair, subset, level, coefficient, alternative and aggregate.';
COMMENT ON COLUMN measure_correlations.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN measure_correlations.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN measure_correlations.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN measure_correlations.measure_a IS 'The first measure (a metric or a human judgment).';
COMMENT ON COLUMN measure_correlations.measure_b IS 'The second measure.';
COMMENT ON COLUMN measure_correlations.subset IS 'The cells analysed: the --where conditions joined by '' & '' ('''' every cell).';
COMMENT ON COLUMN measure_correlations.level IS 'system: over the systems'' scores under each measure; global: over every cell both measures score.';
COMMENT ON COLUMN measure_correlations.coefficient IS 'pearson | spearman | kendall (tau-b).';
COMMENT ON COLUMN measure_correlations.alternative IS 'H1 of the p-value: two-sided | greater (positive) | less (negative).';
COMMENT ON COLUMN measure_correlations.aggregate IS 'A system''s score over its inputs: mean (default) or median (the system level alone); a key of the latest view.';
COMMENT ON COLUMN measure_correlations.value IS 'The correlation of the two measures (oriented: higher is better for both); NULL when undefined (fewer than 3 points, a constant side).';
COMMENT ON COLUMN measure_correlations.p_value IS 'Its p-value (scipy.stats; the conventions say which test); NULL when the correlation is undefined.';
COMMENT ON COLUMN measure_correlations.n IS 'Points correlated: systems (system level) or cells (global level) scored by both measures.';
COMMENT ON COLUMN measure_correlations.n_systems IS 'Systems with a value under both measures.';
COMMENT ON COLUMN measure_correlations.n_inputs IS 'Inputs with a value under both measures (global level; NULL at the system level).';
COMMENT ON COLUMN measure_correlations.fingerprint IS 'sha256 of the cells read (both measures).';
COMMENT ON COLUMN measure_correlations.conventions IS 'JSON: orientation, the p-value''s test, how a system''s score is made, systems left out.';
