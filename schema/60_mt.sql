-- MT meta-evaluation (mt-metrics-eval, WMT metrics task): soft pairwise accuracy
-- (Thompson et al. 2024). Like the tables of 21_results.sql: one row per computed result, tied
-- to its run, with the fingerprint of what it was computed from and a `conventions` JSON.

-- `metaeval accuracy --soft`: 1 - mean over system pairs of |p_human - p_metric|.
CREATE TABLE IF NOT EXISTS soft_pairwise_accuracy (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    metric            VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    k                 INTEGER NOT NULL,     -- permutations (the same sign flips for human and metric)
    seed              BIGINT NOT NULL,      -- mt-metrics-eval's draw: default_rng(seed), 4 by default
    spa               DOUBLE,               -- NULL when fewer than 2 systems or no complete input
    pairs             INTEGER NOT NULL,     -- system pairs averaged over
    systems_used      INTEGER NOT NULL,     -- systems with some pair of values
    inputs_used       INTEGER NOT NULL,     -- inputs where every used system has both values
    n_systems         INTEGER NOT NULL,
    n_inputs          INTEGER NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT '',  -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
    aggregate    VARCHAR NOT NULL DEFAULT 'mean'  -- a system's score over its inputs: mean | median (system level)
);

-- `metaeval rank-tasks`: metrics ranked over several tasks (dataset, human, level, coefficient,
-- weight) at once, as the WMT23/24 metrics tasks: one row per metric of a run.
CREATE TABLE IF NOT EXISTS task_rankings (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    task_set          VARCHAR NOT NULL,     -- sha256 prefix of the tasks' specification (JSON in `tasks`)
    tasks             JSON NOT NULL,        -- [{dataset, human, level, coefficient, weight}, ...]
    metric            VARCHAR NOT NULL,
    average           DOUBLE,               -- sum_t w_t (r_t - lo_t) / (hi_t - lo_t); NULL if a task is undefined
    correlations      JSON NOT NULL,        -- per task (in `tasks` order): r_t, null when undefined
    rank              INTEGER,              -- 1 = highest average; NULL when the average is undefined
    cluster           INTEGER,              -- significance cluster, 1 = best; NULL when the average is undefined
    winner            BOOLEAN,              -- beaten by no other metric; NULL when the average is undefined
    n_beaten_by       INTEGER NOT NULL,
    p_values          JSON NOT NULL,        -- {other metric: p of average(metric) > average(other)}
    k                 INTEGER NOT NULL,
    seed              BIGINT NOT NULL,
    alpha             DOUBLE NOT NULL,
    fingerprint       VARCHAR NOT NULL,     -- of every task's cells
    conventions       JSON NOT NULL
);
