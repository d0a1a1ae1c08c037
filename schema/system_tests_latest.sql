-- The latest system_tests rows of one dataset and measure (latest_system_tests), each with the
-- metaeval version of the run that wrote it (a run reuses them only when that version gives the
-- same results: runs/engine/bookkeeping.py SAME_RESULTS_AS).
SELECT t.*, r.version AS run_version
FROM latest_system_tests AS t
JOIN analysis_runs AS r USING (run_id)
WHERE t.dataset = $dataset AND t.measure = $measure
ORDER BY t.result_id
