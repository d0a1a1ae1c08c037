-- Systems ranked from pairwise votes (`metaeval leaderboard`; analyses/leaderboard.py): the
-- maximum-likelihood Bradley-Terry ratings on counted distinct votes (ties half a win each way),
-- on the arena's Elo-style scale or in logits, with bootstrap (multinomial over the vote counts)
-- or sandwich intervals and each system's share of bootstrap rounds in first place.
CREATE TABLE IF NOT EXISTS leaderboard (
    result_id      BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id         INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset        VARCHAR NOT NULL,
    judge          VARCHAR NOT NULL,      -- '' = the human votes; else one automatic judge's
    system         VARCHAR NOT NULL,
    votes          INTEGER NOT NULL,      -- votes the system took part in
    rating         DOUBLE NOT NULL,
    lower          DOUBLE,
    upper          DOUBLE,
    first_share    DOUBLE,                -- share of valid bootstrap rounds with this system first; NULL for sandwich
    scale          VARCHAR NOT NULL,      -- elo | logit
    interval       VARCHAR NOT NULL,      -- bootstrap | sandwich
    anchor         VARCHAR NOT NULL,      -- '' = none (ratings centred)
    anchor_rating  DOUBLE,
    ridge          DOUBLE NOT NULL,
    k              INTEGER,
    seed           BIGINT,
    alpha          DOUBLE NOT NULL,
    n_valid        INTEGER,               -- bootstrap rounds whose votes admit an estimate
    fingerprint    VARCHAR NOT NULL,
    conventions    JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_leaderboard AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, judge) AS latest_run
    FROM leaderboard
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE leaderboard IS '`metaeval leaderboard`: Bradley-Terry ratings of the systems from pairwise votes (human, or one judge''s), maximum likelihood on counted distinct votes, with bootstrap or sandwich intervals.';
COMMENT ON VIEW latest_leaderboard IS 'The rows of the finished run written last for each dataset and judge.';
COMMENT ON COLUMN leaderboard.rating IS 'elo: 1000 + 400/ln(10) * strength (or shifted so the anchor has anchor_rating); logit: the centred strength.';
COMMENT ON COLUMN leaderboard.lower IS 'Lower bound of the 1 - alpha interval: percentile over the valid bootstrap rounds, or rating - z * sandwich standard error.';
COMMENT ON COLUMN leaderboard.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN leaderboard.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN leaderboard.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN leaderboard.judge IS 'Whose votes: '''' the human judges'', else the automatic judge''s name.';
COMMENT ON COLUMN leaderboard.system IS 'The system (systems.name).';
COMMENT ON COLUMN leaderboard.votes IS 'Votes the system took part in (each verdict in each presentation order is one vote).';
COMMENT ON COLUMN leaderboard.upper IS 'Upper bound of the 1 - alpha interval (see lower).';
COMMENT ON COLUMN leaderboard.first_share IS 'Share of the valid bootstrap rounds in which the system has the highest rating; NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard.scale IS 'elo (1000 + 400/ln(10) per logit, the arena''s) | logit.';
COMMENT ON COLUMN leaderboard.interval IS 'bootstrap (multinomial over the counted votes) | sandwich (robust covariance).';
COMMENT ON COLUMN leaderboard.anchor IS 'The system pinned at anchor_rating; '''' none (ratings centred).';
COMMENT ON COLUMN leaderboard.anchor_rating IS 'The anchor''s rating; NULL without an anchor.';
COMMENT ON COLUMN leaderboard.ridge IS 'The Gaussian prior''s weight (0: maximum likelihood).';
COMMENT ON COLUMN leaderboard.k IS 'Bootstrap rounds; NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard.seed IS 'Seed of the bootstrap; NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard.alpha IS 'Intervals at 1 - alpha.';
COMMENT ON COLUMN leaderboard.n_valid IS 'Bootstrap rounds whose resampled votes admit an estimate; NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard.fingerprint IS 'sha256 of the counted votes (systems, outcomes, counts).';
COMMENT ON COLUMN leaderboard.conventions IS 'JSON: the model, the estimator, the scale, the interval and the number of votes.';
