-- Statements of the regression over the model-free features (runs/texts/regression.py). One per
-- `-- name:` section, with bound parameters.

-- name: fits
-- The options recorded by a dataset's score ingests that fitted a regression, latest first: where
-- the coefficients another dataset applies are read (`score --trained-on`).
SELECT g.ingest_id, g.options
FROM ingests AS g JOIN datasets AS d USING (dataset_id)
WHERE d.name = $dataset AND g.format = 'score' AND g.options LIKE '%"regression"%'
ORDER BY g.ingest_id DESC;
