-- Schema 4 -> 5, run by `metaeval init` before the table scripts. Keeps every row.
-- issue 26: attributes of inputs and cells (the `attributes` table, schema/17_attributes.sql, is
-- created by the table scripts that follow).
-- The analyses over cells take a subset (`--where ATTR=VALUE`): their result tables gain the key
-- column `subset` ('' = every cell: every row written before; DuckDB adds a NOT NULL column with IF NOT
-- EXISTS in two steps), and their latest_* views (re-created
-- by the table scripts) partition by it, so rows of different subsets never mix.
ALTER TABLE IF EXISTS correlations ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS correlations ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS confidence_intervals ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS confidence_intervals ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS hypothesis_tests ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS pairwise_accuracy ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS pairwise_accuracy ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS input_significance ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS input_significance ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS soft_pairwise_accuracy ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS soft_pairwise_accuracy ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS delta_bin_accuracy ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS delta_bin_accuracy ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS annotator_agreement ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS annotator_agreement ALTER COLUMN subset SET NOT NULL;
ALTER TABLE IF EXISTS human_ceiling ADD COLUMN IF NOT EXISTS subset VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS human_ceiling ALTER COLUMN subset SET NOT NULL;
