-- How a ranking of systems changes between two measures (`metaeval rank-change`; Graham 2015,
-- Table 3; analyses/rank_change.py): one row per system with its position under each measure
-- (1 = best; ties share the best position) and the change, and the two rankings' Kendall tau-b
-- and Spearman rho (the same on every row of a setting).
CREATE TABLE IF NOT EXISTS rank_changes (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    measure_a    VARCHAR NOT NULL,
    measure_b    VARCHAR NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT '',
    system       VARCHAR NOT NULL,
    score_a      DOUBLE NOT NULL,
    score_b      DOUBLE NOT NULL,
    position_a   INTEGER NOT NULL,
    position_b   INTEGER NOT NULL,
    change       INTEGER NOT NULL,
    kendall      DOUBLE,
    spearman     DOUBLE,
    n_systems    INTEGER NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL,
    aggregate    VARCHAR NOT NULL DEFAULT 'mean'
);

CREATE OR REPLACE VIEW latest_rank_changes AS
SELECT * EXCLUDE (latest_run) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY dataset, measure_a, measure_b, subset, aggregate) AS latest_run
    FROM rank_changes
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE run_id = latest_run;

COMMENT ON TABLE rank_changes IS '`metaeval rank-change`: each system''s position under two measures (metrics, variants or human judgments) and its change, with the Kendall tau-b and Spearman rho of the two system rankings (Graham 2015, Table 3).';
COMMENT ON VIEW latest_rank_changes IS 'The rows of the finished run written last for each dataset, measure pair and subset.';
COMMENT ON COLUMN rank_changes.score_a IS 'The system''s mean over its cells of measure_a, oriented (higher is better).';
COMMENT ON COLUMN rank_changes.position_a IS 'Position under measure_a: 1 = best; tied systems share the best position of their group.';
COMMENT ON COLUMN rank_changes.change IS 'position_b - position_a (negative: measure_b ranks the system higher).';
COMMENT ON COLUMN rank_changes.kendall IS 'Kendall tau-b between the two measures'' system scores; NULL when one is constant.';
COMMENT ON COLUMN rank_changes.spearman IS 'Spearman rho between the two measures'' system scores; NULL when one is constant.';
COMMENT ON COLUMN rank_changes.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN rank_changes.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN rank_changes.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN rank_changes.measure_a IS 'The first measure (a metric, a variant or a human judgment).';
COMMENT ON COLUMN rank_changes.measure_b IS 'The second measure.';
COMMENT ON COLUMN rank_changes.subset IS 'The cells analysed: the --where conditions joined by '' & '' ('''' every cell).';
COMMENT ON COLUMN rank_changes.system IS 'The system (systems.name).';
COMMENT ON COLUMN rank_changes.score_b IS 'The system''s mean over its cells of measure_b, oriented (higher is better).';
COMMENT ON COLUMN rank_changes.position_b IS 'Position under measure_b: 1 = best; tied systems share the best position of their group.';
COMMENT ON COLUMN rank_changes.n_systems IS 'Systems scored by both measures (the ranked ones).';
COMMENT ON COLUMN rank_changes.fingerprint IS 'sha256 of the cells read (both measures).';
COMMENT ON COLUMN rank_changes.conventions IS 'JSON: orientation, how positions and scores are defined, systems left out.';
COMMENT ON COLUMN rank_changes.aggregate IS 'A system''s score over its inputs: mean (default) or median (--aggregate; Graham 2015''s median variants); a key of the latest view.';
