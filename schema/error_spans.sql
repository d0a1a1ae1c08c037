-- Statements of ingest/mqm.py's store(): the staged spans (_staged_error_spans) merged into
-- error_spans, one judge's segment (system, input, judge) at a time.

-- name: resolve
CREATE OR REPLACE TEMP TABLE _resolved_error_spans AS
SELECT d.dataset_id, sy.system_id, i.input_id, s.*
FROM _staged_error_spans AS s
JOIN datasets AS d ON d.name = $dataset
JOIN systems AS sy ON sy.dataset_id = d.dataset_id AND sy.name = s.system
JOIN inputs AS i ON i.dataset_id = d.dataset_id AND i.name = s.input;

-- name: changed
-- The judge's segments whose staged rows are not exactly the stored ones (stored: some were).
CREATE OR REPLACE TEMP TABLE _changed_error_spans AS
WITH staged AS (
    SELECT dataset_id, system_id, input_id, judge, any_value(system) AS system, any_value(input) AS input,
           min(line) AS line,
           list((error, severity, category, comment, side, span_start, span_end, kind)
                ORDER BY error, side NULLS FIRST, span_start NULLS FIRST, span_end NULLS FIRST) AS spans
    FROM _resolved_error_spans GROUP BY dataset_id, system_id, input_id, judge),
stored AS (
    SELECT e.dataset_id, e.system_id, e.input_id, e.judge,
           list((e.error, e.severity, e.category, e.comment, e.side, e.span_start, e.span_end, e.kind)
                ORDER BY e.error, e.side NULLS FIRST, e.span_start NULLS FIRST, e.span_end NULLS FIRST) AS spans
    FROM error_spans AS e
    JOIN (SELECT DISTINCT dataset_id, system_id, input_id, judge FROM _resolved_error_spans) AS k
      ON k.dataset_id = e.dataset_id AND k.system_id = e.system_id AND k.input_id = e.input_id AND k.judge = e.judge
    GROUP BY e.dataset_id, e.system_id, e.input_id, e.judge)
SELECT s.dataset_id, s.system_id, s.input_id, s.judge, s.system, s.input, s.line, t.spans IS NOT NULL AS stored
FROM staged AS s
LEFT JOIN stored AS t ON t.dataset_id = s.dataset_id AND t.system_id = s.system_id AND t.input_id = s.input_id
                     AND t.judge = s.judge
WHERE t.spans IS DISTINCT FROM s.spans;

-- name: conflicts
SELECT system, input, judge, line, stored FROM _changed_error_spans ORDER BY line;

-- name: other_kind
SELECT string_agg(DISTINCT r.judge, ', ' ORDER BY r.judge)
FROM _resolved_error_spans AS r
JOIN error_spans AS e ON e.dataset_id = r.dataset_id AND e.judge = r.judge AND e.kind <> r.kind;

-- name: delete
DELETE FROM error_spans AS e USING _changed_error_spans AS c
WHERE c.stored AND e.dataset_id = c.dataset_id AND e.system_id = c.system_id AND e.input_id = c.input_id
  AND e.judge = c.judge;

-- name: insert
INSERT INTO error_spans (dataset_id, system_id, input_id, judge, kind, error, severity, category, comment, side,
                         span_start, span_end)
SELECT r.dataset_id, r.system_id, r.input_id, r.judge, r.kind, r.error, r.severity, r.category, r.comment, r.side,
       r.span_start, r.span_end
FROM _resolved_error_spans AS r
JOIN _changed_error_spans AS c ON c.dataset_id = r.dataset_id AND c.system_id = r.system_id
                              AND c.input_id = r.input_id AND c.judge = r.judge;

-- name: rated
-- The spans of dataset $dataset (one row per span; an error with no span, or a No-error row:
-- side NULL) with the lengths of the segment's texts, for the raters and span-eval families;
-- only segments whose target text is stored (ESA's released CSV ships none: its offsets are
-- measured only where the ingest was given the system outputs or the dataset held them).
SELECT s.name AS system, i.name AS input, e.judge, e.kind, e.side, e.span_start, e.span_end, e.severity,
       coalesce(length(doc.text), 0) AS source_length, coalesce(length(sm.text), 0) AS target_length
FROM error_spans AS e
JOIN datasets AS d ON d.dataset_id = e.dataset_id
JOIN systems AS s ON s.system_id = e.system_id
JOIN inputs AS i ON i.input_id = e.input_id
LEFT JOIN documents AS doc ON doc.input_id = e.input_id AND doc.position = 0
LEFT JOIN summaries AS sm ON sm.system_id = e.system_id AND sm.input_id = e.input_id
WHERE d.name = $dataset AND sm.text IS NOT NULL
ORDER BY s.name, i.name, e.judge, e.error, e.side, e.span_start;
