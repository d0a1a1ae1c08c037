-- Every run (scores.replicate) of one automatic measure's scores, by name: what
-- `ci --replicates resample` draws again inside each resample. Parameters: dataset, measure.
SELECT s.name AS system, i.name AS input, v.replicate, v.value
FROM scores AS v
JOIN measures AS m USING (measure_id)
JOIN datasets AS d ON d.dataset_id = m.dataset_id
JOIN systems  AS s ON s.system_id = v.system_id
JOIN inputs   AS i ON i.input_id = v.input_id
WHERE d.name = $dataset AND m.name = $measure
