-- Schema 5 -> 6, run by `metaeval init` before the table scripts. Keeps every row.
-- A system that a judge (or the humans) never compared has no Bradley-Terry strength and no rank
-- (its strength would be the ridge prior's 0, ranked among the others): preference_rankings'
-- strength and rank may be NULL.
ALTER TABLE IF EXISTS preference_rankings ALTER COLUMN strength DROP NOT NULL;
ALTER TABLE IF EXISTS preference_rankings ALTER COLUMN rank DROP NOT NULL;
-- accuracy --pvalue (issue 33 item 7): how the per-input p-values were computed is a column of
-- input_significance ('t', scipy's, for every row written before) and a key of its latest view.
ALTER TABLE IF EXISTS input_significance ADD COLUMN IF NOT EXISTS pvalue VARCHAR DEFAULT 't';
ALTER TABLE IF EXISTS input_significance ALTER COLUMN pvalue SET NOT NULL;
