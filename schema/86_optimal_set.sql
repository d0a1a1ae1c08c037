-- The optimal set's share per configuration option (`metaeval optimal-set`; Graham 2015, Table 2;
-- analyses/optimal_set.py): of the ROUGE variants a winners ranking finds optimal (beaten by no
-- other metric), the share with each value of each option read from the measure names.
CREATE TABLE IF NOT EXISTS optimal_set_shares (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    level             VARCHAR NOT NULL,
    coefficient       VARCHAR NOT NULL,
    method            VARCHAR NOT NULL,
    alternative       VARCHAR NOT NULL,
    correction        VARCHAR NOT NULL,
    correction_group  VARCHAR NOT NULL,
    alpha             DOUBLE NOT NULL,
    cluster_rule      VARCHAR,
    option            VARCHAR NOT NULL,
    value             VARCHAR NOT NULL,
    n_optimal         INTEGER,
    share             DOUBLE,
    n_variants        INTEGER NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    aggregate         VARCHAR NOT NULL DEFAULT 'mean'
);

CREATE OR REPLACE VIEW latest_optimal_set_shares AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, human, level, coefficient, method, alternative, correction,
                                             correction_group, alpha, cluster_rule, aggregate) AS latest_run
    FROM optimal_set_shares
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE optimal_set_shares IS '`metaeval optimal-set`: of the ROUGE variants a winners ranking finds optimal (not significantly beaten by any other metric), the share with each value of each configuration option (Graham 2015, Table 2).';
COMMENT ON VIEW latest_optimal_set_shares IS 'The rows of the finished run written last for each dataset, human and winners setting.';
COMMENT ON COLUMN optimal_set_shares.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN optimal_set_shares.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN optimal_set_shares.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN optimal_set_shares.human IS 'The human judgment of the winners ranking read.';
COMMENT ON COLUMN optimal_set_shares.level IS 'Correlation level of the winners ranking read.';
COMMENT ON COLUMN optimal_set_shares.coefficient IS 'Correlation coefficient of the winners ranking read.';
COMMENT ON COLUMN optimal_set_shares.method IS 'Test method of the winners ranking read (metaeval compare).';
COMMENT ON COLUMN optimal_set_shares.alternative IS 'Alternative of the tests of the winners ranking read.';
COMMENT ON COLUMN optimal_set_shares.correction IS 'Multiple-comparison correction of the winners ranking read.';
COMMENT ON COLUMN optimal_set_shares.correction_group IS 'Correction family of the winners ranking read.';
COMMENT ON COLUMN optimal_set_shares.alpha IS 'Significance level of the winners ranking read.';
COMMENT ON COLUMN optimal_set_shares.cluster_rule IS 'Cluster rule of the winners ranking read.';
COMMENT ON COLUMN optimal_set_shares.option IS 'The configuration option: ngram (counting method), stemming, stopwords, statistic (precision, recall, f1), aggregate (system level: the winners ranking''s, mean or median; both in a pooled ranking).';
COMMENT ON COLUMN optimal_set_shares.value IS 'A value of the option found among the ranked ROUGE variants (e.g. rouge-2, stemmed, removed, precision).';
COMMENT ON COLUMN optimal_set_shares.n_optimal IS 'Optimal ROUGE variants with this value; NULL when the optimal set is undetermined.';
COMMENT ON COLUMN optimal_set_shares.share IS 'n_optimal / the optimal ROUGE variants (per option the shares sum to 1); NULL when the set is undetermined or empty.';
COMMENT ON COLUMN optimal_set_shares.n_variants IS 'Ranked ROUGE variants with this value (how often it was tried).';
COMMENT ON COLUMN optimal_set_shares.fingerprint IS 'sha256 of the winners rows read (metric, is_winner, their fingerprint).';
COMMENT ON COLUMN optimal_set_shares.conventions IS 'JSON: what optimal and share mean, what is counted, the size of the optimal set.';
COMMENT ON COLUMN optimal_set_shares.aggregate IS 'The winners ranking''s system score over the inputs: mean or median (winners --aggregate), or pooled (optimal-set --pooled: the mean and median variants of each metric in one ranking, its aggregate option the share of each); a key of the latest view.';
