-- LLM judges against the human preference (`metaeval judges`): one row per automatic judge
-- with its statistics and their percentile bootstrap intervals over items, the judge-vs-judge
-- tests, and the Bradley-Terry strengths of the systems per judge and for the humans. Every
-- row is tied to its run, with the fingerprint of the preferences it read. An item (input, pair
-- of systems) is in a --where subset when the cells of both its systems for its input satisfy it.

CREATE TABLE IF NOT EXISTS judge_statistics (
    result_id                   BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id                      INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset                     VARCHAR NOT NULL,
    human                       VARCHAR NOT NULL,  -- the human judges whose majority is the reference, comma-joined
    subset                      VARCHAR NOT NULL DEFAULT '',  -- the items' --where/--by conditions ('' = all items)
    judge                       VARCHAR NOT NULL,  -- an automatic judge
    n                           INTEGER NOT NULL,  -- items with a human majority the judge judged (either order)
    tied_majority               INTEGER NOT NULL,  -- items left out: their human majority is tied
    n_ab                        INTEGER NOT NULL,  -- of the n, judged in order ab / ba / both
    n_ba                        INTEGER NOT NULL,
    n_both                      INTEGER NOT NULL,
    accuracy_ab                 DOUBLE, accuracy_ab_lower DOUBLE, accuracy_ab_upper DOUBLE,
    accuracy_ba                 DOUBLE, accuracy_ba_lower DOUBLE, accuracy_ba_upper DOUBLE,
    accuracy                    DOUBLE, accuracy_lower DOUBLE, accuracy_upper DOUBLE,
    both_correct                DOUBLE, both_correct_lower DOUBLE, both_correct_upper DOUBLE,
    position_consistency        DOUBLE, position_consistency_lower DOUBLE, position_consistency_upper DOUBLE,
    first_position_rate         DOUBLE, first_position_rate_lower DOUBLE, first_position_rate_upper DOUBLE,
    tie_rate                    DOUBLE, tie_rate_lower DOUBLE, tie_rate_upper DOUBLE,
    kappa                       DOUBLE, kappa_lower DOUBLE, kappa_upper DOUBLE,   -- Cohen's kappa over a/b/tie
    kendall                     DOUBLE, kendall_lower DOUBLE, kendall_upper DOUBLE, -- tau-b of its BT ranking vs the humans'
    rank                        INTEGER,           -- by accuracy, 1 = best; NULL when undefined
    cluster                     INTEGER,           -- significance cluster (1 = best); NULL when the tests do not decide it
    is_winner                   BOOLEAN,           -- no other judge significantly more accurate
    alpha                       DOUBLE NOT NULL,
    k                           INTEGER NOT NULL,  -- bootstrap resamples of items
    seed                        BIGINT NOT NULL,
    test                        VARCHAR NOT NULL,  -- the judge-vs-judge test the clusters rest on
    correction                  VARCHAR NOT NULL,
    fingerprint                 VARCHAR NOT NULL,
    conventions                 JSON NOT NULL,
    stability                   DOUBLE, stability_lower DOUBLE, stability_upper DOUBLE,  -- agreement of its runs
    runs                        INTEGER            -- the most runs of a cell (item and order)
);

CREATE TABLE IF NOT EXISTS judge_tests (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    subset            VARCHAR NOT NULL DEFAULT '',   -- '' = all items
    judge_a           VARCHAR NOT NULL,
    judge_b           VARCHAR NOT NULL,
    test              VARCHAR NOT NULL,    -- permutation | mcnemar
    n                 INTEGER NOT NULL,    -- items with a human majority both judged in a common order
    verdicts          INTEGER NOT NULL,    -- (item, order) verdicts both gave
    delta             DOUBLE,              -- accuracy(judge_a) - accuracy(judge_b) on those; NULL: nothing common
    discordant_a      INTEGER NOT NULL,    -- verdicts judge_a got right and judge_b wrong (McNemar's b)
    discordant_b      INTEGER NOT NULL,    -- the reverse (McNemar's c)
    pvalue            DOUBLE,
    pvalue_corrected  DOUBLE,
    correction        VARCHAR NOT NULL,
    alpha             DOUBLE NOT NULL,
    significant       BOOLEAN,             -- corrected p <= alpha and the family can resolve
    resolvable        BOOLEAN NOT NULL,
    k                 INTEGER,             -- permutations (NULL for the exact McNemar test)
    seed              BIGINT NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL
);

CREATE TABLE IF NOT EXISTS preference_rankings (
    result_id         BIGINT PRIMARY KEY DEFAULT nextval('result_id_seq'),
    run_id            INTEGER NOT NULL REFERENCES analysis_runs (run_id),
    dataset           VARCHAR NOT NULL,
    human             VARCHAR NOT NULL,
    subset            VARCHAR NOT NULL DEFAULT '',   -- '' = all items
    judge             VARCHAR NOT NULL,    -- an automatic judge, or the human judges (judge = human)
    kind              VARCHAR NOT NULL,    -- automatic | human
    system            VARCHAR NOT NULL,
    strength          DOUBLE,              -- Bradley-Terry log-strength, mean 0 over the systems; NULL: never compared
    lower             DOUBLE,              -- percentile bootstrap interval over items
    upper             DOUBLE,
    rank              INTEGER,             -- 1 = strongest; NULL: never compared (the prior's strength ranks nothing)
    comparisons       DOUBLE NOT NULL,     -- verdicts involving the system
    ridge             DOUBLE NOT NULL,     -- the penalty (ridge / 2) sum strength^2
    alpha             DOUBLE NOT NULL,
    k                 INTEGER NOT NULL,
    seed              BIGINT NOT NULL,
    fingerprint       VARCHAR NOT NULL,
    conventions       JSON NOT NULL
);

CREATE OR REPLACE VIEW latest_judge_statistics AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, human, subset, judge ORDER BY result_id DESC) AS rn
    FROM judge_statistics)
WHERE rn = 1;

CREATE OR REPLACE VIEW latest_judge_tests AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, human, subset, judge_a, judge_b, test ORDER BY result_id DESC) AS rn
    FROM judge_tests)
WHERE rn = 1;

CREATE OR REPLACE VIEW latest_preference_rankings AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, human, subset, judge, system ORDER BY result_id DESC) AS rn
    FROM preference_rankings)
WHERE rn = 1;
