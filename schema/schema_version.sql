-- The warehouse schema version recorded in the file (warehouse/connection.py): one query on the
-- table itself, whose absence (a catalog error) says the file is not a warehouse.
SELECT value FROM main.schema_info WHERE key = 'version'
