-- The datasets with their sizes (`metaeval datasets`, Store.datasets): the rows of the view
-- dataset_summary (14_catalog.sql), each count grouped once per table instead of a correlated
-- subquery per dataset, which DuckDB plans in a tenth of the time (issue 47 item 5).
-- tests/test_catalog_queries.py: the same rows as the view.
WITH n_systems AS (SELECT dataset_id, count(*) AS n FROM systems GROUP BY dataset_id),
n_inputs AS (SELECT dataset_id, count(*) AS n FROM inputs GROUP BY dataset_id),
n_measures AS (
    SELECT dataset_id, count(*) FILTER (WHERE kind = 'automatic') AS n_automatic,
           count(*) FILTER (WHERE kind = 'human') AS n_human
    FROM measures GROUP BY dataset_id
),
n_summaries AS (
    SELECT s.dataset_id, count(*) AS n FROM summaries AS su JOIN systems AS s USING (system_id) GROUP BY s.dataset_id
)
SELECT d.name AS dataset, coalesce(s.n, 0) AS n_systems, coalesce(i.n, 0) AS n_inputs,
       coalesce(m.n_automatic, 0) AS n_automatic, coalesce(m.n_human, 0) AS n_human,
       coalesce(su.n, 0) AS n_summaries, d.created_at
FROM datasets AS d
LEFT JOIN n_systems AS s USING (dataset_id)
LEFT JOIN n_inputs AS i USING (dataset_id)
LEFT JOIN n_measures AS m USING (dataset_id)
LEFT JOIN n_summaries AS su USING (dataset_id)
ORDER BY d.name
