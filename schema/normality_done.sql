-- Normality rows already computed for a dataset by a metaeval version with the same results:
-- (measure, level, test, fingerprint).
SELECT DISTINCT measure, level, test, fingerprint
FROM normality
WHERE dataset = $dataset
  AND run_id IN (SELECT run_id FROM analysis_runs WHERE list_contains($versions, version))
