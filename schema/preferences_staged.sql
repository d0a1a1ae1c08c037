-- The preferences of a file read by DuckDB (_preference_given: line, input, system_a, system_b,
-- judge, "order", winner, kind as the file gives them, NULL where it has no such column or the
-- field is empty; its names and words checked, each distinct value once) as _staged_preferences
-- (ingest/preferences.py COLUMNS), systems in name order as ingest/preferences.py:_normalised puts
-- them: the words through their lists ($*_from[i] is read as $*_to[i]), an empty kind $kind, an
-- empty judge $judge (the judge given to the ingest: $judge_given, overriding the file's), an empty
-- input the vote's own ('vote-<line>', an arena vote table's).
CREATE OR REPLACE TEMP TABLE _staged_preferences AS
WITH given AS (
    SELECT line, coalesce(input, 'vote-' || line) AS input, system_a, system_b,
           coalesce($judge_given, judge, $judge) AS judge,
           coalesce(CASE WHEN kind IS NOT NULL THEN $kinds_to[list_position($kinds_from, kind)] END, $kind) AS kind,
           coalesce($orders_to[list_position($orders_from, "order")], 'ab') AS presentation,
           $winners_to[list_position($winners_from, winner)] AS winner
    FROM _preference_given)
SELECT line, input,
       CASE WHEN system_a > system_b THEN system_b ELSE system_a END AS system_a,
       CASE WHEN system_a > system_b THEN system_a ELSE system_b END AS system_b,
       judge, kind,
       CASE WHEN system_a > system_b THEN CASE presentation WHEN 'ab' THEN 'ba' ELSE 'ab' END
            ELSE presentation END AS presentation,
       CASE WHEN system_a > system_b THEN CASE winner WHEN 'a' THEN 'b' WHEN 'b' THEN 'a' ELSE winner END
            ELSE winner END AS winner,
       CAST(NULL AS DOUBLE) AS probability
FROM given  -- in the order of the lines (DuckDB keeps a scan's order)
