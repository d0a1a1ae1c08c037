-- What the warehouse holds: one row per dataset, one row per dataset/measure.
-- `metaeval datasets` and `measures` (Store.datasets, Store.measures) read the same rows, faster,
-- from dataset_sizes.sql and measure_coverage.sql (tests/test_catalog_queries.py).
CREATE OR REPLACE VIEW dataset_summary AS
SELECT d.name AS dataset,
       (SELECT count(*) FROM systems s WHERE s.dataset_id = d.dataset_id) AS n_systems,
       (SELECT count(*) FROM inputs i WHERE i.dataset_id = d.dataset_id) AS n_inputs,
       (SELECT count(*) FROM measures m WHERE m.dataset_id = d.dataset_id AND m.kind = 'automatic') AS n_automatic,
       (SELECT count(*) FROM measures m WHERE m.dataset_id = d.dataset_id AND m.kind = 'human') AS n_human,
       (SELECT count(*) FROM summaries su JOIN systems s USING (system_id) WHERE s.dataset_id = d.dataset_id) AS n_summaries,
       d.created_at
FROM datasets AS d
ORDER BY d.name;

CREATE OR REPLACE VIEW measure_summary AS
SELECT d.name AS dataset, m.name AS measure, m.kind, m.direction, m.scale,
       count(c.value) AS n_cells,
       count(DISTINCT c.system) AS n_systems,
       count(DISTINCT c.input) AS n_inputs,
       max(c.n_annotators) AS max_annotators
FROM measures AS m
JOIN datasets AS d USING (dataset_id)
LEFT JOIN cells AS c ON c.dataset = d.name AND c.measure = m.name
GROUP BY d.name, m.name, m.kind, m.direction, m.scale
ORDER BY d.name, m.kind, m.name;
