-- Store the staged output lengths and instruction places (_staged_lengths) as their attribute
-- (output_length, instruction_index) of dataset $dataset (new, or replacing a stored value the caller allowed to replace); the rows changed.
INSERT OR REPLACE INTO attributes (dataset, system, input, attribute, value)
SELECT $dataset, s.system, s.input, s.attribute, s.value
FROM _staged_lengths AS s
WHERE NOT EXISTS (SELECT 1 FROM attributes AS a WHERE a.dataset = $dataset AND a.system = s.system
                  AND a.input = s.input AND a.attribute = s.attribute AND a.value = s.value)
RETURNING 1
