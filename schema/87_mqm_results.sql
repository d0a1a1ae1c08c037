-- Raters of MQM / ESA judgments (`metaeval raters`; analyses/mqm.py): how far raters agree on
-- scores and on spans, and how stable the system ranking is with fewer ratings per segment.
CREATE TABLE IF NOT EXISTS rater_agreement (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    human        VARCHAR NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT '',
    statistic    VARCHAR NOT NULL,
    value        DOUBLE,
    n_raters     INTEGER NOT NULL,
    n_units      BIGINT NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_rater_agreement AS
SELECT * EXCLUDE (latest) FROM (
    SELECT *, max(result_id) OVER (PARTITION BY dataset, human, subset, statistic) AS latest
    FROM rater_agreement
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE result_id = latest;

CREATE TABLE IF NOT EXISTS rating_stability (
    result_id     BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id        INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset       VARCHAR NOT NULL,
    human         VARCHAR NOT NULL,
    subset        VARCHAR NOT NULL DEFAULT '',
    ratings       INTEGER NOT NULL,
    n_systems     INTEGER NOT NULL,
    short_cells   INTEGER NOT NULL,
    kendall_mean  DOUBLE,
    kendall_lower DOUBLE,
    kendall_upper DOUBLE,
    top_kept      DOUBLE,
    k             INTEGER NOT NULL,
    seed          BIGINT NOT NULL,
    alpha         DOUBLE NOT NULL,
    fingerprint   VARCHAR NOT NULL,
    conventions   JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_rating_stability AS
SELECT * EXCLUDE (latest) FROM (
    SELECT *, max(result_id) OVER (PARTITION BY dataset, human, subset, ratings) AS latest
    FROM rating_stability
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE result_id = latest;

COMMENT ON TABLE rater_agreement IS '`metaeval raters`: agreement between the raters of a human measure (Krippendorff''s alpha on their scores) and of the dataset''s error spans (character level: alpha, and pairwise overlap F1).';
COMMENT ON COLUMN rater_agreement.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN rater_agreement.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN rater_agreement.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN rater_agreement.human IS 'The human measure whose raters'' scores are compared (each rater one annotator), e.g. mqm.';
COMMENT ON COLUMN rater_agreement.subset IS 'Always empty: every cell and span of the dataset.';
COMMENT ON COLUMN rater_agreement.statistic IS 'score_alpha (interval alpha on the raters'' segment scores) | span_alpha (nominal alpha on characters: in a span or not) | span_alpha_severity (the label is the set of severities covering the character) | span_f1_mean (pairwise character F1 of two raters'' marked characters, mean over pairs) | span_f1_pooled (the same pooled over pairs).';
COMMENT ON COLUMN rater_agreement.value IS 'The statistic; NULL when undefined (no unit rated twice, one label only, no character marked).';
COMMENT ON COLUMN rater_agreement.n_raters IS 'Raters (annotators of the measure, or human judges of error_spans) taking part.';
COMMENT ON COLUMN rater_agreement.n_units IS 'Units rated by two or more raters: segments (score_alpha) or characters of segments rated by two or more raters (span statistics).';
COMMENT ON COLUMN rater_agreement.fingerprint IS 'sha256 of the judgments and spans read.';
COMMENT ON COLUMN rater_agreement.conventions IS 'JSON: the definitions (units, labels, levels of measurement, the krippendorff package).';
COMMENT ON VIEW latest_rater_agreement IS 'The latest rater_agreement row of each dataset, human measure, subset and statistic.';
COMMENT ON TABLE rating_stability IS '`metaeval raters`: the system ranking with a given number of ratings per segment (raters drawn without replacement, seeded) against the ranking on every rating: Kendall tau-b over the resamples.';
COMMENT ON COLUMN rating_stability.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN rating_stability.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN rating_stability.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN rating_stability.human IS 'The human measure whose raters are resampled, e.g. mqm.';
COMMENT ON COLUMN rating_stability.subset IS 'Always empty: every cell of the dataset.';
COMMENT ON COLUMN rating_stability.ratings IS 'Raters drawn per segment (system x input cell), without replacement.';
COMMENT ON COLUMN rating_stability.n_systems IS 'Systems with a score under the measure.';
COMMENT ON COLUMN rating_stability.short_cells IS 'Rated cells with fewer raters than ratings: all of their raters are used in every draw.';
COMMENT ON COLUMN rating_stability.kendall_mean IS 'Mean over the resamples of Kendall tau-b between the drawn and the full system scores; NULL when undefined.';
COMMENT ON COLUMN rating_stability.kendall_lower IS 'The alpha/2 quantile of the resampled Kendall tau-b values.';
COMMENT ON COLUMN rating_stability.kendall_upper IS 'The 1 - alpha/2 quantile of the resampled Kendall tau-b values.';
COMMENT ON COLUMN rating_stability.top_kept IS 'Share of the resamples whose single best system is the full ranking''s best; NULL when that best is tied.';
COMMENT ON COLUMN rating_stability.k IS 'Resamples (draws of raters).';
COMMENT ON COLUMN rating_stability.seed IS 'Seed of the draws (numpy default_rng([seed, ratings])).';
COMMENT ON COLUMN rating_stability.alpha IS 'The interval is the percentile interval 1 - alpha of the resampled values.';
COMMENT ON COLUMN rating_stability.fingerprint IS 'sha256 of the judgments read.';
COMMENT ON COLUMN rating_stability.conventions IS 'JSON: the system score (mean over rated inputs of the mean over the drawn raters), the draw, the coefficient.';
COMMENT ON VIEW latest_rating_stability IS 'The latest rating_stability row of each dataset, human measure, subset and number of ratings.';

-- A metric's predicted error spans against the human ones (`metaeval span-eval`;
-- analyses/spans.py): character-level precision, recall and F1 with bootstrap intervals.
CREATE TABLE IF NOT EXISTS span_evaluation (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    subset            VARCHAR NOT NULL DEFAULT '',
    judge             VARCHAR NOT NULL,
    severity_matching BOOLEAN NOT NULL,
    averaging         VARCHAR NOT NULL CHECK (averaging IN ('micro', 'macro')),
    n_segments        INTEGER NOT NULL,
    "precision"       DOUBLE,
    precision_lower   DOUBLE,
    precision_upper   DOUBLE,
    recall            DOUBLE,
    recall_lower      DOUBLE,
    recall_upper      DOUBLE,
    f1                DOUBLE,
    f1_lower          DOUBLE,
    f1_upper          DOUBLE,
    k                 INTEGER NOT NULL,
    seed              BIGINT NOT NULL,
    alpha             DOUBLE NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_span_evaluation AS
SELECT * EXCLUDE (latest) FROM (
    SELECT *, max(result_id) OVER (PARTITION BY dataset, subset, judge, severity_matching, averaging) AS latest
    FROM span_evaluation
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE result_id = latest;

COMMENT ON TABLE span_evaluation IS '`metaeval span-eval`: an automatic judge''s predicted error spans against the human ones (the union over the human raters), character by character: precision, recall and F1 with partial-overlap credit, micro or macro over segments, with percentile bootstrap intervals over segments.';
COMMENT ON COLUMN span_evaluation.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN span_evaluation.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN span_evaluation.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN span_evaluation.subset IS 'Always empty: every segment both the judge and a human rated.';
COMMENT ON COLUMN span_evaluation.judge IS 'The automatic judge (error_spans.judge of kind automatic: a metric''s predicted spans).';
COMMENT ON COLUMN span_evaluation.severity_matching IS 'Whether a character counts as matched only when a severity covering it in the prediction also covers it in the human spans (case-folded).';
COMMENT ON COLUMN span_evaluation.averaging IS 'micro (counts summed over segments, then the ratios) | macro (the mean over segments of each defined per-segment value).';
COMMENT ON COLUMN span_evaluation.n_segments IS 'Segments (system x input) the judge and at least one human rater rated.';
COMMENT ON COLUMN span_evaluation."precision" IS 'Matched characters / characters the judge marked; NULL when undefined (nothing marked).';
COMMENT ON COLUMN span_evaluation.precision_lower IS 'Lower end of the percentile bootstrap interval of precision (over segments).';
COMMENT ON COLUMN span_evaluation.precision_upper IS 'Upper end of the percentile bootstrap interval of precision (over segments).';
COMMENT ON COLUMN span_evaluation.recall IS 'Matched characters / characters the humans marked; NULL when undefined (nothing marked).';
COMMENT ON COLUMN span_evaluation.recall_lower IS 'Lower end of the percentile bootstrap interval of recall (over segments).';
COMMENT ON COLUMN span_evaluation.recall_upper IS 'Upper end of the percentile bootstrap interval of recall (over segments).';
COMMENT ON COLUMN span_evaluation.f1 IS 'Harmonic mean of precision and recall (0 when both are defined and nothing matches); NULL when undefined.';
COMMENT ON COLUMN span_evaluation.f1_lower IS 'Lower end of the percentile bootstrap interval of f1 (over segments).';
COMMENT ON COLUMN span_evaluation.f1_upper IS 'Upper end of the percentile bootstrap interval of f1 (over segments).';
COMMENT ON COLUMN span_evaluation.k IS 'Bootstrap resamples of the segments.';
COMMENT ON COLUMN span_evaluation.seed IS 'Seed of the resamples (numpy default_rng(seed)).';
COMMENT ON COLUMN span_evaluation.alpha IS 'The intervals are percentile intervals 1 - alpha.';
COMMENT ON COLUMN span_evaluation.fingerprint IS 'sha256 of the spans read (the judge''s and the humans'').';
COMMENT ON COLUMN span_evaluation.conventions IS 'JSON: the gold (union over raters), the character units, matching, averaging, the bootstrap.';
COMMENT ON VIEW latest_span_evaluation IS 'The latest span_evaluation row of each dataset, subset, judge, severity matching and averaging.';

-- Paired tests between two judges' span F1 (`metaeval span-eval`), corrected over the pairs.
CREATE TABLE IF NOT EXISTS span_tests (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    subset            VARCHAR NOT NULL DEFAULT '',
    judge_a           VARCHAR NOT NULL,
    judge_b           VARCHAR NOT NULL,
    severity_matching BOOLEAN NOT NULL,
    n_segments        INTEGER NOT NULL,
    delta             DOUBLE,
    pvalue            DOUBLE,
    pvalue_corrected  DOUBLE,
    n_valid           INTEGER NOT NULL,
    correction        VARCHAR NOT NULL,
    significant       BOOLEAN,
    resolvable        BOOLEAN NOT NULL,
    k                 INTEGER NOT NULL,
    seed              BIGINT NOT NULL,
    alpha             DOUBLE NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    pvalue_formula    VARCHAR,
    family_tests      INTEGER,
    smallest_p        DOUBLE,
    needed_p          DOUBLE,
    k_needed          INTEGER
);

CREATE OR REPLACE VIEW latest_span_tests AS
SELECT * EXCLUDE (latest) FROM (
    SELECT *, max(result_id) OVER (PARTITION BY dataset, subset, judge_a, judge_b, severity_matching) AS latest
    FROM span_tests
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE result_id = latest;

COMMENT ON TABLE span_tests IS '`metaeval span-eval`: paired permutation tests of two automatic judges'' micro span F1 on the segments both (and a human) rated, corrected over the pairs of judges (per severity matching) through the conclusion layer.';
COMMENT ON COLUMN span_tests.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN span_tests.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN span_tests.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN span_tests.subset IS 'Always empty: every segment both judges and a human rated.';
COMMENT ON COLUMN span_tests.judge_a IS 'First judge of the pair (name order).';
COMMENT ON COLUMN span_tests.judge_b IS 'Second judge of the pair.';
COMMENT ON COLUMN span_tests.severity_matching IS 'Whether the F1 compared counts a character only when a severity matches (as span_evaluation).';
COMMENT ON COLUMN span_tests.n_segments IS 'Segments both judges and at least one human rated.';
COMMENT ON COLUMN span_tests.delta IS 'micro F1(judge_a) - micro F1(judge_b) on those segments; NULL when undefined.';
COMMENT ON COLUMN span_tests.pvalue IS 'Two-sided permutation p-value (1 + count) / (1 + n_valid), swapping the judges'' counts per segment; NULL when delta is undefined.';
COMMENT ON COLUMN span_tests.pvalue_corrected IS 'The p-value after the correction over the pairs of judges (per severity matching).';
COMMENT ON COLUMN span_tests.n_valid IS 'Permutations whose difference is defined.';
COMMENT ON COLUMN span_tests.correction IS 'bonferroni | holm | bh | none';
COMMENT ON COLUMN span_tests.significant IS 'pvalue_corrected <= alpha, the family resolvable and the test''s own floor reaching it (analyses/conclusions.decide); NULL when undefined.';
COMMENT ON COLUMN span_tests.resolvable IS 'Whether the smallest attainable p-value can reach the corrected threshold (analyses.stats.resolution).';
COMMENT ON COLUMN span_tests.k IS 'Permutations.';
COMMENT ON COLUMN span_tests.seed IS 'Seed of the permutations (numpy default_rng(seed)).';
COMMENT ON COLUMN span_tests.alpha IS 'Significance level after the correction.';
COMMENT ON COLUMN span_tests.fingerprint IS 'sha256 of the spans read (the judges'' and the humans'').';
COMMENT ON COLUMN span_tests.conventions IS 'JSON: the statistic, the permutation and the p-value formula (rows written before schema 10 also hold the family''s resolution as JSON text, now in the columns below).';
COMMENT ON COLUMN span_tests.pvalue_formula IS 'The family''s resolution (analyses.stats.resolution.Resolution): how its p-values are formed (add-one: (1 + count) / (1 + n_valid)); NULL when the family holds no defined test.';
COMMENT ON COLUMN span_tests.family_tests IS 'The family''s resolution: the defined tests corrected together (the pairs of judges of this severity matching).';
COMMENT ON COLUMN span_tests.smallest_p IS 'The family''s resolution: the smallest p-value its tests can attain, 1/(k + 1).';
COMMENT ON COLUMN span_tests.needed_p IS 'The family''s resolution: the largest raw p-value the correction can declare significant (alpha; alpha/m for Bonferroni and Holm); resolvable when smallest_p <= needed_p.';
COMMENT ON COLUMN span_tests.k_needed IS 'The family''s resolution: the fewest permutations with which it could resolve.';
COMMENT ON VIEW latest_span_tests IS 'The latest span_tests row of each dataset, subset, pair of judges and severity matching.';
