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
