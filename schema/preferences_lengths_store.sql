-- Store the staged output lengths (_staged_lengths) as the cell attribute output_length of
-- dataset $dataset (new, or replacing a stored value the caller allowed to replace); the rows changed.
INSERT OR REPLACE INTO attributes (dataset, system, input, attribute, value)
SELECT $dataset, s.system, s.input, 'output_length', s.value
FROM _staged_lengths AS s
WHERE NOT EXISTS (SELECT 1 FROM attributes AS a WHERE a.dataset = $dataset AND a.system = s.system
                  AND a.input = s.input AND a.attribute = 'output_length' AND a.value = s.value)
RETURNING 1
