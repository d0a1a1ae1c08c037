-- Do metrics separate close systems? (Deutsch, Dror & Roth, NAACL 2022; `metaeval accuracy
-- --delta-bins Q`): pairwise accuracy and Kendall's tau within quantile bins of the system
-- pairs' human difference |dz|, bin 0 holding the closest pairs.
CREATE TABLE IF NOT EXISTS delta_bin_accuracy (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    metric            VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    bins              INTEGER NOT NULL,     -- Q: quantile bins of |dz| over the system pairs
    bin               INTEGER NOT NULL,     -- 0 .. Q-1, closest pairs first
    metric_tolerance  DOUBLE NOT NULL,
    human_tolerance   DOUBLE NOT NULL,
    system_inputs     VARCHAR NOT NULL,     -- all | judged: the inputs a system mean averages
    low               DOUBLE,               -- the bin's |dz| range: (low, high], [low, high] for bin 0
    high              DOUBLE,
    pairs             INTEGER NOT NULL,
    accuracy          DOUBLE,               -- share of the bin's pairs ordered as the human orders them
    kendall           DOUBLE,               -- tau-a over the bin's pairs
    n_systems         INTEGER NOT NULL,
    n_inputs          INTEGER NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL,
    subset       VARCHAR NOT NULL DEFAULT ''  -- the cells analysed: '' every cell, else attr=value [& ...] (--where)
);

CREATE OR REPLACE VIEW latest_delta_bin_accuracy AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, metric, human, bins, bin, metric_tolerance, human_tolerance
                                 ORDER BY result_id DESC) AS rn
    FROM delta_bin_accuracy)
WHERE rn = 1;
