-- What the Python reader would refuse in the staged preferences (_staged_preferences), counted:
-- the same comparison judged twice by a judge in one order, a judge of two kinds.
SELECT (SELECT count(*) FROM (SELECT 1 FROM _staged_preferences
                              GROUP BY input, system_a, system_b, judge, presentation HAVING count(*) > 1)),
       (SELECT count(*) FROM (SELECT 1 FROM _staged_preferences GROUP BY judge HAVING count(DISTINCT kind) > 1))
