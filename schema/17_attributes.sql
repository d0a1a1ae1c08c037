-- Attributes of inputs and of cells (issue 26): the source dataset, the validation/test split,
-- a system category, ... as `metaeval ingest attributes` reads them from a long table. Every
-- analysis over cells can be restricted to the cells whose attributes hold (`--where`) or run per
-- value of one (`--by`). Names, not internal ids (as the result tables): the ingest checks that
-- the system and input exist in the dataset.
CREATE TABLE IF NOT EXISTS attributes (
    dataset     VARCHAR NOT NULL,        -- datasets.name
    system      VARCHAR NOT NULL,        -- systems.name; '' = an input-level attribute (every system's cell)
    input       VARCHAR NOT NULL,        -- inputs.name
    attribute   VARCHAR NOT NULL,        -- e.g. source, split
    value       VARCHAR NOT NULL,        -- e.g. cnndm, test
    PRIMARY KEY (dataset, system, input, attribute)
);
