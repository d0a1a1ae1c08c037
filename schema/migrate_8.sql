-- Schema 8 -> 9, run by `metaeval init` before the table scripts. Keeps every row.
-- AlpacaEval 2.0, whole (issue 43 item 1): a judge's continuous preference is kept beside its
-- verdict (preferences.probability: P(system_b preferred); NULL for every row written before,
-- which were verdicts only), and lc_winrates says which of AlpacaEval's GLMs it computed, with
-- the raw win rate's standard error and the discrete win rate. Rows written before were the plain
-- maximum-likelihood fit of 0.9: glm 'maximum_likelihood'.
ALTER TABLE IF EXISTS preferences ADD COLUMN IF NOT EXISTS probability DOUBLE;
ALTER TABLE IF EXISTS lc_winrates ADD COLUMN IF NOT EXISTS glm VARCHAR DEFAULT 'maximum_likelihood';
ALTER TABLE IF EXISTS lc_winrates ALTER COLUMN glm SET NOT NULL;
ALTER TABLE IF EXISTS lc_winrates ADD COLUMN IF NOT EXISTS gamed VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS lc_winrates ALTER COLUMN gamed SET NOT NULL;
ALTER TABLE IF EXISTS lc_winrates ADD COLUMN IF NOT EXISTS difficulty VARCHAR DEFAULT '';
ALTER TABLE IF EXISTS lc_winrates ALTER COLUMN difficulty SET NOT NULL;
ALTER TABLE IF EXISTS lc_winrates ADD COLUMN IF NOT EXISTS standard_error DOUBLE;
ALTER TABLE IF EXISTS lc_winrates ADD COLUMN IF NOT EXISTS discrete_winrate DOUBLE;
ALTER TABLE IF EXISTS lc_winrates ADD COLUMN IF NOT EXISTS difficulty_coefficient DOUBLE;
ALTER TABLE IF EXISTS lc_winrates ADD COLUMN IF NOT EXISTS penalty_c DOUBLE;
