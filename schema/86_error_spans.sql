-- MQM and ESA error spans (`metaeval ingest mqm`): one row per span of an error a judge marked
-- in a segment (a rater, kind human; or a metric's predicted spans, kind automatic). An error
-- marking no span, and a No-error row (the judge rated the segment and found no error), have one
-- row with no side and no offsets. The texts the offsets point into are stored once per segment:
-- the source as the input's document at position 0, the target as the system's summary of the
-- input. Written only by the ingest (ingest/mqm.py).
CREATE TABLE IF NOT EXISTS error_spans (
    dataset_id  INTEGER NOT NULL,
    system_id   INTEGER NOT NULL,
    input_id    INTEGER NOT NULL,
    judge       VARCHAR NOT NULL,
    kind        VARCHAR NOT NULL CHECK (kind IN ('human', 'automatic')),
    error       INTEGER NOT NULL,
    severity    VARCHAR NOT NULL,
    category    VARCHAR NOT NULL,
    comment     VARCHAR,
    side        VARCHAR CHECK (side IN ('source', 'target')),
    span_start  INTEGER,
    span_end    INTEGER,
    CHECK ((side IS NULL) = (span_start IS NULL) AND (side IS NULL) = (span_end IS NULL)),
    CHECK (span_start <= span_end)
);

-- The spans with their names and the characters they mark.
CREATE OR REPLACE VIEW error_span_texts AS
SELECT d.name AS dataset, s.name AS system, i.name AS input, e.judge, e.kind, e.error, e.severity, e.category,
       e.comment, e.side, e.span_start, e.span_end,
       substr(CASE e.side WHEN 'source' THEN doc.text ELSE sm.text END, e.span_start + 1,
              e.span_end - e.span_start) AS span_text
FROM error_spans AS e
JOIN datasets AS d ON d.dataset_id = e.dataset_id
JOIN systems AS s ON s.system_id = e.system_id
JOIN inputs AS i ON i.input_id = e.input_id
LEFT JOIN documents AS doc ON doc.input_id = e.input_id AND doc.position = 0
LEFT JOIN summaries AS sm ON sm.system_id = e.system_id AND sm.input_id = e.input_id;

COMMENT ON TABLE error_spans IS 'MQM / ESA error spans (`metaeval ingest mqm`): one row per span of an error a judge marked in a segment; an error with no span, or a No-error row, has one row without side and offsets.';
COMMENT ON COLUMN error_spans.dataset_id IS 'datasets.dataset_id';
COMMENT ON COLUMN error_spans.system_id IS 'systems.system_id: the system whose translation (target) was rated.';
COMMENT ON COLUMN error_spans.input_id IS 'inputs.input_id: the segment (the file''s seg_id as given).';
COMMENT ON COLUMN error_spans.judge IS 'The rater (kind human), or the metric whose predicted spans these are (kind automatic).';
COMMENT ON COLUMN error_spans.kind IS 'human | automatic';
COMMENT ON COLUMN error_spans.error IS 'The error''s number among the judge''s rows of this segment, in file order from 0; the spans of one error share it.';
COMMENT ON COLUMN error_spans.severity IS 'As given (Major, Minor, Neutral, ...); No-error for a segment rated without errors.';
COMMENT ON COLUMN error_spans.category IS 'As given, slash-separated (Accuracy/Mistranslation, Non-translation!, ...); No-error for a segment rated without errors; empty in ESA.';
COMMENT ON COLUMN error_spans.comment IS 'The rater''s comment; NULL when none (or no comment column).';
COMMENT ON COLUMN error_spans.side IS 'source | target: the text the span was marked in; NULL when the error marks no span.';
COMMENT ON COLUMN error_spans.span_start IS 'First character of the span (0-based, in characters of the text without <v> markers).';
COMMENT ON COLUMN error_spans.span_end IS 'One past the last character of the span (span_end - span_start characters; equal for an empty span).';
COMMENT ON VIEW error_span_texts IS 'error_spans with dataset, system and input names and span_text, the characters marked (source: documents position 0; target: the system''s summary).';
