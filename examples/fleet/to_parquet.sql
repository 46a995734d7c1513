-- The tables as Parquet, beside the JSON Lines (what `btlens export --format parquet` does when the duckdb command
-- is installed). One table in one line:
--   duckdb -c "COPY (SELECT * FROM read_json_auto('facts/findings.jsonl')) TO 'facts/findings.parquet' (FORMAT parquet)"
-- All of them, from the export directory:  cd facts && duckdb -c ".read ../examples/fleet/to_parquet.sql"
COPY (SELECT * FROM read_json_auto('captures.jsonl',    sample_size = -1)) TO 'captures.parquet'    (FORMAT parquet);
COPY (SELECT * FROM read_json_auto('connections.jsonl', sample_size = -1)) TO 'connections.parquet' (FORMAT parquet);
COPY (SELECT * FROM read_json_auto('phases.jsonl',      sample_size = -1)) TO 'phases.parquet'      (FORMAT parquet);
COPY (SELECT * FROM read_json_auto('scans.jsonl',       sample_size = -1)) TO 'scans.parquet'       (FORMAT parquet);
COPY (SELECT * FROM read_json_auto('advertisers.jsonl', sample_size = -1)) TO 'advertisers.parquet' (FORMAT parquet);
COPY (SELECT * FROM read_json_auto('att_series.jsonl',  sample_size = -1)) TO 'att_series.parquet'  (FORMAT parquet);
COPY (SELECT * FROM read_json_auto('findings.jsonl',    sample_size = -1)) TO 'findings.parquet'    (FORMAT parquet);
COPY (SELECT * FROM read_json_auto('energy.jsonl',      sample_size = -1)) TO 'energy.parquet'      (FORMAT parquet);
