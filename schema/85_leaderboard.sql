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
