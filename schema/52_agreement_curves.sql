-- Inter-metric agreement in many bins (`metaeval agreement --bins N`; Bhandari et al. 2020,
-- appendices A and B, replicating Peyrard 2019): the disagreement over sampled summary pairs and
-- the F/N and F'/N ratios per bin, cumulative or of uniform width, on the metrics' scores or on
-- Uniform(0, 1) random scores (analyses/agreement_curves.py).
CREATE TABLE IF NOT EXISTS agreement_curves (
    result_id    BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id       INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset      VARCHAR NOT NULL,
    metric_a     VARCHAR NOT NULL,
    metric_b     VARCHAR NOT NULL,
    statistic    VARCHAR NOT NULL,
    protocol     VARCHAR NOT NULL,
    baseline     VARCHAR NOT NULL,
    consensus    VARCHAR NOT NULL,
    n_bins       INTEGER NOT NULL,
    n_pairs      BIGINT NOT NULL,
    seed         BIGINT NOT NULL,
    bin          INTEGER NOT NULL,
    lower        DOUBLE NOT NULL,
    upper        DOUBLE NOT NULL,
    count        BIGINT NOT NULL,
    value        DOUBLE,
    n_systems    INTEGER NOT NULL,
    n_inputs     INTEGER NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    conventions  JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_agreement_curves AS
SELECT * EXCLUDE (latest) FROM (
    SELECT *, max(result_id) OVER (PARTITION BY dataset, metric_a, metric_b, statistic, protocol, baseline,
                                                consensus, n_bins, n_pairs, seed, bin) AS latest
    FROM agreement_curves
    WHERE run_id IN (SELECT run_id FROM analysis_runs WHERE status = 'finished'))
WHERE result_id = latest;

COMMENT ON TABLE agreement_curves IS '`metaeval agreement --bins N`: per pair of metrics and bin, the disagreement over sampled summary pairs and the F/N and F''/N ratios (Bhandari et al. 2020, appendices A and B; Peyrard 2019), in cumulative or uniform-width bins, on the metrics'' scores or Uniform(0, 1) random scores.';
COMMENT ON VIEW latest_agreement_curves IS 'The latest agreement_curves row of each dataset, metric pair, statistic, protocol, baseline, consensus, number of bins and of pairs, seed and bin.';
COMMENT ON COLUMN agreement_curves.result_id IS 'Unique id of this result row (one sequence across the results tables; higher = written later).';
COMMENT ON COLUMN agreement_curves.run_id IS 'The analysis_runs row of the command that wrote this row.';
COMMENT ON COLUMN agreement_curves.dataset IS 'Dataset name (datasets.name).';
COMMENT ON COLUMN agreement_curves.metric_a IS 'The first metric; the disagreement bins pairs by its normalised score (Peyrard: by one metric), so both orders are stored; tau and F/N rows are stored once per unordered pair (metric_a < metric_b in the scope''s order).';
COMMENT ON COLUMN agreement_curves.metric_b IS 'The second metric.';
COMMENT ON COLUMN agreement_curves.statistic IS 'tau (mean over inputs of Kendall tau-b over the summaries whose consensus position is in the bin; 3 bins: the thirds of section 4.1) | disagreement (share of sampled pairs the two metrics order oppositely) | f_over_n (Eq. 1: better under both / better under either) | f_prime_over_n (Eq. 2: worse under both / worse under either).';
COMMENT ON COLUMN agreement_curves.protocol IS 'cumulative: bin k holds v >= k/n (Peyrard) | uniform: k/n <= v < (k+1)/n, the last bin also v = 1 (Bhandari et al.).';
COMMENT ON COLUMN agreement_curves.baseline IS 'none: the metrics'' scores | random: every complete cell of every metric replaced by an independent Uniform(0, 1) draw of seed.';
COMMENT ON COLUMN agreement_curves.consensus IS 'JSON list of the metrics of the scope: their complete summaries take part, their mean normalised score places a summary for F/N.';
COMMENT ON COLUMN agreement_curves.n_bins IS 'Number of bins n (Peyrard: 15).';
COMMENT ON COLUMN agreement_curves.n_pairs IS 'Summary pairs sampled for the disagreement (Peyrard: 100000); F/N uses every summary.';
COMMENT ON COLUMN agreement_curves.seed IS 'Seed of the pair sampling and of the random scores.';
COMMENT ON COLUMN agreement_curves.bin IS 'Bin index k, 0 .. n_bins - 1, from the bottom of the range.';
COMMENT ON COLUMN agreement_curves.lower IS 'Lower edge k/n of the bin (v >= lower).';
COMMENT ON COLUMN agreement_curves.upper IS 'Upper edge of the bin: (k+1)/n for uniform bins (exclusive but for the last), 1 for cumulative bins.';
COMMENT ON COLUMN agreement_curves.count IS 'tau: inputs whose tau is defined in the bin; disagreement: sampled pairs in the bin; f_over_n / f_prime_over_n: summaries in the bin whose ratio is defined.';
COMMENT ON COLUMN agreement_curves.value IS 'The statistic over the bin (tau in [-1, 1], the others shares in [0, 1]); NULL when count is 0.';
COMMENT ON COLUMN agreement_curves.n_systems IS 'Systems of the dataset read.';
COMMENT ON COLUMN agreement_curves.n_inputs IS 'Inputs of the dataset read.';
COMMENT ON COLUMN agreement_curves.fingerprint IS 'sha256 of the cells of the scope''s metrics read.';
COMMENT ON COLUMN agreement_curves.conventions IS 'JSON: the definitions of the bins, statistics and baseline.';
