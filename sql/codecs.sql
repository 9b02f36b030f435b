-- compressx.codecs(): the built-in codecs, their persisted ids and levels
SELECT name, id, min_level, max_level, default_level,
       library_version IS NOT NULL AS has_library_version
FROM compressx.codecs()
ORDER BY id;

-- ids are unique and names are what the other functions accept
SELECT count(*) = count(DISTINCT id) AS ids_unique FROM compressx.codecs();

-- everything but recompress_table lives in schema compressx
SELECT p.proname, n.nspname
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'compressx'
WHERE n.nspname <> 'compressx';

-- GUC prefix is reserved, sample size has a lower bound
SET compressx.no_such_setting = 1;
SET compressx.ratio_sample_rows = 0;
SHOW compressx.ratio_sample_rows;
RESET compressx.ratio_sample_rows;

-- the schema belongs to the extension
DROP EXTENSION compressx;
SELECT count(*) AS schemas_left FROM pg_namespace WHERE nspname = 'compressx';
-- a pre-existing schema of that name is not taken over
-- (no CONTEXT lines: PostgreSQL 18 adds one naming the script's line)
\set SHOW_CONTEXT never
CREATE SCHEMA compressx;
CREATE EXTENSION compressx;
\set SHOW_CONTEXT errors
DROP SCHEMA compressx;
CREATE EXTENSION compressx;
SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'compressx';
