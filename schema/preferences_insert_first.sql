-- Insert the staged preferences (_staged_preferences) into dataset $dataset_id, which has none yet:
-- nothing to resolve them against (preferences_resolved.sql would find every one new, of no stored
-- kind; its table of a million votes is 0.5 s and 150 MB that this insert does without).
INSERT INTO preferences (dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner,
                         probability, replicate)
SELECT $dataset_id, i.input_id, sa.system_id, sb.system_id, s.judge, s.kind, s.presentation, s.winner, s.probability,
       coalesce(CAST(s.replicate AS INTEGER), $replicate)
FROM _staged_preferences AS s
JOIN inputs AS i ON i.dataset_id = $dataset_id AND i.name = s.input
JOIN systems AS sa ON sa.dataset_id = $dataset_id AND sa.name = s.system_a
JOIN systems AS sb ON sb.dataset_id = $dataset_id AND sb.name = s.system_b
