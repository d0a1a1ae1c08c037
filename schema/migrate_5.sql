-- Schema 5 -> 6, run by `metaeval init` before the table scripts. Keeps every row.
-- A system that a judge (or the humans) never compared has no Bradley-Terry strength and no rank
-- (its strength would be the ridge prior's 0, ranked among the others): preference_rankings'
-- strength and rank may be NULL.
ALTER TABLE IF EXISTS preference_rankings ALTER COLUMN strength DROP NOT NULL;
ALTER TABLE IF EXISTS preference_rankings ALTER COLUMN rank DROP NOT NULL;
