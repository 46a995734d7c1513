-- Views over the tables `btlens export --format jsonl -o facts/ …` wrote, for DuckDB. Run from the directory that
-- holds them:  cd facts && duckdb -init ../examples/fleet/load.sql   (then .read ../examples/fleet/top_rules_by_count.sql)
-- sample_size = -1 reads every row before settling a column's type (a column null in the first rows is not
-- taken for a string that it is not).
CREATE OR REPLACE VIEW captures    AS SELECT * FROM read_json_auto('captures.jsonl',    format = 'newline_delimited', sample_size = -1);
CREATE OR REPLACE VIEW connections AS SELECT * FROM read_json_auto('connections.jsonl', format = 'newline_delimited', sample_size = -1);
CREATE OR REPLACE VIEW phases      AS SELECT * FROM read_json_auto('phases.jsonl',      format = 'newline_delimited', sample_size = -1);
CREATE OR REPLACE VIEW scans       AS SELECT * FROM read_json_auto('scans.jsonl',       format = 'newline_delimited', sample_size = -1);
CREATE OR REPLACE VIEW advertisers AS SELECT * FROM read_json_auto('advertisers.jsonl', format = 'newline_delimited', sample_size = -1);
CREATE OR REPLACE VIEW att_series  AS SELECT * FROM read_json_auto('att_series.jsonl',  format = 'newline_delimited', sample_size = -1);
CREATE OR REPLACE VIEW findings    AS SELECT * FROM read_json_auto('findings.jsonl',    format = 'newline_delimited', sample_size = -1);
CREATE OR REPLACE VIEW energy      AS SELECT * FROM read_json_auto('energy.jsonl',      format = 'newline_delimited', sample_size = -1);
