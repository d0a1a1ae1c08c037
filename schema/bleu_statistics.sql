-- Statements of the system-level measures (runs/engine/system_level.py): BLEU's sufficient statistics per
-- cell (table bleu_statistics, schema/89_bleu_statistics.sql), written by `score --metric
-- corpus-bleu` and summed by the analyses. One per `-- name:` section, with bound parameters.

-- name: measures
-- The dataset's system-level measures: those with sufficient statistics.
SELECT DISTINCT m.name
FROM bleu_statistics AS b JOIN measures AS m USING (measure_id) JOIN datasets AS d USING (dataset_id)
WHERE d.name = $dataset
ORDER BY m.name;

-- name: cells
-- A measure's statistics by system and input name.
SELECT s.name AS system, i.name AS input, b.hyp_len, b.ref_len, b.correct_1, b.correct_2, b.correct_3,
       b.correct_4, b.total_1, b.total_2, b.total_3, b.total_4
FROM bleu_statistics AS b
JOIN measures AS m USING (measure_id) JOIN datasets AS d USING (dataset_id)
JOIN systems AS s ON s.system_id = b.system_id JOIN inputs AS i ON i.input_id = b.input_id
WHERE d.name = $dataset AND m.name = $measure
ORDER BY s.name, i.name;

-- name: systems
-- The systems with statistics of a measure, in the order of every matrix (system_order).
SELECT o.system
FROM system_order AS o
WHERE o.dataset = $dataset AND o.system IN (
    SELECT s.name FROM bleu_statistics AS b
    JOIN measures AS m USING (measure_id) JOIN datasets AS d USING (dataset_id)
    JOIN systems AS s ON s.system_id = b.system_id
    WHERE d.name = $dataset AND m.name = $measure)
ORDER BY o.position;

-- name: delete
DELETE FROM bleu_statistics
WHERE measure_id = (SELECT m.measure_id FROM measures AS m JOIN datasets AS d USING (dataset_id)
                    WHERE d.name = $dataset AND m.name = $measure);

-- name: insert
-- The staged frame (system, input, the ten statistics) resolved to ids.
INSERT INTO bleu_statistics
SELECT m.measure_id, s.system_id, i.input_id, f.hyp_len, f.ref_len, f.correct_1, f.correct_2, f.correct_3,
       f.correct_4, f.total_1, f.total_2, f.total_3, f.total_4
FROM staged_bleu_statistics AS f
JOIN datasets AS d ON d.name = $dataset
JOIN measures AS m ON m.dataset_id = d.dataset_id AND m.name = $measure
JOIN systems AS s ON s.dataset_id = d.dataset_id AND s.name = f.system
JOIN inputs AS i ON i.dataset_id = d.dataset_id AND i.name = f.input;
