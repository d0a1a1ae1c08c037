-- Insert the resolved preferences of dataset $dataset_id that are new or replace a deleted row.
INSERT INTO preferences (dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner,
                         probability, replicate)
SELECT $dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner, probability, replicate
FROM _resolved_preferences
WHERE stored_winner IS NULL OR changed;
