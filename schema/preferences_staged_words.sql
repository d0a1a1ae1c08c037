-- How the staged preferences' fields read (schema/preferences_staged.sql): the words through their
-- lists ($*_from[i] is read as $*_to[i]), an empty kind as $kind, an empty judge as $judge, and the
-- judge given to the ingest, $judge_given, overriding the file's.
CREATE OR REPLACE TEMP TABLE _preference_words AS
SELECT $orders_from AS orders_from, $orders_to AS orders_to, $winners_from AS winners_from,
       $winners_to AS winners_to, $kinds_from AS kinds_from, $kinds_to AS kinds_to,
       CAST($kind AS VARCHAR) AS kind, CAST($judge AS VARCHAR) AS judge,
       CAST($judge_given AS VARCHAR) AS judge_given
