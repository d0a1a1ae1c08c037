-- Automatic judges examined for their biases (`metaeval judge-diagnostics`;
-- analyses/judge_diagnostics.py): length preference and self-preference beside the humans', bias
-- and variance against the human majority, and the alternative annotator test, one row per judge,
-- diagnostic and (for the alternative annotator test) left-out annotator.
CREATE TABLE IF NOT EXISTS judge_diagnostics (
    result_id      BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id         INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset        VARCHAR NOT NULL,
    subset         VARCHAR NOT NULL DEFAULT '',  -- the votes' subset (--where/--by): '' = every vote
    judge          VARCHAR NOT NULL,
    diagnostic     VARCHAR NOT NULL,
    annotator      VARCHAR NOT NULL,
    system         VARCHAR NOT NULL,
    n              INTEGER NOT NULL,
    verdicts       INTEGER,
    judge_value    DOUBLE,
    human_value    DOUBLE,
    difference     DOUBLE,
    lower          DOUBLE,
    upper          DOUBLE,
    pvalue         DOUBLE,
    pvalue_adjusted DOUBLE,
    significant    BOOLEAN,
    resolvable     BOOLEAN,
    omega          DOUBLE,
    rho            DOUBLE,
    passes         BOOLEAN,
    epsilon        DOUBLE NOT NULL,
    min_items      INTEGER NOT NULL,
    correction     VARCHAR NOT NULL,
    k              INTEGER NOT NULL,
    seed           BIGINT NOT NULL,
    alpha          DOUBLE NOT NULL,
    fingerprint    VARCHAR NOT NULL,
    conventions    JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_judge_diagnostics AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, judge, diagnostic, annotator, system, subset) AS latest_run
    FROM judge_diagnostics
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE judge_diagnostics IS '`metaeval judge-diagnostics`: automatic judges examined for their biases: length preference and self-preference beside the humans'' on the same items, AlpacaEval''s bias and variance, Calderon et al.''s alternative annotator test.';
COMMENT ON VIEW latest_judge_diagnostics IS 'The rows of the finished run written last for each dataset, judge, diagnostic, annotator and system (and subset).';
COMMENT ON COLUMN judge_diagnostics.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN judge_diagnostics.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN judge_diagnostics.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN judge_diagnostics.judge IS 'The automatic judge (preferences.judge of kind automatic).';
COMMENT ON COLUMN judge_diagnostics.diagnostic IS 'length_preference | self_preference | bias | variance | alt_test (the judge''s verdict) | alt_test_annotator (one left-out annotator).';
COMMENT ON COLUMN judge_diagnostics.annotator IS 'The left-out human annotator of an alt_test_annotator row; '''' otherwise.';
COMMENT ON COLUMN judge_diagnostics.system IS 'The system whose win rate a self_preference row compares (named as the judge); '''' otherwise.';
COMMENT ON COLUMN judge_diagnostics.n IS 'Items behind the row (alt_test: annotators tested, those with at least min_items items).';
COMMENT ON COLUMN judge_diagnostics.verdicts IS 'The judge''s verdicts behind a length or self-preference row (each order one); NULL otherwise.';
COMMENT ON COLUMN judge_diagnostics.judge_value IS 'length: the judge''s share of decisive verdicts for the longer output; self: its win rate of the system; bias, variance: the value; alt_test_annotator: rho_f (the judge''s advantage probability); NULL when undefined.';
COMMENT ON COLUMN judge_diagnostics.human_value IS 'The humans'' value on the same items (length: share for the longer output; self: win rate); alt_test_annotator: rho_h of the left-out annotator; NULL when undefined or not applicable.';
COMMENT ON COLUMN judge_diagnostics.difference IS 'judge_value - human_value; NULL when undefined or not applicable.';
COMMENT ON COLUMN judge_diagnostics.lower IS 'Lower end of the 1 - alpha percentile interval over paired item resamples: of difference (length, self), of judge_value (bias, variance).';
COMMENT ON COLUMN judge_diagnostics.upper IS 'Upper end of that interval.';
COMMENT ON COLUMN judge_diagnostics.pvalue IS 'Raw p: two-sided exact McNemar (length), two-sided bootstrap (self), one-sided paired t (alt_test_annotator); NULL when undefined or not a test.';
COMMENT ON COLUMN judge_diagnostics.pvalue_adjusted IS 'The p after the correction: over the judges (length, self: the correction column), Benjamini-Yekutieli over the annotators (alt_test_annotator).';
COMMENT ON COLUMN judge_diagnostics.significant IS 'The conclusion layer''s verdict: adjusted p <= alpha, the family resolvable, the test evidence; NULL when not a test or undefined.';
COMMENT ON COLUMN judge_diagnostics.resolvable IS 'Whether the family''s smallest attainable p can reach the corrected threshold; NULL when not a test.';
COMMENT ON COLUMN judge_diagnostics.omega IS 'alt_test: the winning rate, the share of the tested annotators whose null hypothesis is rejected; NULL otherwise.';
COMMENT ON COLUMN judge_diagnostics.rho IS 'alt_test: the average advantage probability, mean over annotators of rho_f; NULL otherwise.';
COMMENT ON COLUMN judge_diagnostics.passes IS 'alt_test: omega >= 0.5 (the judge may replace an annotator); NULL when undecided (no test, or the family cannot resolve) or not alt_test.';
COMMENT ON COLUMN judge_diagnostics.epsilon IS 'The alternative annotator test''s cost-benefit margin epsilon.';
COMMENT ON COLUMN judge_diagnostics.min_items IS 'The alternative annotator test leaves out (NULL p) annotators with fewer items than this.';
COMMENT ON COLUMN judge_diagnostics.correction IS 'The correction over the judges of the length and self-preference tests.';
COMMENT ON COLUMN judge_diagnostics.k IS 'Bootstrap rounds (item resamples, the same for the judge and the humans).';
COMMENT ON COLUMN judge_diagnostics.seed IS 'Seed of the item resamples.';
COMMENT ON COLUMN judge_diagnostics.alpha IS 'Intervals at 1 - alpha; tests significant at alpha after their correction.';
COMMENT ON COLUMN judge_diagnostics.fingerprint IS 'sha256 of the chosen judges'' and humans'' verdicts and the outputs'' lengths.';
COMMENT ON COLUMN judge_diagnostics.conventions IS 'JSON: the definition of the row''s statistic, its test and correction, the resolution.';
COMMENT ON COLUMN judge_diagnostics.subset IS 'The votes the row was computed on (--where, --by): the label of the conditions on their inputs'' attributes (category=math; conditions joined by '' & ''), the rows of a warehouse holding only those votes; '''' = every vote.';
