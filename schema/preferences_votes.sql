-- An arena vote table's votes, each its own input ('vote-<line>'), into dataset $dataset_id, which
-- has no inputs and no preferences yet (ingest/preferences.py:_insert_votes): the rows
-- preferences_insert_inputs.sql and preferences_insert_first.sql store, the same ids, without
-- grouping a million distinct names nor joining the votes to their inputs by name. The file's
-- lines are consecutive (line = rowid + 2, preferences_staged.sql), so the vote on line L is
-- input $base + L - 2 where $base is the first of $n values taken from the inputs' sequence, as
-- the default of input_id takes them in the order of the lines. The inputs come straight from the
-- file's table (line = rowid + 2, input 'vote-<line>': _staged_preferences' own input), a scan whose
-- order DuckDB keeps in the insert (preserve_insertion_order), so without sorting a million lines.

-- name: base
SELECT CAST(max(nextval('input_id_seq')) AS BIGINT) - $n + 1 FROM range($n);

-- name: inputs
INSERT INTO inputs (input_id, dataset_id, name)
SELECT $base + rowid, $dataset_id, 'vote-' || (rowid + 2) FROM _preference_file;

-- name: preferences
INSERT INTO preferences (dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner,
                         probability, replicate)
SELECT $dataset_id, $base + s.line - 2, sa.system_id, sb.system_id, s.judge, s.kind, s.presentation, s.winner,
       s.probability, coalesce(CAST(s.replicate AS INTEGER), $replicate)
FROM _staged_preferences AS s
JOIN systems AS sa ON sa.dataset_id = $dataset_id AND sa.name = s.system_a
JOIN systems AS sb ON sb.dataset_id = $dataset_id AND sb.name = s.system_b;

-- name: systems
-- The systems of a file read by DuckDB that dataset $dataset_id lacks, inserted at once in the order of
-- their first line (preferences_insert_systems.sql's rows): from the names as the file gives them
-- (_preference_given), the same names and first lines as the staged preferences' (which put each
-- pair in name order), without computing the staged rows twice.
INSERT INTO systems (dataset_id, name)
SELECT $dataset_id, name FROM (
    SELECT name, min(line) AS line FROM (
        SELECT system_a AS name, line FROM _preference_given
        UNION ALL SELECT system_b, line FROM _preference_given)
    GROUP BY name)
WHERE name NOT IN (SELECT name FROM systems WHERE dataset_id = $dataset_id)
ORDER BY line, name;
