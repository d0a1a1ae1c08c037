-- One row per (dataset, measure, system, input): automatic scores as stored (the mean over a
-- cell's runs, view score_means), human judgments averaged over annotators. Names, not internal ids.
CREATE OR REPLACE VIEW cells AS
WITH values_by_cell AS (
    SELECT system_id, input_id, measure_id, value, 1 AS n_annotators
    FROM score_means
    UNION ALL
    SELECT system_id, input_id, measure_id, avg(value), count(*)
    FROM judgments
    GROUP BY system_id, input_id, measure_id
)
SELECT d.name AS dataset,
       m.name AS measure,
       s.name AS system,
       i.name AS input,
       v.value,
       m.kind,
       v.n_annotators
FROM values_by_cell AS v
JOIN measures AS m USING (measure_id)
JOIN datasets AS d ON d.dataset_id = m.dataset_id
JOIN systems  AS s ON s.system_id = v.system_id
JOIN inputs   AS i ON i.input_id = v.input_id;
