-- Each automatic judge's leaderboard against the humans' (`metaeval judge-leaderboard`;
-- analyses/judge_leaderboard.py): rank correlations of the Bradley-Terry ratings, Arena-Hard's
-- separability and agreement with confidence, Brier scores of the judge's pairwise probabilities.
CREATE TABLE IF NOT EXISTS judge_leaderboard (
    result_id      BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id         INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset        VARCHAR NOT NULL,
    subset         VARCHAR NOT NULL DEFAULT '',  -- the votes' subset (--where/--by): '' = every vote
    judge          VARCHAR NOT NULL,
    systems        INTEGER NOT NULL,
    items          INTEGER NOT NULL,
    votes_judge    INTEGER NOT NULL,
    votes_human    INTEGER NOT NULL,
    kendall        DOUBLE,
    kendall_lower  DOUBLE,
    kendall_upper  DOUBLE,
    spearman       DOUBLE,
    spearman_lower DOUBLE,
    spearman_upper DOUBLE,
    separability   DOUBLE,
    human_separability DOUBLE,
    agreement      DOUBLE,
    agreement_separated DOUBLE,
    agreement_human DOUBLE,
    pairs_separated_both INTEGER NOT NULL,
    pairs          INTEGER NOT NULL,
    brier          DOUBLE,
    brier_lower    DOUBLE,
    brier_upper    DOUBLE,
    brier_votes    DOUBLE,
    brier_votes_lower DOUBLE,
    brier_votes_upper DOUBLE,
    n_valid        INTEGER NOT NULL,
    k              INTEGER NOT NULL,
    seed           BIGINT NOT NULL,
    alpha          DOUBLE NOT NULL,
    ridge          DOUBLE NOT NULL,
    fingerprint    VARCHAR NOT NULL,
    conventions    JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_judge_leaderboard AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, judge, subset) AS latest_run
    FROM judge_leaderboard
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE judge_leaderboard IS '`metaeval judge-leaderboard`: each automatic judge''s Bradley-Terry leaderboard against the humans'': Kendall and Spearman of the ratings, Arena-Hard''s separability and agreement with confidence, Brier scores of its pairwise win probabilities, with paired bootstrap intervals over items.';
COMMENT ON VIEW latest_judge_leaderboard IS 'The rows of the finished run written last for each dataset and judge (and subset).';
COMMENT ON COLUMN judge_leaderboard.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN judge_leaderboard.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN judge_leaderboard.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN judge_leaderboard.judge IS 'The automatic judge (preferences.judge of kind automatic).';
COMMENT ON COLUMN judge_leaderboard.systems IS 'Systems of the dataset''s preferences (both leaderboards rate all of them).';
COMMENT ON COLUMN judge_leaderboard.items IS 'Items (input, pair of systems) the judge or the humans voted on: the bootstrap''s units.';
COMMENT ON COLUMN judge_leaderboard.votes_judge IS 'The judge''s votes (each verdict in each presentation order).';
COMMENT ON COLUMN judge_leaderboard.votes_human IS 'The human votes (every human judge''s verdict in each order).';
COMMENT ON COLUMN judge_leaderboard.kendall IS 'Kendall tau-b between the judge''s and the humans'' Bradley-Terry ratings; NULL when undefined.';
COMMENT ON COLUMN judge_leaderboard.kendall_lower IS 'Lower end of the percentile interval of kendall over the valid paired rounds.';
COMMENT ON COLUMN judge_leaderboard.kendall_upper IS 'Upper end of that interval.';
COMMENT ON COLUMN judge_leaderboard.spearman IS 'Spearman rho between the judge''s and the humans'' ratings; NULL when undefined.';
COMMENT ON COLUMN judge_leaderboard.spearman_lower IS 'Lower end of the percentile interval of spearman over the valid paired rounds.';
COMMENT ON COLUMN judge_leaderboard.spearman_upper IS 'Upper end of that interval.';
COMMENT ON COLUMN judge_leaderboard.separability IS 'Arena-Hard''s separability with confidence: share of system pairs whose judge-side percentile intervals (Elo, centred) do not overlap.';
COMMENT ON COLUMN judge_leaderboard.human_separability IS 'The same share on the humans'' side (their intervals from the same rounds).';
COMMENT ON COLUMN judge_leaderboard.agreement IS 'Arena-Hard''s agreement with confidence interval: mean over system pairs of +1 (both separate them alike), -1 (both, in opposite orders), 0 (either cannot separate them).';
COMMENT ON COLUMN judge_leaderboard.agreement_separated IS 'Of the pairs both the judge and the humans separate, the share ordered alike; NULL when they separate none in common.';
COMMENT ON COLUMN judge_leaderboard.agreement_human IS 'The agreement score averaged over the pairs the humans'' intervals separate only (sum of +1/-1/0 over them, divided by their number); NULL when the humans separate none.';
COMMENT ON COLUMN judge_leaderboard.pairs_separated_both IS 'System pairs both the judge''s and the humans'' intervals separate.';
COMMENT ON COLUMN judge_leaderboard.pairs IS 'System pairs: systems * (systems - 1) / 2.';
COMMENT ON COLUMN judge_leaderboard.brier IS 'Mean over system pairs of (the judge''s Bradley-Terry P(i beats j) - 1[humans rate i above j])^2, pairs rated equal by the humans left out; 0 perfect, 0.25 a coin.';
COMMENT ON COLUMN judge_leaderboard.brier_lower IS 'Lower end of the percentile interval of brier over the valid paired rounds.';
COMMENT ON COLUMN judge_leaderboard.brier_upper IS 'Upper end of that interval.';
COMMENT ON COLUMN judge_leaderboard.brier_votes IS 'Mean over the human votes of (the judge''s P(a beats b) - outcome)^2, a tie''s outcome 1/2.';
COMMENT ON COLUMN judge_leaderboard.brier_votes_lower IS 'Lower end of the percentile interval of brier_votes over the valid paired rounds.';
COMMENT ON COLUMN judge_leaderboard.brier_votes_upper IS 'Upper end of that interval.';
COMMENT ON COLUMN judge_leaderboard.n_valid IS 'Bootstrap rounds in which both sides'' resampled votes admit an estimate.';
COMMENT ON COLUMN judge_leaderboard.k IS 'Bootstrap rounds (item resamples, the same for the judge and the humans).';
COMMENT ON COLUMN judge_leaderboard.seed IS 'Seed of the item resamples.';
COMMENT ON COLUMN judge_leaderboard.alpha IS 'Intervals at 1 - alpha (also the intervals behind separability and agreement).';
COMMENT ON COLUMN judge_leaderboard.ridge IS 'The Gaussian prior''s weight on both sides'' strengths (0: maximum likelihood).';
COMMENT ON COLUMN judge_leaderboard.fingerprint IS 'sha256 of the systems, the human votes and the judge''s votes.';
COMMENT ON COLUMN judge_leaderboard.conventions IS 'JSON: the ratings, the bootstrap, every statistic''s definition and both sides'' point ratings.';
COMMENT ON COLUMN judge_leaderboard.subset IS 'The votes the row was computed on (--where, --by): the label of the conditions on their inputs'' attributes (category=math; conditions joined by '' & ''), the rows of a warehouse holding only those votes; '''' = every vote.';
