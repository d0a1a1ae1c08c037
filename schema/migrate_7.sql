-- Schema 7 -> 8, run by `metaeval init` before the table scripts. Keeps every row.
-- accuracy --aggregate mean|median (issue 33 item 9): how a system's score aggregates its inputs
-- is a column of pairwise_accuracy and soft_pairwise_accuracy ('mean' for every row written
-- before) and a key of their latest views (31_latest_ranking.sql, 61_latest_mt.sql), so the
-- mean's and the median's rows are both shown.
ALTER TABLE IF EXISTS pairwise_accuracy ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS pairwise_accuracy ALTER COLUMN aggregate SET NOT NULL;
ALTER TABLE IF EXISTS soft_pairwise_accuracy ADD COLUMN IF NOT EXISTS aggregate VARCHAR DEFAULT 'mean';
ALTER TABLE IF EXISTS soft_pairwise_accuracy ALTER COLUMN aggregate SET NOT NULL;
