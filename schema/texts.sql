-- Queries of the stored texts (read by runs/; parameters bound).

-- name: summaries
-- The stored output texts (summaries) of dataset $dataset: system, input, text. What style
-- control measures (leaderboard --style) and what the offsets of ESA's released CSV point into
-- when an evaluation set was ingested first (ingest mqm --format esa-csv).
SELECT s.name AS system, i.name AS input, su.text
FROM summaries AS su
JOIN systems AS s ON s.system_id = su.system_id
JOIN inputs AS i ON i.input_id = su.input_id
JOIN datasets AS d ON d.dataset_id = s.dataset_id
WHERE d.name = $dataset;
