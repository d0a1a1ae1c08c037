-- The preferences of a file read by DuckDB (_preference_given: line, input, system_a, system_b,
-- judge, "order", winner, kind as the file gives them, NULL where it has no such column or the
-- field is empty; its names and words checked, each distinct value once) as _staged_preferences
-- (ingest/preferences.py COLUMNS; a view: read three times, cheaper than written once), systems
-- in name order as ingest/preferences.py:_normalised puts them, the fields read as
-- _preference_words says (schema/preferences_staged_words.sql), an empty input as the vote's own
-- ('vote-<line>', an arena vote table's).
CREATE OR REPLACE TEMP VIEW _staged_preferences AS
WITH given AS (
    SELECT g.line, coalesce(g.input, 'vote-' || g.line) AS input, g.system_a, g.system_b,
           coalesce(w.judge_given, g.judge, w.judge) AS judge,
           coalesce(CASE WHEN g.kind IS NOT NULL THEN w.kinds_to[list_position(w.kinds_from, g.kind)] END,
                    w.kind) AS kind,
           coalesce(w.orders_to[list_position(w.orders_from, g."order")], 'ab') AS presentation,
           w.winners_to[list_position(w.winners_from, g.winner)] AS winner
    FROM _preference_given AS g, _preference_words AS w)
SELECT line, input,
       CASE WHEN system_a > system_b THEN system_b ELSE system_a END AS system_a,
       CASE WHEN system_a > system_b THEN system_a ELSE system_b END AS system_b,
       judge, kind,
       CASE WHEN system_a > system_b THEN CASE presentation WHEN 'ab' THEN 'ba' ELSE 'ab' END
            ELSE presentation END AS presentation,
       CASE WHEN system_a > system_b THEN CASE winner WHEN 'a' THEN 'b' WHEN 'b' THEN 'a' ELSE winner END
            ELSE winner END AS winner,
       CAST(NULL AS DOUBLE) AS probability,
       CAST(NULL AS INTEGER) AS replicate   -- (a file with a replicate column is read by the Python reader)
FROM given  -- in the order of the lines (DuckDB keeps a scan's order)
