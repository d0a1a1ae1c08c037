-- Human judgments as measured data (`metaeval annotators`): how much the annotators agree, and
-- the human ceiling -- how well one annotator agrees with the others. One row per computed
-- number, tied to its run, with the fingerprint of every annotator's values it read.

CREATE TABLE IF NOT EXISTS annotator_agreement (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,    -- the human measure
    statistic         VARCHAR NOT NULL,    -- krippendorff-alpha | pairwise-correlation
    variant           VARCHAR NOT NULL,    -- alpha: interval | ordinal; pairwise: <level>/<coefficient>
    value             DOUBLE,              -- NULL when undefined
    identity_free     BOOLEAN NOT NULL,    -- true: uses only the values within each cell (alpha);
                                           -- false: assumes an annotator id is one person everywhere
    annotators        INTEGER NOT NULL,    -- distinct annotator ids
    min_per_cell      INTEGER NOT NULL,    -- annotators per judged cell
    median_per_cell   DOUBLE NOT NULL,
    max_per_cell      INTEGER NOT NULL,
    cells             INTEGER NOT NULL,    -- judged cells
    positional_ids    BOOLEAN NOT NULL,    -- ids are list positions "0".."K-1" (anonymous)
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT ''  -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
);

CREATE TABLE IF NOT EXISTS human_ceiling (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    level             VARCHAR NOT NULL,    -- system | summary | global
    coefficient       VARCHAR NOT NULL,
    estimator         VARCHAR NOT NULL,    -- leave-one-out (identity-based) | split-half (identity-free)
    value             DOUBLE,              -- NULL when undefined
    lower             DOUBLE,              -- Boot-Both percentile interval (leave-one-out only)
    upper             DOUBLE,
    alpha             DOUBLE,
    k                 INTEGER,             -- bootstrap resamples (leave-one-out) / random splits (split-half)
    seed              BIGINT NOT NULL,
    identity_free     BOOLEAN NOT NULL,
    positional_ids    BOOLEAN NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT ''  -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
);

CREATE OR REPLACE VIEW latest_annotator_agreement AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, human, statistic, variant ORDER BY result_id DESC) AS rn
    FROM annotator_agreement)
WHERE rn = 1;

CREATE OR REPLACE VIEW latest_human_ceiling AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, human, level, coefficient, estimator
                                 ORDER BY result_id DESC) AS rn
    FROM human_ceiling)
WHERE rn = 1;
