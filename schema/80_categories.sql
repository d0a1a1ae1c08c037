-- Error categories of a human judgment (`metaeval categories`, issue 26 item 4): each metric's
-- correlation with each per-category human measure, and the drop of its correlation with the
-- overall judgment when the category is ignored (FRANK's ablation, Pagnoni et al. 2021).

CREATE TABLE IF NOT EXISTS error_categories (
    result_id             BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id                INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset               VARCHAR NOT NULL,
    human                 VARCHAR NOT NULL,    -- the overall judgment
    metric                VARCHAR NOT NULL,
    level                 VARCHAR NOT NULL,
    coefficient           VARCHAR NOT NULL,
    category              VARCHAR NOT NULL,    -- the error category's name (CATEGORY of CATEGORY=MEASURE)
    category_measure      VARCHAR,             -- its human measure (--category); NULL: none given
    ablated_measure       VARCHAR,             -- the overall judgment without it (--ablation); NULL: none given
    category_correlation  DOUBLE,              -- r(metric, category_measure); NULL when undefined or not given
    overall_correlation   DOUBLE,              -- r(metric, human) on the same cells
    ablated_correlation   DOUBLE,              -- r(metric, ablated_measure)
    correlation_drop      DOUBLE,              -- overall_correlation - ablated_correlation
    system_inputs         VARCHAR NOT NULL,
    n_systems             INTEGER,
    n_inputs              INTEGER,
    fingerprint           VARCHAR NOT NULL,
    conventions           JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_error_categories AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, human, metric, level, coefficient, category, system_inputs
                                 ORDER BY result_id DESC) AS rn
    FROM error_categories)
WHERE rn = 1;

COMMENT ON TABLE error_categories IS '`metaeval categories`: per metric, level, coefficient and error category, the correlation with the category''s human measure and the drop of the correlation with the overall judgment when the category is ignored.';
COMMENT ON VIEW latest_error_categories IS 'The latest error_categories row of each dataset, overall judgment, metric, level, coefficient, category and system-inputs protocol.';
COMMENT ON COLUMN error_categories.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN error_categories.run_id IS 'Unique id of the run.';
COMMENT ON COLUMN error_categories.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN error_categories.human IS 'The overall human judgment (measures.name, kind human), mean over annotators per cell.';
COMMENT ON COLUMN error_categories.metric IS 'Automatic metric (measures.name).';
COMMENT ON COLUMN error_categories.level IS 'system | summary | global';
COMMENT ON COLUMN error_categories.coefficient IS 'Correlation coefficient (kendall = tau-b).';
COMMENT ON COLUMN error_categories.category IS 'Name of the error category (CATEGORY in --category / --ablation CATEGORY=MEASURE).';
COMMENT ON COLUMN error_categories.category_measure IS 'Human measure of the category (--category); NULL when only an ablation was given.';
COMMENT ON COLUMN error_categories.ablated_measure IS 'The overall judgment with the category ignored (--ablation); NULL when not given.';
COMMENT ON COLUMN error_categories.category_correlation IS 'Correlation of the metric with category_measure; NULL when undefined (a constant category) or not given.';
COMMENT ON COLUMN error_categories.overall_correlation IS 'Correlation of the metric with the overall judgment, on the cells the row''s measures share.';
COMMENT ON COLUMN error_categories.ablated_correlation IS 'Correlation of the metric with ablated_measure; NULL when undefined or not given.';
COMMENT ON COLUMN error_categories.correlation_drop IS 'overall_correlation - ablated_correlation: > 0, the metric''s agreement rests on the category; NULL when either is.';
COMMENT ON COLUMN error_categories.system_inputs IS 'System level: a system score averages all inputs the metric scored (all) or only the judged ones (judged).';
COMMENT ON COLUMN error_categories.n_systems IS 'Systems on the cells the row''s measures share.';
COMMENT ON COLUMN error_categories.n_inputs IS 'Inputs on the cells the row''s measures share.';
COMMENT ON COLUMN error_categories.fingerprint IS 'sha256 of the cells read (labels, measure names, directions, values).';
COMMENT ON COLUMN error_categories.conventions IS 'JSON: the conventions of the correlations (level, coefficient, NaN policy, system scores, orientation) and what the drop is.';
