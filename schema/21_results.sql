-- Results, one row per computed number, each tied to the run that produced it.
-- `fingerprint` is the sha256 of the cells the row was computed from (metric, human, and
-- for tests the second metric); `conventions` records level/coefficient variant, NaN
-- handling, resampling and p-value conventions (JSON), so a paper can cite them.
CREATE SEQUENCE IF NOT EXISTS result_id_seq;

CREATE TABLE IF NOT EXISTS correlations (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    metric       VARCHAR NOT NULL,
    human        VARCHAR NOT NULL,
    level        VARCHAR NOT NULL,
    coefficient  VARCHAR NOT NULL,
    value        DOUBLE,               -- NULL where the correlation is undefined
    system_inputs VARCHAR,             -- all | judged: the inputs a system score averages (system level)
    n_systems    INTEGER NOT NULL,
    n_inputs     INTEGER NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT '',  -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
    aggregate    VARCHAR NOT NULL DEFAULT 'mean'  -- a system's score over its inputs: mean | median (system level)
);

CREATE TABLE IF NOT EXISTS confidence_intervals (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    metric       VARCHAR NOT NULL,
    human        VARCHAR NOT NULL,
    level        VARCHAR NOT NULL,
    coefficient  VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,     -- fisher | boot-systems | boot-inputs | boot-both
    alpha        DOUBLE NOT NULL,
    k            INTEGER,              -- resamples (NULL for fisher)
    seed         BIGINT,               -- NULL for fisher
    system_inputs VARCHAR,             -- all | judged: the inputs a system score averages (system level)
    resample_annotators VARCHAR,       -- NULL, or cells | panel: annotators re-drawn in each resample
    estimate     DOUBLE,
    lower        DOUBLE,
    upper        DOUBLE,
    n_valid      INTEGER,              -- resamples with a defined correlation
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT '',  -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
    aggregate    VARCHAR NOT NULL DEFAULT 'mean'  -- a system's score over its inputs: mean | median (system level)
);

CREATE TABLE IF NOT EXISTS hypothesis_tests (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    metric_a          VARCHAR NOT NULL,     -- H1: corr(metric_a, human) > corr(metric_b, human)
    metric_b          VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    level             VARCHAR NOT NULL,
    coefficient       VARCHAR NOT NULL,
    method            VARCHAR NOT NULL,     -- williams | perm-* | boot-*
    alternative       VARCHAR NOT NULL,
    k                 INTEGER,
    seed              BIGINT,
    system_inputs     VARCHAR,              -- all | judged: the inputs a system score averages (system level)
    resample_annotators VARCHAR,            -- NULL, or cells | panel: annotators re-drawn in each resample
    delta             DOUBLE,               -- corr(a, human) - corr(b, human)
    statistic         DOUBLE,               -- Williams' t; NULL for resampling tests
    p_value           DOUBLE,
    correction        VARCHAR NOT NULL,     -- none | bonferroni | holm | bh
    correction_group  VARCHAR NOT NULL,     -- metric (family = same metric_a) | all
    family            VARCHAR,              -- the metrics compared together (sha256 prefix of their sorted
                                            -- names): with the level, coefficient and group, the
                                            -- correction's family; NULL when correction = none
    family_size       INTEGER,              -- p-values the correction was applied over (NULL: none)
    alpha             DOUBLE NOT NULL,
    p_adjusted        DOUBLE,
    significant       BOOLEAN,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    k_block           INTEGER,              -- permutation tests with early stopping (mt-metrics-eval's
                                            -- block size); NULL: all k resamples drawn
    k_used            INTEGER,              -- resamples actually drawn (resampling tests)
    risk              DOUBLE,               -- sequential tests (MMCTest): the bound on the probability that any
                                            -- decision of the family differs from the exact p-values'; k is then
                                            -- k_max. NULL: a fixed k (or k_block)
    subset       VARCHAR NOT NULL DEFAULT '',  -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
    aggregate    VARCHAR NOT NULL DEFAULT 'mean'  -- a system's score over its inputs: mean | median (system level)
);
