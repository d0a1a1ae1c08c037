-- The command and metaeval version of each run in $runs (for result signatures).
SELECT run_id, command, version, data_fingerprint FROM analysis_runs WHERE list_contains($runs, run_id);
