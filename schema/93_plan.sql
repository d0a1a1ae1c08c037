-- How big must the next study be (`metaeval plan`; analyses/plan.py): for each size asked (inputs,
-- systems, ratings per cell), the power of the later test, the minimum detectable effect and the
-- interval width, from the pilot data in the warehouse.
CREATE TABLE IF NOT EXISTS plan_sizes (
    result_id        BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id           INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset          VARCHAR NOT NULL,
    human            VARCHAR NOT NULL,
    question         VARCHAR NOT NULL,
    system_a         VARCHAR NOT NULL,
    system_b         VARCHAR NOT NULL,
    n_inputs         INTEGER NOT NULL,
    n_systems        INTEGER NOT NULL,
    ratings          INTEGER NOT NULL,
    family_size      INTEGER NOT NULL,
    level            DOUBLE NOT NULL,
    effect           DOUBLE,
    effect_given     BOOLEAN NOT NULL,
    sd               DOUBLE,
    power            DOUBLE,
    power_resampled  DOUBLE,
    minimum_effect   DOUBLE,
    interval_width   DOUBLE,
    inputs_needed    BIGINT,
    target_power     DOUBLE NOT NULL,
    pilot_inputs     INTEGER NOT NULL,
    pilot_systems    INTEGER NOT NULL,
    pilot_ratings    DOUBLE NOT NULL,
    alpha            DOUBLE NOT NULL,
    correction       VARCHAR NOT NULL,
    trials           INTEGER NOT NULL,
    seed             BIGINT NOT NULL,
    fingerprint      VARCHAR NOT NULL,
    conventions      JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_plan_sizes AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, human, question, system_a, system_b) AS latest_run
    FROM plan_sizes
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE plan_sizes IS '`metaeval plan`: the power, minimum detectable effect and interval width of a study of each size asked, from the pilot data in the warehouse (the systems question: a paired t-test between two systems).';
COMMENT ON VIEW latest_plan_sizes IS 'The rows of the finished run written last for each dataset, human measure, question and pair of systems.';
COMMENT ON COLUMN plan_sizes.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN plan_sizes.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN plan_sizes.dataset IS 'Dataset name (datasets.name) of the pilot.';
COMMENT ON COLUMN plan_sizes.human IS 'The human measure (measures.name).';
COMMENT ON COLUMN plan_sizes.question IS 'systems: do system_a and system_b differ under the human measure (a two-sided paired t-test).';
COMMENT ON COLUMN plan_sizes.system_a IS 'The first system (systems.name).';
COMMENT ON COLUMN plan_sizes.system_b IS 'The second system.';
COMMENT ON COLUMN plan_sizes.n_inputs IS 'Inputs of the planned study.';
COMMENT ON COLUMN plan_sizes.n_systems IS 'Systems of the planned study (every pair tested: the family of the correction).';
COMMENT ON COLUMN plan_sizes.ratings IS 'Ratings per cell of the planned study.';
COMMENT ON COLUMN plan_sizes.family_size IS 'm = n_systems (n_systems - 1) / 2 tests corrected together.';
COMMENT ON COLUMN plan_sizes.level IS 'The level the pair''s test must reach: alpha / m (the first step of Holm, Bonferroni and BH: a lower bound of their power), alpha without correction.';
COMMENT ON COLUMN plan_sizes.effect IS 'The true mean difference (system_a minus system_b) the power is at: the pilot''s or the one given.';
COMMENT ON COLUMN plan_sizes.effect_given IS 'True: the effect was given (effect); false: the pilot''s observed mean difference.';
COMMENT ON COLUMN plan_sizes.sd IS 'The standard deviation of a paired difference at these ratings per cell, from the pilot.';
COMMENT ON COLUMN plan_sizes.power IS 'The paired t-test''s power by the noncentral t (closed form); NULL when undefined.';
COMMENT ON COLUMN plan_sizes.power_resampled IS 'The same power by resampling the pilot''s differences (trials rounds).';
COMMENT ON COLUMN plan_sizes.minimum_effect IS 'The smallest |effect| with power target_power at these sizes (closed form).';
COMMENT ON COLUMN plan_sizes.interval_width IS 'The expected width of the 1 - alpha t interval of the mean difference.';
COMMENT ON COLUMN plan_sizes.inputs_needed IS 'The fewest inputs reaching target_power at these systems and ratings (closed form); NULL: none up to 10^7.';
COMMENT ON COLUMN plan_sizes.target_power IS 'The target power (power).';
COMMENT ON COLUMN plan_sizes.pilot_inputs IS 'Inputs the two systems share in the pilot.';
COMMENT ON COLUMN plan_sizes.pilot_systems IS 'Systems with the human measure in the pilot.';
COMMENT ON COLUMN plan_sizes.pilot_ratings IS 'Ratings per cell in the pilot (the harmonic mean over the two systems'' cells).';
COMMENT ON COLUMN plan_sizes.alpha IS 'The family''s level and the interval''s 1 - alpha.';
COMMENT ON COLUMN plan_sizes.correction IS 'The correction the later analysis applies over every pair of systems.';
COMMENT ON COLUMN plan_sizes.trials IS 'Resampling rounds of power_resampled.';
COMMENT ON COLUMN plan_sizes.seed IS 'Seed of the resampling.';
COMMENT ON COLUMN plan_sizes.fingerprint IS 'sha256 of the pilot''s differences and ratings'' variances.';
COMMENT ON COLUMN plan_sizes.conventions IS 'JSON: the closed form, the resampling, the level and the pilot''s statistics.';
