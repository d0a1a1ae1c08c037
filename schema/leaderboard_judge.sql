-- Whether dataset $dataset has preferences of the automatic judge $judge (a count).
SELECT count(*)
FROM preference_means AS p  -- the mean over each cell's runs
JOIN datasets AS d ON d.dataset_id = p.dataset_id
WHERE d.name = $dataset AND p.judge = $judge AND p.kind = 'automatic'
