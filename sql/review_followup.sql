-- Review of recompress_online's follow-up NOTICE and advise's apply text
-- (issue 34, item 4): every statement listed must run as printed.
-- REINDEX INDEX CONCURRENTLY refuses an exclusion constraint's index, and
-- on an invalid index (a failed CREATE INDEX CONCURRENTLY) it fails again
-- and leaves one more invalid index ("_ccnew") behind: neither is listed
-- (REINDEX TABLE CONCURRENTLY skips both, with a warning).
\set VERBOSITY default
SET client_min_messages = notice;
CREATE SCHEMA "Fu;p ""s"".x";
SET search_path = "Fu;p ""s"".x", public;
CREATE TABLE "T a;b.""c""" (id int, body text, r int4range) USING compressx;
-- stored plain, then pglz (core's, the same bytes everywhere)
SELECT compressx.set_column_codec('"T a;b.""c"""', 'body', 'none');
INSERT INTO "T a;b.""c"""
SELECT g, repeat(md5(g::text), 60), int4range(g, g + 1) FROM generate_series(1, 400) g;
CREATE UNIQUE INDEX "Ix; ""q"".1" ON "T a;b.""c""" (id);
ALTER TABLE "T a;b.""c""" ADD CONSTRAINT "Ex cl" EXCLUDE USING gist (r WITH &&);
-- a failed CREATE INDEX CONCURRENTLY leaves an invalid index
CREATE UNIQUE INDEX CONCURRENTLY bad_cic ON "T a;b.""c""" ((id % 1));
SELECT c.relname, i.indisvalid, i.indisexclusion
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = '"T a;b.""c"""'::regclass ORDER BY c.relname COLLATE "C";
-- the NOTICE lists VACUUM and the valid, non-exclusion index only
CALL compressx.recompress_online('"Fu;p ""s"".x"."T a;b.""c"""', 'pglz');
-- advise's apply ends with the same statements
SELECT apply IS NOT NULL AS has_apply,
       apply LIKE '%REINDEX INDEX CONCURRENTLY "Fu;p ""s"".x"."Ix; ""q"".1";' AS lists_valid,
       apply NOT LIKE '%"Ex cl"%' AND apply NOT LIKE '%bad_cic%' AS skips_others
FROM compressx.advise('"Fu;p ""s"".x"."T a;b.""c"""')
WHERE recommended AND column_name = 'body';
-- what it lists runs as printed (here, the statements of the NOTICE)
VACUUM "Fu;p ""s"".x"."T a;b.""c""";
REINDEX INDEX CONCURRENTLY "Fu;p ""s"".x"."Ix; ""q"".1";
SELECT count(*) AS invalid_indexes
FROM pg_index WHERE indrelid = '"T a;b.""c"""'::regclass AND NOT indisvalid;
RESET search_path;
DROP SCHEMA "Fu;p ""s"".x" CASCADE;
