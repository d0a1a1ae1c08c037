-- The staged output lengths and instruction places (_staged_lengths: their attribute output_length,
-- instruction_index) whose stored attribute of dataset $dataset differs: line, system, input, the new and the stored value.
SELECT s.line, s.system, s.input, s.value, a.value, s.attribute
FROM _staged_lengths AS s
JOIN attributes AS a ON a.dataset = $dataset AND a.system = s.system AND a.input = s.input
 AND a.attribute = s.attribute
WHERE a.value <> s.value
ORDER BY s.line
