-- Schema 3 -> 4, run by `metaeval init` before the table scripts. Keeps every row.
-- winners (issue 24): a metric whose correlation is undefined has no rank, cluster or winner
-- status, and clusters of tests that cannot resolve are not findings: the three columns become
-- nullable; the cluster rule and the row's status are recorded (NULL for rows of schema 3,
-- which used the strict rule).
ALTER TABLE IF EXISTS winners ALTER COLUMN rank DROP NOT NULL;
ALTER TABLE IF EXISTS winners ALTER COLUMN cluster DROP NOT NULL;
ALTER TABLE IF EXISTS winners ALTER COLUMN is_winner DROP NOT NULL;
ALTER TABLE IF EXISTS winners ADD COLUMN IF NOT EXISTS cluster_rule VARCHAR;
ALTER TABLE IF EXISTS winners ADD COLUMN IF NOT EXISTS status VARCHAR;
-- task_rankings: a metric whose average correlation is undefined is not ranked either.
ALTER TABLE IF EXISTS task_rankings ALTER COLUMN rank DROP NOT NULL;
ALTER TABLE IF EXISTS task_rankings ALTER COLUMN cluster DROP NOT NULL;
ALTER TABLE IF EXISTS task_rankings ALTER COLUMN winner DROP NOT NULL;
-- hypothesis_tests gained sequential tests (issue 24, compare --sequential): the risk bound of
-- MMCTest; rows of version 3 drew a fixed k (NULL).
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS risk DOUBLE;
