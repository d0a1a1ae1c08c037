-- The cell attribute output_length of dataset $dataset (the outputs' lengths, e.g. from an AlpacaEval
-- annotations file or `ingest attributes`): one row per system and input whose value is a number.
SELECT system, input, TRY_CAST(value AS DOUBLE) AS length
FROM attributes
WHERE dataset = $dataset AND attribute = 'output_length' AND system <> ''
