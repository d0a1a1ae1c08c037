-- Judge results already computed by a metaeval version with the same results, for a dataset:
-- the fingerprint, parameters and run_id of each finished run that wrote them.
SELECT DISTINCT r.data_fingerprint, r.parameters, r.run_id
FROM analysis_runs AS r
WHERE r.command = 'judges' AND r.status = 'finished'
  AND list_contains($versions, r.version)
  AND json_extract_string(r.parameters, '$.dataset') = $dataset
