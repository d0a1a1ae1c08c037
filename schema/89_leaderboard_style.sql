-- The style coefficients of a style-controlled leaderboard (`metaeval leaderboard --style`;
-- analyses/leaderboard_style.py, Chatbot Arena's style control): one row per covariate of a run,
-- beside the controlled ratings the same run writes to `leaderboard` (same run_id, style key).
CREATE TABLE IF NOT EXISTS leaderboard_style (
    result_id      BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id         INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset        VARCHAR NOT NULL,
    subset         VARCHAR NOT NULL DEFAULT '',  -- the votes' subset (--where/--by): '' = every vote
    judge          VARCHAR NOT NULL,      -- '' = the human votes; else one automatic judge's
    style          VARCHAR NOT NULL,      -- every covariate of the model, comma-separated
    covariate      VARCHAR NOT NULL,      -- this row's covariate
    feature        VARCHAR NOT NULL,      -- ratio | difference
    source         VARCHAR NOT NULL,      -- where each output's value comes from
    feature_scale  DOUBLE NOT NULL,
    coefficient    DOUBLE NOT NULL,
    lower          DOUBLE,
    upper          DOUBLE,
    interval       VARCHAR NOT NULL,      -- bootstrap | sandwich
    ridge          DOUBLE NOT NULL,
    k              INTEGER,
    seed           BIGINT,
    alpha          DOUBLE NOT NULL,
    n_valid        INTEGER,
    votes          INTEGER NOT NULL,
    fingerprint    VARCHAR NOT NULL,
    conventions    JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_leaderboard_style AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, judge, style, subset) AS latest_run
    FROM leaderboard_style
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE leaderboard_style IS '`metaeval leaderboard --style`: the coefficient of each style covariate in the Bradley-Terry model P(a beats b) = sigma(theta_a - theta_b + z''gamma) (Chatbot Arena''s style control); the controlled ratings are the leaderboard rows of the same run.';
COMMENT ON VIEW latest_leaderboard_style IS 'The rows of the finished run written last for each dataset, judge and style (and subset).';
COMMENT ON COLUMN leaderboard_style.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN leaderboard_style.run_id IS 'The analysis_runs row of the command that wrote this row (and the controlled ratings in leaderboard).';
COMMENT ON COLUMN leaderboard_style.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN leaderboard_style.judge IS 'Whose votes: '''' the human judges'', else the automatic judge''s name.';
COMMENT ON COLUMN leaderboard_style.style IS 'Every covariate of the model, comma-separated (the key shared with leaderboard.style).';
COMMENT ON COLUMN leaderboard_style.covariate IS 'length (each output''s output_length attribute, else its text''s characters), headers, lists, bold (markdown counts of the stored texts), or a numeric attribute''s name.';
COMMENT ON COLUMN leaderboard_style.feature IS 'A vote''s raw feature: ratio (f_a - f_b) / (f_a + f_b + 1), the arena''s for length and the markdown counts, or difference f_a - f_b (an attribute).';
COMMENT ON COLUMN leaderboard_style.source IS 'Where the outputs'' values were read: the attribute, the stored texts, or both (length: output_length where stored, else the text''s length).';
COMMENT ON COLUMN leaderboard_style.feature_scale IS 'Root mean square of the raw feature over the votes, which scales it (the standard deviation of the votes taken both ways round; once, on the observed votes).';
COMMENT ON COLUMN leaderboard_style.coefficient IS 'The maximum-likelihood coefficient gamma, in logits per unit of the scaled feature (positive: the outputs with more of it are preferred, the strengths held fixed).';
COMMENT ON COLUMN leaderboard_style.lower IS 'Lower bound of the 1 - alpha interval: percentile over the valid bootstrap rounds (the rounds of the ratings), or coefficient - z * sandwich standard error.';
COMMENT ON COLUMN leaderboard_style.upper IS 'Upper bound of the 1 - alpha interval (see lower).';
COMMENT ON COLUMN leaderboard_style.interval IS 'bootstrap (multinomial over the counted votes) | sandwich (robust covariance).';
COMMENT ON COLUMN leaderboard_style.ridge IS 'The Gaussian prior''s weight on strengths and coefficients (0: maximum likelihood).';
COMMENT ON COLUMN leaderboard_style.k IS 'Bootstrap rounds; NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard_style.seed IS 'Seed of the bootstrap; NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard_style.alpha IS 'Intervals at 1 - alpha.';
COMMENT ON COLUMN leaderboard_style.n_valid IS 'Bootstrap rounds whose resampled votes admit an estimate; NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard_style.votes IS 'Votes in the model (each verdict in each presentation order is one vote).';
COMMENT ON COLUMN leaderboard_style.fingerprint IS 'sha256 of the counted votes with their raw features (systems, covariates, outcomes, counts).';
COMMENT ON COLUMN leaderboard_style.conventions IS 'JSON: the model, the features, the estimator and the interval.';
COMMENT ON COLUMN leaderboard_style.subset IS 'The votes the row was computed on (--where, --by): the label of the conditions on their inputs'' attributes (category=math; conditions joined by '' & ''), the rows of a warehouse holding only those votes; '''' = every vote.';
