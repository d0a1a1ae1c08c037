-- Schema 12 -> 13, run by `metaeval init` before the table scripts. Keeps every row.
-- Repeated runs of metrics (issue 45 item 4): a score carries its run number (replicate), which
-- joins the scores' key (system, input, measure, replicate; scores have no declared key, the ingest
-- keeps it); every score written before is run 0. The analyses read the mean over a cell's runs
-- (view score_means), which for a cell run once is its stored value.
ALTER TABLE scores ADD COLUMN IF NOT EXISTS replicate INTEGER DEFAULT 0;
ALTER TABLE scores ALTER COLUMN replicate SET NOT NULL;
