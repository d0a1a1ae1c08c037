-- Ranking and agreement analyses (Louis & Nenkova 2013, Graham 2015, Dror et al. 2017).
-- Like the tables of 21_results.sql: one row per computed result, tied to its run, with the
-- fingerprint of what it was computed from and a `conventions` JSON.

-- `metaeval accuracy`: share of system pairs ordered as the humans order them.
CREATE TABLE IF NOT EXISTS pairwise_accuracy (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    metric            VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    level             VARCHAR NOT NULL,     -- system (macro: system means) | micro (pairs within inputs, pooled)
    metric_tolerance  DOUBLE NOT NULL,      -- |difference| <= tolerance is a tie (0: exact ties)
    human_tolerance   DOUBLE NOT NULL,
    system_inputs     VARCHAR,              -- all | judged: the inputs a system mean averages (system level)
    accuracy          DOUBLE,               -- agree / pairs; NULL without pairs
    pairs             INTEGER NOT NULL,
    agree             INTEGER NOT NULL,     -- same order, ties with ties included
    disagree          INTEGER NOT NULL,     -- pairs - agree = flipped + metric_ties + human_ties
    flipped           INTEGER NOT NULL,     -- opposite strict orders
    metric_ties       INTEGER NOT NULL,     -- metric ties, human does not
    human_ties        INTEGER NOT NULL,     -- human ties, metric does not
    both_ties         INTEGER NOT NULL,     -- both tie (counted in agree)
    n_systems         INTEGER NOT NULL,
    n_inputs          INTEGER NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT '',  -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
    aggregate    VARCHAR NOT NULL DEFAULT 'mean'  -- a system's score over its inputs: mean | median (system level)
);

-- `metaeval accuracy`: inputs whose per-input correlation is significant (micro level).
CREATE TABLE IF NOT EXISTS input_significance (
    result_id            BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id               INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset              VARCHAR NOT NULL,
    metric               VARCHAR NOT NULL,
    human                VARCHAR NOT NULL,
    coefficient          VARCHAR NOT NULL,
    alpha                DOUBLE NOT NULL,
    alternative          VARCHAR NOT NULL,  -- two-sided | greater | less
    n_defined            INTEGER NOT NULL,  -- inputs with a defined correlation
    n_significant        INTEGER NOT NULL,  -- inputs with p <= alpha
    percent_significant  DOUBLE NOT NULL,   -- 100 n_significant / n_inputs
    min_significant      DOUBLE,            -- smallest and largest significant correlation of the sign that counts
    max_significant      DOUBLE,
    n_systems            INTEGER NOT NULL,
    n_inputs             INTEGER NOT NULL,
    fingerprint          VARCHAR NOT NULL,
    conventions          JSON NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT '', -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
    pvalue               VARCHAR NOT NULL DEFAULT 't'  -- t (scipy) | as89 (R's cor.test, Spearman)
);

-- `metaeval systems-agreement`: every pair of systems tested under the metric and the human.
CREATE TABLE IF NOT EXISTS system_agreement (
    result_id          BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id             INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset            VARCHAR NOT NULL,
    metric             VARCHAR NOT NULL,
    human              VARCHAR NOT NULL,
    test               VARCHAR NOT NULL,    -- ttest | wilcoxon | permutation (two-sided, paired over inputs)
    alpha              DOUBLE NOT NULL,
    k                  INTEGER,             -- permutation only
    seed               BIGINT,              -- permutation only
    pairs              INTEGER NOT NULL,    -- system pairs tested
    same               INTEGER NOT NULL,    -- both significant, same direction
    opposite           INTEGER NOT NULL,    -- both significant, opposite directions
    metric_only        INTEGER NOT NULL,    -- only the metric's test significant
    human_only         INTEGER NOT NULL,    -- only the human's test significant
    neither            INTEGER NOT NULL,
    agreement          DOUBLE,              -- (same + neither) / pairs
    metric_significant INTEGER NOT NULL,    -- same + opposite + metric_only
    human_significant  INTEGER NOT NULL,    -- same + opposite + human_only
    n_systems          INTEGER NOT NULL,
    n_inputs           INTEGER NOT NULL,
    fingerprint        VARCHAR NOT NULL,
    conventions        JSON NOT NULL
);

-- `metaeval winners`: from the hypothesis_tests of one method and correction, the metrics not
-- significantly beaten by any other, and the ranking into significance clusters.
CREATE TABLE IF NOT EXISTS winners (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    level             VARCHAR NOT NULL,
    coefficient       VARCHAR NOT NULL,
    method            VARCHAR NOT NULL,     -- of the hypothesis tests read
    alternative       VARCHAR NOT NULL,
    correction        VARCHAR NOT NULL,
    correction_group  VARCHAR NOT NULL,
    alpha             DOUBLE NOT NULL,      -- a beats b when p_adjusted <= alpha
    metric            VARCHAR NOT NULL,
    correlation       DOUBLE,               -- corr(metric, human): the ranking score
    rank              INTEGER,              -- 1 = highest correlation; NULL: correlation undefined
    cluster           INTEGER,              -- 1 = best significance cluster; NULL: not a finding (status)
    is_winner         BOOLEAN,              -- beaten by no other metric; NULL: not a finding (status)
    n_beaten_by       INTEGER NOT NULL,
    beaten_by         JSON NOT NULL,        -- the metrics that significantly beat it
    n_metrics         INTEGER NOT NULL,
    n_systems         INTEGER NOT NULL,
    n_inputs          INTEGER NOT NULL,
    fingerprint       VARCHAR NOT NULL,     -- of the test rows and cells of the whole ranking
    conventions       JSON NOT NULL,
    cluster_rule      VARCHAR,              -- any (mt-metrics-eval AssignRanks) | strict; NULL: strict (schema 3)
    status            VARCHAR,              -- ranked | undefined (correlation undefined) | unresolvable (no test
                                            -- of the family can reach the corrected level); NULL: schema 3
    aggregate         VARCHAR NOT NULL DEFAULT 'mean'  -- a system's score over its inputs: mean | median
);

-- `metaeval replicability`: on how many datasets does metric_a beat metric_b?
-- `dataset` and `human` name the group: the datasets (sorted) and their humans, joined by '+'.
CREATE TABLE IF NOT EXISTS replicability (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    human        VARCHAR NOT NULL,
    metric_a     VARCHAR NOT NULL,
    metric_b     VARCHAR NOT NULL,
    level        VARCHAR NOT NULL,
    coefficient  VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,          -- of the hypothesis tests read
    alternative  VARCHAR NOT NULL,
    pc_method    VARCHAR NOT NULL,          -- bonferroni | fisher (partial conjunction)
    alpha        DOUBLE NOT NULL,
    n_datasets   INTEGER NOT NULL,
    k_hat        INTEGER NOT NULL,          -- estimated number of datasets with an effect
    pc_pvalues   JSON NOT NULL,             -- [p^{1/n}, ..., p^{n/n}], step-down
    p_values     JSON NOT NULL,             -- {dataset: uncorrected p-value of the comparison}
    identified   JSON,                      -- Holm's rejections (bonferroni); NULL for fisher
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL
);
