-- Schema 10 -> 11, run by `metaeval init` before the table scripts. Keeps every row.
-- The vote families' --where / --by (issue 44 item 4): their result tables gain the subset key,
-- the label of the votes a row was computed on ('' = every vote: every row written before, whose
-- fingerprints are unchanged); the table scripts then partition their latest views by it.
-- Self-contained and idempotent: each statement skips an absent table or an existing column.
ALTER TABLE IF EXISTS leaderboard ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS leaderboard ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS leaderboard_style ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS leaderboard_style ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS lc_winrates ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS lc_winrates ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS judge_leaderboard ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS judge_leaderboard ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS judge_diagnostics ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS judge_diagnostics ALTER COLUMN subset SET NOT NULL;
