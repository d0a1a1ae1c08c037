-- Tests between systems under one measure (`metaeval system-tests`, issue 33 item 12; Graham 2015,
-- section 5 and Fig. 4): for every pair of systems, on the inputs both have, the paired t-test,
-- Wilcoxon signed-rank, Wilcoxon rank-sum, paired bootstrap and approximate randomization tests,
-- each method's pairs one corrected family; with --shapiro, each system's Shapiro-Wilk test
-- (method 'shapiro-wilk', system_b ''). Formulas: analyses/system_tests.py; rows' conventions say
-- the rest. A warehouse created before this file gets the table from `metaeval init` (idempotent)
-- or from the first system-tests run, which applies this script before writing.

CREATE TABLE IF NOT EXISTS system_tests (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    measure           VARCHAR NOT NULL,     -- the measure whose scores are compared (automatic or human)
    subset            VARCHAR NOT NULL DEFAULT '',  -- the --where conditions ('' = every cell)
    method            VARCHAR NOT NULL,     -- t-test | wilcoxon | rank-sum | bootstrap | randomization | shapiro-wilk
    alternative       VARCHAR NOT NULL,     -- two-sided | greater | less ('' for shapiro-wilk)
    system_a          VARCHAR NOT NULL,
    system_b          VARCHAR NOT NULL,     -- '' for shapiro-wilk (a test of system_a alone)
    k                 INTEGER,              -- resamples (bootstrap, randomization); NULL for closed-form tests
    seed              BIGINT,               -- seed of the resampling; NULL for closed-form tests
    alpha             DOUBLE NOT NULL,
    correction        VARCHAR NOT NULL,
    correction_group  VARCHAR NOT NULL,     -- all | system
    family_size       INTEGER,              -- defined p-values corrected together
    statistic         DOUBLE,
    mean_a            DOUBLE,
    mean_b            DOUBLE,
    delta             DOUBLE,               -- mean_a - mean_b over the shared inputs
    n                 INTEGER NOT NULL,     -- shared inputs (shapiro-wilk: system_a's inputs)
    n_valid           INTEGER,              -- valid resamples; NULL for closed-form tests
    p_value           DOUBLE,               -- NULL when undefined
    p_adjusted        DOUBLE,
    significant       BOOLEAN NOT NULL,
    better            VARCHAR,              -- the system significantly better (system_a or system_b); NULL when none
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL
);

-- Corrected p-values are comparable within one family only: for each setting the view keeps
-- the rows of the finished run written last (one family of corrected p-values per method).
CREATE OR REPLACE VIEW latest_system_tests AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, measure, subset, method, alternative, correction,
                                             correction_group) AS latest_run
    FROM system_tests
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE system_tests IS '`metaeval system-tests`: significance tests between every pair of systems under one measure (Graham 2015, Fig. 4) on the inputs both have, each method''s pairs one corrected family; and with --shapiro each system''s Shapiro-Wilk test.';
COMMENT ON VIEW latest_system_tests IS 'The system_tests rows of the finished run written last for each dataset, measure, subset, method, alternative, correction and correction group (one family of corrected p-values).';
COMMENT ON COLUMN system_tests.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN system_tests.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN system_tests.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN system_tests.measure IS 'The measure whose scores are compared (measures.name, automatic or human; a human one is the mean over annotators per cell); oriented so that higher is better (direction ''lower'' negated).';
COMMENT ON COLUMN system_tests.subset IS 'The cells analysed: the --where conditions joined by '' & '' ('''' every cell).';
COMMENT ON COLUMN system_tests.method IS 't-test (paired, scipy ttest_rel) | wilcoxon (signed-rank, zero_method wilcox) | rank-sum (Mann-Whitney, unpaired) | bootstrap (paired) | randomization (approximate) | shapiro-wilk (normality of system_a''s scores).';
COMMENT ON COLUMN system_tests.alternative IS 'H1: two-sided (each unordered pair once; better says which), greater (system_a better than system_b; every ordered pair) or less; '''' for shapiro-wilk.';
COMMENT ON COLUMN system_tests.system_a IS 'The first system (delta = mean_a - mean_b).';
COMMENT ON COLUMN system_tests.system_b IS 'The second system; '''' for a shapiro-wilk row.';
COMMENT ON COLUMN system_tests.k IS 'Resamples of the bootstrap and randomization tests; NULL for the closed-form tests.';
COMMENT ON COLUMN system_tests.seed IS 'Seed of the resampling (resample b the same for every pair); NULL for the closed-form tests.';
COMMENT ON COLUMN system_tests.alpha IS 'Significance level.';
COMMENT ON COLUMN system_tests.correction IS 'none | bonferroni | holm | bh.';
COMMENT ON COLUMN system_tests.correction_group IS 'all: a family is every pair of one method; system: each system_a''s pairs of one method (one-sided alternatives).';
COMMENT ON COLUMN system_tests.family_size IS 'Defined p-values corrected together.';
COMMENT ON COLUMN system_tests.statistic IS 't (t-test), W+ (wilcoxon: sum of the ranks of the positive differences), U of system_a (rank-sum), delta (bootstrap, randomization), W (shapiro-wilk); NULL when undefined.';
COMMENT ON COLUMN system_tests.mean_a IS 'system_a''s mean score over the shared inputs (shapiro-wilk: over its inputs).';
COMMENT ON COLUMN system_tests.mean_b IS 'system_b''s mean score over the shared inputs; NULL for shapiro-wilk.';
COMMENT ON COLUMN system_tests.delta IS 'mean_a - mean_b: the mean of d_j = a_j - b_j over the shared inputs; NULL for shapiro-wilk.';
COMMENT ON COLUMN system_tests.n IS 'Inputs both systems have (shapiro-wilk: the inputs system_a has).';
COMMENT ON COLUMN system_tests.n_valid IS 'Resamples with a defined statistic (bootstrap: some drawn input of the pair); NULL for the closed-form tests.';
COMMENT ON COLUMN system_tests.p_value IS 'The raw p-value ((1 + count) / (1 + n_valid) for the resampling tests); NULL when undefined (fewer than 2 shared inputs; constant differences for the t-test; no nonzero difference for wilcoxon).';
COMMENT ON COLUMN system_tests.p_adjusted IS 'The corrected p-value within the family; NULL when p_value is.';
COMMENT ON COLUMN system_tests.significant IS 'p_adjusted <= alpha, and the family (and the test''s own resolution) can reach that at k resamples; never for an undefined test. shapiro-wilk: significantly non-normal.';
COMMENT ON COLUMN system_tests.better IS 'The system significantly better than the other (two-sided: by the sign of the statistic); NULL when not significant and for shapiro-wilk.';
COMMENT ON COLUMN system_tests.fingerprint IS 'sha256 of the cells read (the measure on the systems and inputs, the subset): a repeated command on the same data computes nothing.';
COMMENT ON COLUMN system_tests.conventions IS 'JSON: the test and its scipy call, pairs, alternative, undefined cases, p-value formula, the family''s resolution, seed and RNG.';
