-- How big must the next study be (`metaeval plan`; analyses/plan.py): for each size asked (inputs,
-- systems, ratings per cell), the power of the later test, the minimum detectable effect and the
-- interval width, from the pilot data in the warehouse.
CREATE TABLE IF NOT EXISTS plan_sizes (
    result_id        BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id           INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset          VARCHAR NOT NULL,
    human            VARCHAR NOT NULL,
    question         VARCHAR NOT NULL,
    system_a         VARCHAR,
    system_b         VARCHAR,
    metric_a         VARCHAR,
    metric_b         VARCHAR,
    n_inputs         INTEGER NOT NULL,
    n_systems        INTEGER NOT NULL,
    ratings          INTEGER,
    unlabelled       BIGINT,
    lam              DOUBLE,
    family_size      INTEGER NOT NULL,
    level            DOUBLE NOT NULL,
    effect           DOUBLE,
    effect_given     BOOLEAN NOT NULL,
    sd               DOUBLE,
    power            DOUBLE,
    power_resampled  DOUBLE,
    minimum_effect   DOUBLE,
    interval_width   DOUBLE,
    width_resampled  DOUBLE,
    inputs_needed    BIGINT,
    target_power     DOUBLE NOT NULL,
    pilot_inputs     INTEGER NOT NULL,
    pilot_systems    INTEGER NOT NULL,
    pilot_ratings    DOUBLE,
    alpha            DOUBLE NOT NULL,
    correction       VARCHAR NOT NULL,
    trials           INTEGER NOT NULL,
    correlation_level VARCHAR,
    coefficient      VARCHAR,
    k                INTEGER,
    alternative      VARCHAR,
    seed             BIGINT NOT NULL,
    fingerprint      VARCHAR NOT NULL,
    conventions      JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_plan_sizes AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, human, question, system_a, system_b, metric_a, metric_b) AS latest_run
    FROM plan_sizes
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE plan_sizes IS '`metaeval plan`: the power, minimum detectable effect and interval width of a study of each size asked, from the pilot data in the warehouse (the systems question: a paired t-test between two systems; ppi: the human labels PPI++ needs beside a metric for a difference of two systems; metrics: the Perm-Both test of metric A against metric B).';
COMMENT ON VIEW latest_plan_sizes IS 'The rows of the finished run written last for each dataset, human measure, question, pair of systems and metrics.';
COMMENT ON COLUMN plan_sizes.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN plan_sizes.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN plan_sizes.dataset IS 'Dataset name (datasets.name) of the pilot.';
COMMENT ON COLUMN plan_sizes.human IS 'The human measure (measures.name).';
COMMENT ON COLUMN plan_sizes.question IS 'systems: do system_a and system_b differ under the human measure (a two-sided paired t-test); ppi: the same difference estimated by PPI++ from n_inputs human-labelled inputs and metric_a on unlabelled more (a normal test); metrics: does metric_a correlate with the human better than metric_b (the Perm-Both test of Deutsch et al. 2021, two-sided by default).';
COMMENT ON COLUMN plan_sizes.system_a IS 'The first system (systems.name); NULL for the metrics question.';
COMMENT ON COLUMN plan_sizes.system_b IS 'The second system; NULL for the metrics question.';
COMMENT ON COLUMN plan_sizes.metric_a IS 'ppi: the metric beside the human labels; metrics: the first metric; NULL for the systems question.';
COMMENT ON COLUMN plan_sizes.metric_b IS 'metrics: the second metric; NULL otherwise.';
COMMENT ON COLUMN plan_sizes.n_inputs IS 'Inputs of the planned study (ppi: the inputs with human labels, n).';
COMMENT ON COLUMN plan_sizes.unlabelled IS 'ppi: the inputs with the metric only (N); NULL otherwise.';
COMMENT ON COLUMN plan_sizes.lam IS 'ppi: PPI++''s variance-minimising lambda at these sizes, from the pilot''s moments; NULL otherwise.';
COMMENT ON COLUMN plan_sizes.n_systems IS 'Systems of the planned study (every pair tested: the family of the correction).';
COMMENT ON COLUMN plan_sizes.ratings IS 'Ratings per cell of the planned study; NULL: as in the pilot (ppi, metrics).';
COMMENT ON COLUMN plan_sizes.family_size IS 'm tests corrected together: n_systems (n_systems - 1) / 2 pairs of systems (systems, ppi), the pairs of the metrics given (metrics).';
COMMENT ON COLUMN plan_sizes.level IS 'The level the pair''s test must reach: alpha / m (the first step of Holm, Bonferroni and BH: a lower bound of their power), alpha without correction.';
COMMENT ON COLUMN plan_sizes.effect IS 'The true effect the power is at: the mean difference system_a minus system_b (systems; ppi: the pilot''s PPI++ estimate) or the one given; metrics: the pilot''s corr(metric_a, human) - corr(metric_b, human), the draws'' own.';
COMMENT ON COLUMN plan_sizes.effect_given IS 'True: the effect was given (effect); false: the pilot''s observed mean difference.';
COMMENT ON COLUMN plan_sizes.sd IS 'systems: the standard deviation of a paired difference at these ratings per cell, from the pilot; ppi: the standard error of PPI++''s difference (its variance formula); NULL for metrics.';
COMMENT ON COLUMN plan_sizes.power IS 'The power by the closed form: the paired t-test''s noncentral t (systems), the normal test at PPI++''s standard error (ppi); NULL when undefined and for metrics (no closed form).';
COMMENT ON COLUMN plan_sizes.power_resampled IS 'The same power by resampling the pilot (trials rounds; metrics: the Perm-Both test with k permutations on each draw of systems and inputs).';
COMMENT ON COLUMN plan_sizes.minimum_effect IS 'The smallest |effect| with power target_power at these sizes (closed form; NULL for metrics).';
COMMENT ON COLUMN plan_sizes.interval_width IS 'The expected width of the 1 - alpha interval of the mean difference (systems: the t interval; ppi: PPI++''s normal interval, by its variance formula); NULL for metrics.';
COMMENT ON COLUMN plan_sizes.width_resampled IS 'ppi: the mean width of PPI++''s 1 - alpha interval over the resampled studies; NULL otherwise.';
COMMENT ON COLUMN plan_sizes.inputs_needed IS 'The fewest inputs (ppi: human labels, at these unlabelled inputs) reaching target_power at these systems and ratings (closed form); NULL: none up to 10^7, and for metrics.';
COMMENT ON COLUMN plan_sizes.target_power IS 'The target power (power).';
COMMENT ON COLUMN plan_sizes.pilot_inputs IS 'Inputs the two systems share in the pilot (ppi: with human labels on both; metrics: the pilot''s inputs).';
COMMENT ON COLUMN plan_sizes.pilot_systems IS 'Systems with the human measure in the pilot.';
COMMENT ON COLUMN plan_sizes.pilot_ratings IS 'Ratings per cell in the pilot (the harmonic mean over the two systems'' cells); NULL for ppi and metrics (the pilot''s cell means as they are).';
COMMENT ON COLUMN plan_sizes.alpha IS 'The family''s level and the interval''s 1 - alpha.';
COMMENT ON COLUMN plan_sizes.correction IS 'The correction the later analysis applies over every pair of systems.';
COMMENT ON COLUMN plan_sizes.trials IS 'Resampling rounds of power_resampled.';
COMMENT ON COLUMN plan_sizes.correlation_level IS 'metrics: the correlation level (system, summary, global); NULL otherwise.';
COMMENT ON COLUMN plan_sizes.coefficient IS 'metrics: the correlation coefficient; NULL otherwise.';
COMMENT ON COLUMN plan_sizes.alternative IS 'metrics: H1 of the Perm-Both test of metric_a against metric_b; NULL otherwise.';
COMMENT ON COLUMN plan_sizes.k IS 'metrics: permutations of each Perm-Both test; NULL otherwise.';
COMMENT ON COLUMN plan_sizes.seed IS 'Seed of the resampling.';
COMMENT ON COLUMN plan_sizes.fingerprint IS 'sha256 of the pilot''s differences and ratings'' variances.';
COMMENT ON COLUMN plan_sizes.conventions IS 'JSON: the closed form, the resampling, the level and the pilot''s statistics.';
