-- One row per analysis command: what was asked, with which seed, on which data, when.
CREATE SEQUENCE IF NOT EXISTS run_id_seq;
CREATE TABLE IF NOT EXISTS analysis_runs (
    run_id            INTEGER PRIMARY KEY DEFAULT nextval('run_id_seq'),
    command           VARCHAR NOT NULL,     -- correlate | ci | compare | ...
    parameters        JSON NOT NULL,        -- every option that shapes the results
    seed              BIGINT,               -- NULL for deterministic analyses
    started_at        TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    finished_at       TIMESTAMPTZ,          -- NULL while running or if interrupted
    status            VARCHAR NOT NULL DEFAULT 'running',  -- running | finished | interrupted | failed
    version           VARCHAR NOT NULL,     -- metaeval version
    data_fingerprint  VARCHAR NOT NULL,     -- sha256 over every analysed measure's cells
    tasks             INTEGER,              -- result keys in scope
    computed          INTEGER,              -- of which computed by this run (the rest were up to date)
    command_line      VARCHAR,
    -- the process running it, so that a run whose process was killed is marked interrupted
    -- (warehouse/owners.py); NULL for runs recorded before schema 3
    owner_pid         INTEGER,
    owner_host        VARCHAR,
    owner_start       VARCHAR               -- when that process started: a reused pid is another process
);
