-- The votes of a subset (`--where` / `--by` of the vote families; runs/engine/subset_runs.py): the
-- stored items and their verdicts, and the temporary view that restricts `preferences` to the
-- items of one subset while the family computes.

-- name: items
-- Every item (input, pair of systems) of dataset $dataset's votes, with its ids and its verdicts
-- (every judge's, each presentation order one), in name order.
SELECT i.name AS input, sa.name AS system_a, sb.name AS system_b,
       p.dataset_id, p.input_id, p.system_a_id, p.system_b_id, count(*) AS verdicts
FROM preferences AS p
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
WHERE d.name = $dataset
GROUP BY ALL
ORDER BY i.name, sa.name, sb.name;

-- name: items_table
-- The items of the subset (the registered frame _subset_frame), for the view below.
CREATE OR REPLACE TEMP TABLE _subset_items AS SELECT * FROM _subset_frame;

-- name: restrict
-- `preferences` of this connection, shadowing the stored table ($stored: its qualified name,
-- written in by the caller, as a view takes no parameter): the votes on the subset's items, and
-- every vote of the other datasets.
CREATE OR REPLACE TEMP VIEW preferences AS
SELECT p.* FROM $stored AS p
WHERE p.dataset_id NOT IN (SELECT DISTINCT dataset_id FROM temp.main._subset_items)
   OR EXISTS (SELECT 1 FROM temp.main._subset_items AS s
              WHERE s.dataset_id = p.dataset_id AND s.input_id = p.input_id
                AND s.system_a_id = p.system_a_id AND s.system_b_id = p.system_b_id);
