-- Schema 6 -> 7, run by `metaeval init` before the table scripts. Keeps every row.
-- leaderboard --style (issue 35 item 2): the style covariates a leaderboard's ratings are
-- controlled for are a column of leaderboard ('' for every row written before: none) and a key of
-- its latest view (85_leaderboard.sql recreates the view).
ALTER TABLE IF EXISTS leaderboard ADD COLUMN IF NOT EXISTS style VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS leaderboard ALTER COLUMN style SET NOT NULL;
