-- Every judgment of one human measure, with the positions of its system and input in the
-- dataset's matrix order (system_order, input_order). Parameters: dataset, measure.
SELECT s.name AS system, i.name AS input, j.annotator, j.value,
       so.position AS sp, io.position AS ip
FROM judgments AS j
JOIN measures AS m USING (measure_id)
JOIN datasets AS d ON d.dataset_id = m.dataset_id
JOIN systems  AS s ON s.system_id = j.system_id
JOIN inputs   AS i ON i.input_id = j.input_id
JOIN system_order AS so ON so.dataset = d.name AND so.system = s.name
JOIN input_order  AS io ON io.dataset = d.name AND io.input = i.name
WHERE d.name = $dataset AND m.name = $measure
