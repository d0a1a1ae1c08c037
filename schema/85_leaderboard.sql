-- Systems ranked from pairwise votes (`metaeval leaderboard`; analyses/leaderboard.py): the
-- maximum-likelihood Bradley-Terry ratings on counted distinct votes (ties half a win each way),
-- on the arena's Elo-style scale or in logits, with bootstrap (multinomial over the vote counts)
-- or sandwich intervals and each system's share of bootstrap rounds in first place.
CREATE TABLE IF NOT EXISTS leaderboard (
    result_id      BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id         INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset        VARCHAR NOT NULL,
    subset         VARCHAR NOT NULL DEFAULT '',  -- the votes' subset (--where/--by): '' = every vote
    judge          VARCHAR NOT NULL,      -- '' = the human votes; else one automatic judge's
    system         VARCHAR NOT NULL,
    votes          INTEGER NOT NULL,      -- votes the system took part in
    rating         DOUBLE NOT NULL,
    lower          DOUBLE,
    upper          DOUBLE,
    first_share    DOUBLE,                -- share of valid bootstrap rounds with this system first (m tied first: 1/m each); NULL for sandwich
    scale          VARCHAR NOT NULL,      -- elo | logit
    interval       VARCHAR NOT NULL,      -- bootstrap | sandwich
    anchor         VARCHAR NOT NULL,      -- '' = none (ratings centred)
    anchor_rating  DOUBLE,
    ridge          DOUBLE NOT NULL,
    k              INTEGER,
    seed           BIGINT,
    alpha          DOUBLE NOT NULL,
    n_valid        INTEGER,               -- bootstrap rounds whose votes admit an estimate
    ties           VARCHAR NOT NULL DEFAULT 'half',  -- half | rao-kupper | davidson
    tie_parameter  DOUBLE,                -- Rao-Kupper's theta or Davidson's nu; NULL for half
    correction     VARCHAR NOT NULL DEFAULT 'holm',
    rank_lower     INTEGER,               -- rank interval over the bootstrap rounds
    rank_upper     INTEGER,
    "cluster"      INTEGER,               -- group of systems that cannot be separated; NULL: undecided
    "rank"         INTEGER,               -- 1 + systems significantly better; NULL: undecided
    fragility      INTEGER,               -- fewest removed votes that change the leader
    fragility_exact BOOLEAN,
    style          VARCHAR NOT NULL DEFAULT '',  -- the style covariates controlled for ('' = none)
    fingerprint    VARCHAR NOT NULL,
    conventions    JSON NOT NULL
);

-- a warehouse whose table predates these columns gets them (its rows: half ties, holm)
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS ties VARCHAR DEFAULT 'half';
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS tie_parameter DOUBLE;
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS correction VARCHAR DEFAULT 'holm';
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS rank_lower INTEGER;
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS rank_upper INTEGER;
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS "cluster" INTEGER;
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS "rank" INTEGER;
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS fragility INTEGER;
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS fragility_exact BOOLEAN;

CREATE OR REPLACE VIEW latest_leaderboard AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, judge, style, subset) AS latest_run
    FROM leaderboard
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE leaderboard IS '`metaeval leaderboard`: Bradley-Terry ratings of the systems from pairwise votes (human, or one judge''s), maximum likelihood on counted distinct votes, with bootstrap or sandwich intervals.';
COMMENT ON VIEW latest_leaderboard IS 'The rows of the finished run written last for each dataset, judge and style (and subset).';
COMMENT ON COLUMN leaderboard.rating IS 'elo: 1000 + 400/ln(10) * strength (or shifted so the anchor has anchor_rating); logit: the centred strength. Votes that form unconnected groups (conventions.connected_group, the systems of each in conventions.connected_groups): each group centred on its own (or the anchor''s group on the anchor), and ratings of different groups not comparable.';
COMMENT ON COLUMN leaderboard.lower IS 'Lower bound of the 1 - alpha interval: percentile over the valid bootstrap rounds, or rating - z * sandwich standard error.';
COMMENT ON COLUMN leaderboard.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN leaderboard.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN leaderboard.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN leaderboard.judge IS 'Whose votes: '''' the human judges'', else the automatic judge''s name.';
COMMENT ON COLUMN leaderboard.system IS 'The system (systems.name).';
COMMENT ON COLUMN leaderboard.votes IS 'Votes the system took part in (each verdict in each presentation order is one vote).';
COMMENT ON COLUMN leaderboard.upper IS 'Upper bound of the 1 - alpha interval (see lower).';
COMMENT ON COLUMN leaderboard.first_share IS 'Share of the valid bootstrap rounds in which the system has the highest rating; a round in which m systems share the highest rating exactly credits each 1/m (the shares sum to 1); NULL for sandwich intervals.';
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
COMMENT ON COLUMN leaderboard.conventions IS 'JSON: the model, the estimator, the scale, the interval and the number of votes; with votes that form unconnected groups, connected_group (1, 2, ...: the system''s) and connected_groups (the systems of each).';
COMMENT ON COLUMN leaderboard.ties IS 'How ties are modelled: half (half a win each way, the arena''s) | rao-kupper | davidson.';
COMMENT ON COLUMN leaderboard.tie_parameter IS 'The fitted tie parameter: Rao-Kupper''s theta (> 1) or Davidson''s nu (> 0); NULL for half.';
COMMENT ON COLUMN leaderboard.correction IS 'The multiple-comparison correction over the pairwise tests that decide cluster and rank.';
COMMENT ON COLUMN leaderboard.rank_lower IS 'Lower end of the rank interval: floor of the alpha/2 percentile of the system''s rank over the valid bootstrap rounds (rank 1 = best); NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard.rank_upper IS 'Upper end of the rank interval: ceiling of the 1 - alpha/2 percentile of the rank over the rounds; NULL for sandwich intervals.';
COMMENT ON COLUMN leaderboard."cluster" IS 'Group of systems that cannot be separated (1 = best), from the pairwise tests through the conclusion layer (AssignRanks rule any); NULL when the tests cannot resolve or a test is not evidence.';
COMMENT ON COLUMN leaderboard."rank" IS '1 + the number of systems significantly better (the conclusion layer); NULL when undecided (as cluster). With unconnected groups of votes, rank, cluster, the rank interval, first_share and fragility are within the system''s group (conventions.connected_group).';
COMMENT ON COLUMN leaderboard.fragility IS 'The fewest votes whose removal makes another system rate at least as high as the leader (same for every row of a run); NULL: no removal does.';
COMMENT ON COLUMN leaderboard.fragility_exact IS 'True: fragility from an exhaustive search; false: a greedy search''s verified upper bound.';
COMMENT ON COLUMN leaderboard.style IS 'The style covariates the ratings are controlled for (Chatbot Arena''s style control), comma-separated: length, headers, lists, bold, or a numeric attribute; '''' none. Their coefficients: table leaderboard_style.';
COMMENT ON COLUMN leaderboard.subset IS 'The votes the row was computed on (--where, --by): the label of the conditions on their inputs'' attributes (category=math; conditions joined by '' & ''), the rows of a warehouse holding only those votes; '''' = every vote.';
