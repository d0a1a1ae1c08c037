-- BLEU's sufficient statistics of each summary (`metaeval score --metric corpus-bleu`;
-- analyses/text/mt.py bleu_statistics): sacrebleu's segment statistics, so that a system's corpus
-- BLEU over any set of its inputs (all, the judged ones, a subset, a bootstrap resample) is the
-- BLEU of their sums, as sacrebleu's corpus_score computes it. A measure with rows here is a
-- system-level measure: it has no cells in `scores` (a corpus BLEU is not a mean of cells).
-- Like scores, no FOREIGN KEY: only `score` writes it, with ids it resolved.
CREATE TABLE IF NOT EXISTS bleu_statistics (
    measure_id  INTEGER NOT NULL,
    system_id   INTEGER NOT NULL,
    input_id    INTEGER NOT NULL,
    hyp_len     BIGINT NOT NULL,
    ref_len     BIGINT NOT NULL,
    correct_1   BIGINT NOT NULL,
    correct_2   BIGINT NOT NULL,
    correct_3   BIGINT NOT NULL,
    correct_4   BIGINT NOT NULL,
    total_1     BIGINT NOT NULL,
    total_2     BIGINT NOT NULL,
    total_3     BIGINT NOT NULL,
    total_4     BIGINT NOT NULL
);

COMMENT ON TABLE bleu_statistics IS 'BLEU sufficient statistics per (system, input) of a system-level measure (corpus-bleu): its corpus BLEU over any set of inputs is the BLEU of their sums (sacrebleu corpus_score)';
COMMENT ON COLUMN bleu_statistics.measure_id IS 'measures.measure_id of the system-level measure (corpus-bleu)';
COMMENT ON COLUMN bleu_statistics.system_id IS 'systems.system_id';
COMMENT ON COLUMN bleu_statistics.input_id IS 'inputs.input_id; key: (measure_id, system_id, input_id)';
COMMENT ON COLUMN bleu_statistics.hyp_len IS 'tokens of the summary (sacrebleu 13a tokenisation)';
COMMENT ON COLUMN bleu_statistics.ref_len IS 'tokens of the reference closest in length (sacrebleu)';
COMMENT ON COLUMN bleu_statistics.correct_1 IS 'clipped unigram matches with the references';
COMMENT ON COLUMN bleu_statistics.correct_2 IS 'clipped bigram matches with the references';
COMMENT ON COLUMN bleu_statistics.correct_3 IS 'clipped trigram matches with the references';
COMMENT ON COLUMN bleu_statistics.correct_4 IS 'clipped 4-gram matches with the references';
COMMENT ON COLUMN bleu_statistics.total_1 IS 'unigrams of the summary';
COMMENT ON COLUMN bleu_statistics.total_2 IS 'bigrams of the summary';
COMMENT ON COLUMN bleu_statistics.total_3 IS 'trigrams of the summary';
COMMENT ON COLUMN bleu_statistics.total_4 IS '4-grams of the summary';
