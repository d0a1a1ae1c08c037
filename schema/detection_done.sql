-- Detection results already computed by a metaeval version with the same results, for a
-- dataset and human measure: the fingerprint and parameters of each finished run that wrote them.
SELECT DISTINCT r.data_fingerprint, r.parameters
FROM analysis_runs AS r
WHERE r.command = 'detection' AND r.status = 'finished'
  AND list_contains($versions, r.version)
  AND json_extract_string(r.parameters, '$.dataset') = $dataset
  AND json_extract_string(r.parameters, '$.human') = $human
