-- AlpacaEval 2.0's length-controlled win rate of every system against one baseline
-- (`metaeval lc-winrate`; analyses/length_control.py): the raw and the length-controlled win rate
-- from the pairwise preferences, the outputs' lengths read from the cell attribute output_length;
-- glm names which of AlpacaEval's GLMs (length_controlled_v1 needs its df_gamed.csv).
CREATE TABLE IF NOT EXISTS lc_winrates (
    result_id      BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id         INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset        VARCHAR NOT NULL,
    subset         VARCHAR NOT NULL DEFAULT '',  -- the votes' subset (--where/--by): '' = every vote
    judge          VARCHAR NOT NULL,
    baseline       VARCHAR NOT NULL,
    system         VARCHAR NOT NULL,
    n_items        INTEGER NOT NULL,
    winrate        DOUBLE,
    lc_winrate     DOUBLE,
    lower          DOUBLE,
    upper          DOUBLE,
    length_coefficient DOUBLE,
    n_valid        INTEGER,
    k              INTEGER NOT NULL,
    seed           BIGINT NOT NULL,
    alpha          DOUBLE NOT NULL,
    fingerprint    VARCHAR NOT NULL,
    conventions    JSON NOT NULL,
    glm            VARCHAR NOT NULL DEFAULT 'maximum_likelihood',
    gamed          VARCHAR NOT NULL DEFAULT '',
    difficulty     VARCHAR NOT NULL DEFAULT '',
    standard_error DOUBLE,
    discrete_winrate DOUBLE,
    difficulty_coefficient DOUBLE,
    penalty_c      DOUBLE
);

CREATE OR REPLACE VIEW latest_lc_winrates AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, judge, baseline, glm, subset) AS latest_run
    FROM lc_winrates
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE lc_winrates IS '`metaeval lc-winrate`: each system''s win rate and length-controlled win rate against one baseline (the AlpacaEval 2.0 GLM named by glm), with percentile bootstrap intervals over the items.';
COMMENT ON VIEW latest_lc_winrates IS 'The rows of the finished run written last for each dataset, judge, baseline and glm (and subset).';
COMMENT ON COLUMN lc_winrates.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN lc_winrates.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN lc_winrates.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN lc_winrates.judge IS 'Whose preferences: '''' the human judges'', else the automatic judge''s name.';
COMMENT ON COLUMN lc_winrates.baseline IS 'The baseline system every system is compared with (systems.name).';
COMMENT ON COLUMN lc_winrates.system IS 'The system (systems.name).';
COMMENT ON COLUMN lc_winrates.n_items IS 'Verdicts between the system and the baseline with both outputs'' lengths (each verdict in each presentation order is one item).';
COMMENT ON COLUMN lc_winrates.winrate IS '100 * the mean preference for the system (a continuous preference as given, a tie 0.5): AlpacaEval''s win_rate; NULL without items.';
COMMENT ON COLUMN lc_winrates.lc_winrate IS '100 * mean_i s(theta): the win rate the fitted GLM gives at no length difference; NULL when the fit has no finite maximum (all verdicts one way).';
COMMENT ON COLUMN lc_winrates.lower IS 'Lower bound of the 1 - alpha percentile bootstrap interval of lc_winrate over the items (the valid rounds); NULL when undefined.';
COMMENT ON COLUMN lc_winrates.upper IS 'Upper bound of that interval.';
COMMENT ON COLUMN lc_winrates.length_coefficient IS 'phi, the coefficient of tanh(length difference / its standard deviation), the difference the system''s output minus the baseline''s (AlpacaEval''s own coefficient with the sign changed: it takes output_1 minus output_2); > 0: longer outputs were preferred. NULL without length differences.';
COMMENT ON COLUMN lc_winrates.n_valid IS 'Bootstrap rounds whose resampled items admit a fit.';
COMMENT ON COLUMN lc_winrates.k IS 'Bootstrap rounds.';
COMMENT ON COLUMN lc_winrates.seed IS 'Seed of the bootstrap (the same items drawn for every system).';
COMMENT ON COLUMN lc_winrates.alpha IS 'Intervals at 1 - alpha.';
COMMENT ON COLUMN lc_winrates.fingerprint IS 'sha256 of the items read (systems, verdicts, lengths).';
COMMENT ON COLUMN lc_winrates.conventions IS 'JSON: the model, the estimator, what is not reproduced of AlpacaEval and the interval.';
COMMENT ON COLUMN lc_winrates.glm IS 'Which GLM: AlpacaEval''s length_controlled_v1 (with --gamed: its published LC), length_controlled_noreg (--difficulty only), length_controlled_minimal (neither); maximum_likelihood: the unpenalised fit of rows written before 0.10.';
COMMENT ON COLUMN lc_winrates.gamed IS 'sha256 of the gamed baselines'' rows read (--gamed, df_gamed.csv''s layout); '''' none.';
COMMENT ON COLUMN lc_winrates.difficulty IS 'sha256 of the instruction difficulties read (--gamed or --difficulty); '''' none.';
COMMENT ON COLUMN lc_winrates.standard_error IS '100 * the standard error (ddof 1) of the preferences'' mean, AlpacaEval''s standard_error of win_rate.';
COMMENT ON COLUMN lc_winrates.discrete_winrate IS '100 * the mean of the rounded preferences (> 0.5 a win, < 0.5 a loss, 0.5 a draw), AlpacaEval''s discrete_win_rate.';
COMMENT ON COLUMN lc_winrates.difficulty_coefficient IS 'The coefficient of the instruction difficulty; NULL when the GLM has none.';
COMMENT ON COLUMN lc_winrates.penalty_c IS 'The L1 penalty''s C chosen by 5-fold GroupKFold cross-validation (AlpacaEval''s LogisticRegressionCV); NULL for the maximum-likelihood fit.';
COMMENT ON COLUMN lc_winrates.subset IS 'The votes the row was computed on (--where, --by): the label of the conditions on their inputs'' attributes (category=math; conditions joined by '' & ''), the rows of a warehouse holding only those votes; '''' = every vote.';
