-- Schema 6 -> 7, run by `metaeval init` before the table scripts. Keeps every row.
-- --aggregate mean|median (issue 33 item 9, Graham 2015's median variants): how a system's score
-- aggregates its inputs is a column of the correlation families' tables ('mean' for every row
-- written before) and a key of their latest views (22_latest_results.sql), so the mean's and the
-- median's rows are both shown.
ALTER TABLE IF EXISTS correlations ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS correlations ALTER COLUMN aggregate SET NOT NULL;
ALTER TABLE IF EXISTS confidence_intervals ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS confidence_intervals ALTER COLUMN aggregate SET NOT NULL;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS hypothesis_tests ALTER COLUMN aggregate SET NOT NULL;
-- winners --aggregate: the rankings of the tests of a system's median are other rankings.
ALTER TABLE IF EXISTS winners ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS winners ALTER COLUMN aggregate SET NOT NULL;
-- rank-change and error-overlap: the aggregate a column ('mean' for every row before, but the rows
-- of a median, told apart until now by their conventions and fingerprint only: set from their
-- conventions, by a type change's USING, which skips an absent table as UPDATE cannot) and a key of
-- their latest views, so a mean's and a median's rows no longer replace each other.
ALTER TABLE IF EXISTS rank_changes ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS rank_changes ALTER COLUMN aggregate SET DATA TYPE VARCHAR
    USING coalesce(json_extract_string(conventions, '$.aggregate'), aggregate);
ALTER TABLE IF EXISTS rank_changes ALTER COLUMN aggregate SET DEFAULT 'mean';
ALTER TABLE IF EXISTS rank_changes ALTER COLUMN aggregate SET NOT NULL;
ALTER TABLE IF EXISTS error_overlap ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS error_overlap ALTER COLUMN aggregate SET DATA TYPE VARCHAR
    USING coalesce(json_extract_string(conventions, '$.aggregate'), aggregate);
ALTER TABLE IF EXISTS error_overlap ALTER COLUMN aggregate SET DEFAULT 'mean';
ALTER TABLE IF EXISTS error_overlap ALTER COLUMN aggregate SET NOT NULL;
-- optimal-set: one block per winners ranking, the aggregate of the ranking a key of its shares.
ALTER TABLE IF EXISTS optimal_set_shares ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS optimal_set_shares ALTER COLUMN aggregate SET NOT NULL;
-- leaderboard --style (issue 35 item 2): the style covariates a leaderboard's ratings are
-- controlled for are a column of leaderboard ('' for every row written before: none) and a key of
-- its latest view (85_leaderboard.sql recreates the view).
ALTER TABLE IF EXISTS leaderboard ADD COLUMN IF NOT EXISTS style VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS leaderboard ALTER COLUMN style SET NOT NULL;
