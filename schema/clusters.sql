-- --resample-clusters (runs/engine/clusters.py): the interval of the same setting computed on single
-- inputs, to say how much clustering widened it. Bound parameters only.

-- name: unclustered_interval
SELECT lower, upper, run_id
FROM confidence_intervals
WHERE dataset = $dataset AND human = $human AND metric = $metric AND level = $level
  AND coefficient = $coefficient AND method = $method AND alpha = $alpha AND k = $k AND seed = $seed
  AND subset = $subset AND aggregate = $aggregate AND system_inputs = $system_inputs
  AND fingerprint = $fingerprint
ORDER BY result_id DESC
LIMIT 1
