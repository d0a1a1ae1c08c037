-- Do two metrics err on the same system pairs? (`metaeval error-overlap`; Louis & Nenkova 2013,
-- Table 4, with McNemar's and Fisher's exact tests: analyses/error_overlap.py). One row per
-- (dataset, human, metric pair, subset, system-inputs protocol): the 2 x 2 table of the C(N, 2)
-- system pairs by whether each metric orders them as the human does.
CREATE TABLE IF NOT EXISTS error_overlap (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    metric_a          VARCHAR NOT NULL,
    metric_b          VARCHAR NOT NULL,
    subset            VARCHAR NOT NULL DEFAULT '',
    system_inputs     VARCHAR NOT NULL,
    n_systems         INTEGER NOT NULL,
    n_pairs           INTEGER NOT NULL,
    both_correct      INTEGER NOT NULL,
    a_only_correct    INTEGER NOT NULL,
    b_only_correct    INTEGER NOT NULL,
    both_wrong        INTEGER NOT NULL,
    accuracy_a        DOUBLE NOT NULL,
    accuracy_b        DOUBLE NOT NULL,
    mcnemar_p         DOUBLE,
    fisher_odds_ratio DOUBLE,
    fisher_p          DOUBLE,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    aggregate         VARCHAR NOT NULL DEFAULT 'mean'
);

CREATE OR REPLACE VIEW latest_error_overlap AS
SELECT * EXCLUDE (latest) FROM (
    SELECT *, max(result_id) OVER (PARTITION BY dataset, human, metric_a, metric_b, subset, system_inputs,
                                               aggregate) AS latest
    FROM error_overlap
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE result_id = latest;

COMMENT ON TABLE error_overlap IS '`metaeval error-overlap`: over all C(N,2) system pairs, whether metric A and metric B each order the pair as the human does (Louis & Nenkova 2013, Table 4), with exact McNemar (does one err more often?) and one-sided Fisher (do they err on the same pairs?) tests.';
COMMENT ON VIEW latest_error_overlap IS 'The latest error_overlap row of each dataset, human, metric pair, subset and system-inputs protocol.';
COMMENT ON COLUMN error_overlap.both_correct IS 'System pairs both metrics order as the human does; the four counts sum to n_pairs = C(n_systems, 2).';
COMMENT ON COLUMN error_overlap.a_only_correct IS 'Pairs metric_a orders as the human does and metric_b does not.';
COMMENT ON COLUMN error_overlap.b_only_correct IS 'Pairs metric_b orders as the human does and metric_a does not.';
COMMENT ON COLUMN error_overlap.both_wrong IS 'Pairs neither metric orders as the human does (a pair the human ties is right only where the metric ties it).';
COMMENT ON COLUMN error_overlap.mcnemar_p IS 'Exact two-sided McNemar p-value on a_only_correct vs b_only_correct; NULL when no pair is discordant.';
COMMENT ON COLUMN error_overlap.fisher_p IS 'One-sided (greater) Fisher exact p-value of the association of the two metrics'' correctness over the pairs; NULL when a margin is empty. Pairs share systems: descriptive.';
COMMENT ON COLUMN error_overlap.fingerprint IS 'sha256 of the cells read (both metrics and the human).';
COMMENT ON COLUMN error_overlap.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN error_overlap.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN error_overlap.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN error_overlap.human IS 'The human judgment whose system ordering is the reference.';
COMMENT ON COLUMN error_overlap.metric_a IS 'The first metric (the rows of the 2 x 2 table).';
COMMENT ON COLUMN error_overlap.metric_b IS 'The second metric (the columns of the 2 x 2 table).';
COMMENT ON COLUMN error_overlap.subset IS 'The cells analysed: the --where conditions joined by '' & '' ('''' every cell).';
COMMENT ON COLUMN error_overlap.system_inputs IS 'all | judged: the inputs a metric''s system score averages.';
COMMENT ON COLUMN error_overlap.n_systems IS 'Systems with a score under the human and both metrics.';
COMMENT ON COLUMN error_overlap.n_pairs IS 'Unordered system pairs: C(n_systems, 2).';
COMMENT ON COLUMN error_overlap.accuracy_a IS 'Share of the pairs metric_a orders as the human does.';
COMMENT ON COLUMN error_overlap.accuracy_b IS 'Share of the pairs metric_b orders as the human does.';
COMMENT ON COLUMN error_overlap.fisher_odds_ratio IS 'The sample odds ratio of the 2 x 2 table (scipy fisher_exact); NULL when a margin is empty.';
COMMENT ON COLUMN error_overlap.conventions IS 'JSON: the definitions of correct, the tests, the system-inputs protocol, systems left out.';
COMMENT ON COLUMN error_overlap.aggregate IS 'A system''s score over its inputs: mean (default) or median (--aggregate; Graham 2015''s median variants); a key of the latest view.';
