-- The staged output lengths (_staged_lengths) whose stored output_length attribute of dataset
-- $dataset differs: line, system, input, the new and the stored value.
SELECT s.line, s.system, s.input, s.value, a.value
FROM _staged_lengths AS s
JOIN attributes AS a ON a.dataset = $dataset AND a.system = s.system AND a.input = s.input
 AND a.attribute = 'output_length'
WHERE a.value <> s.value
ORDER BY s.line
