-- Simulations (Deutsch, Dror & Roth 2021, §5) and normality diagnostics (appendix A).
-- Like the other results: one row per computed number, tied to its run, with the sha256
-- fingerprint of the data it was computed from and a `conventions` JSON.
--
-- The simulations run in blocks of trials; each finished block is a row of a *_blocks table
-- (partial counts), so an interrupted simulation resumes where it stopped and a larger
-- --trials reuses the blocks already computed. The final row of a key is written once all
-- its blocks are in.

CREATE TABLE IF NOT EXISTS ci_coverage (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    metric       VARCHAR NOT NULL,
    human        VARCHAR NOT NULL,
    level        VARCHAR NOT NULL,
    coefficient  VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,     -- fisher | boot-systems | boot-inputs | boot-both (as `metaeval ci`)
    alpha        DOUBLE NOT NULL,      -- the CI is two-sided 1 - alpha
    k            INTEGER,              -- resamples per CI (NULL for fisher)
    seed         BIGINT NOT NULL,      -- splits and resamples
    trials       INTEGER NOT NULL,
    contains     INTEGER NOT NULL,     -- lower <= r(X_B, Z_B) <= upper
    too_high     INTEGER NOT NULL,     -- r(X_B, Z_B) > upper
    too_low      INTEGER NOT NULL,     -- r(X_B, Z_B) < lower
    undefined    INTEGER NOT NULL,     -- the CI or r(X_B, Z_B) undefined (NaN)
    coverage     DOUBLE,               -- contains / (trials - undefined)
    n_systems    INTEGER NOT NULL,     -- of the whole matrices (each half has floor(n / 2))
    n_inputs     INTEGER NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL
);

CREATE TABLE IF NOT EXISTS ci_coverage_blocks (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    metric       VARCHAR NOT NULL,
    human        VARCHAR NOT NULL,
    level        VARCHAR NOT NULL,
    coefficient  VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,
    alpha        DOUBLE NOT NULL,
    k            INTEGER,
    seed         BIGINT NOT NULL,
    block        INTEGER NOT NULL,     -- trials block * size .. block * size + trials - 1
    trials       INTEGER NOT NULL,
    contains     INTEGER NOT NULL,
    too_high     INTEGER NOT NULL,
    too_low      INTEGER NOT NULL,
    undefined    INTEGER NOT NULL,
    n_systems    INTEGER NOT NULL,
    n_inputs     INTEGER NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL
);

CREATE TABLE IF NOT EXISTS power (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    human        VARCHAR NOT NULL,
    variant      VARCHAR NOT NULL,     -- ROUGE-1 statistic compared: recall | f1
    level        VARCHAR NOT NULL,
    coefficient  VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,     -- williams | boot-both | perm-both ... (as `metaeval compare`)
    proportion   DOUBLE NOT NULL,      -- share of each candidate's tokens R_k keeps
    alpha        DOUBLE NOT NULL,      -- H0 rejected when p <= alpha
    k            INTEGER,              -- resamples per test (NULL for williams)
    seed         BIGINT NOT NULL,      -- R_k draws and resamples
    trials       INTEGER NOT NULL,
    rejections   INTEGER NOT NULL,     -- trials concluding corr(ROUGE-1) > corr(R_k)
    power        DOUBLE,               -- rejections / trials
    n_systems    INTEGER NOT NULL,
    n_inputs     INTEGER NOT NULL,
    fingerprint  VARCHAR NOT NULL,     -- texts (summaries, references) and human cells
    conventions  JSON NOT NULL
);

CREATE TABLE IF NOT EXISTS power_blocks (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    human        VARCHAR NOT NULL,
    variant      VARCHAR NOT NULL,
    level        VARCHAR NOT NULL,
    coefficient  VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,
    proportion   DOUBLE NOT NULL,
    alpha        DOUBLE NOT NULL,
    k            INTEGER,
    seed         BIGINT NOT NULL,
    block        INTEGER NOT NULL,
    trials       INTEGER NOT NULL,
    rejections   INTEGER NOT NULL,
    n_systems    INTEGER NOT NULL,
    n_inputs     INTEGER NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL
);

CREATE TABLE IF NOT EXISTS normality (
    result_id            BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id               INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset              VARCHAR NOT NULL,
    measure              VARCHAR NOT NULL,
    level                VARCHAR NOT NULL,   -- system: the N system means; summary: each input's scores
    test                 VARCHAR NOT NULL,   -- shapiro-wilk
    statistic            DOUBLE,             -- W (system level)
    p_value              DOUBLE,             -- (system level)
    percent_significant  DOUBLE,             -- summary level: percent of inputs with p <= alpha
    n                    INTEGER NOT NULL,   -- values tested (system) / inputs tested (summary)
    fingerprint          VARCHAR NOT NULL,
    conventions          JSON NOT NULL
);
