-- Run by test/upgrade_check.sh in the upgraded database after the state
-- comparison: the upgraded cluster takes writes and rewrites.  Each check
-- prints "name: ok" or "name: FAILED".
\set ON_ERROR_STOP on
SET client_min_messages = warning;
\pset format unaligned
\pset tuples_only on
CREATE TEMP TABLE before AS
SELECT id, md5(p) AS p, md5(l) AS l, md5(z) AS z, md5(zb) AS zb FROM mixed;
CREATE TEMP TABLE dj_before AS SELECT id, md5(doc) AS doc FROM dj;
CREATE FUNCTION pg_temp.same_as_before() RETURNS boolean LANGUAGE sql AS $$
    SELECT NOT EXISTS (SELECT FROM before b LEFT JOIN mixed m USING (id)
                       WHERE m.id IS NULL OR (md5(m.p), md5(m.l), md5(m.z), md5(m.zb))
                             IS DISTINCT FROM (b.p, b.l, b.z, b.zb))
$$;

-- writes: insert, update (inline and out of line), delete
INSERT INTO mixed SELECT i, repeat('new ' || i, 30), repeat('new ' || i, 30), repeat('new ' || i, 30),
                         convert_to(repeat('new ' || i, 30), 'UTF8')
FROM generate_series(5001, 5100) i;
UPDATE mixed SET z = z || '!' WHERE id IN (10, 1510);
DELETE FROM mixed WHERE id IN (11, 1511);
DELETE FROM before WHERE id IN (10, 1510, 11, 1511);
SELECT 'writes keep the old rows: ' || CASE WHEN pg_temp.same_as_before() THEN 'ok' ELSE 'FAILED' END;
SELECT 'new rows read back: ' || CASE WHEN count(*) = 100 AND bool_and(z = repeat('new ' || id, 30)) THEN 'ok' ELSE 'FAILED' END
FROM mixed WHERE id > 5000;
SELECT 'updated rows read back: ' || CASE WHEN count(*) = 2 AND bool_and(right(z, 1) = '!') THEN 'ok' ELSE 'FAILED' END
FROM mixed WHERE id IN (10, 1510);
INSERT INTO dj SELECT id + 20000, doc FROM dj WHERE id <= 100;
SELECT 'dictionary values written: ' || CASE WHEN count(*) = 100 THEN 'ok' ELSE 'FAILED' END
FROM dj d JOIN dj o ON o.id = d.id - 20000 WHERE d.id > 20000 AND d.doc = o.doc;

-- recompress_table re-encodes a column
SELECT 'recompress_table: ' || CASE WHEN sum(values_rewritten) > 0 THEN 'ok' ELSE 'FAILED' END
FROM compressx.recompress_table('mixed', 'zstd', 3, '{l}');
SELECT 'recompress_table moved l to zstd: ' || CASE WHEN methods ? 'zstd' AND NOT methods ? 'lz4' THEN 'ok' ELSE 'FAILED ' || methods::text END
FROM compressx.column_stats('mixed') WHERE column_name = 'l';
SELECT 'recompress_table keeps the rows: ' || CASE WHEN pg_temp.same_as_before() THEN 'ok' ELSE 'FAILED' END;

-- VACUUM FULL re-encodes under a changed setting
SELECT compressx.set_column_codec('mixed', 'p', 'zstd', 1) \g /dev/null
VACUUM FULL mixed;
SELECT 'VACUUM FULL moved p to zstd: ' || CASE WHEN methods ? 'zstd' AND NOT methods ? 'pglz' THEN 'ok' ELSE 'FAILED ' || methods::text END
FROM compressx.column_stats('mixed') WHERE column_name = 'p';
SELECT 'VACUUM FULL keeps the rows: ' || CASE WHEN pg_temp.same_as_before() THEN 'ok' ELSE 'FAILED' END;
VACUUM FULL dj;
SELECT 'VACUUM FULL keeps dictionary rows: ' || CASE WHEN NOT EXISTS (
    SELECT FROM dj_before b LEFT JOIN dj USING (id) WHERE md5(dj.doc) IS DISTINCT FROM b.doc) THEN 'ok' ELSE 'FAILED' END;

-- a new dictionary gets a new id (the sequence came along)
SELECT max(dict_id) AS old_max FROM compressx.dictionaries \gset
SELECT 'new dictionary id: ' || CASE WHEN compressx.train_dictionary('dj', 'doc', 4096) > :old_max THEN 'ok' ELSE 'FAILED' END;
SELECT 'verify after writes: ' || CASE WHEN count(*) = 0 THEN 'ok' ELSE 'FAILED' END
FROM (SELECT * FROM compressx.verify('mixed') UNION ALL SELECT * FROM compressx.verify('dj')
      UNION ALL SELECT * FROM compressx.verify('events_a')) v;
-- settings made with ALTER DATABASE apply in new sessions
SELECT 'database settings apply: ' || CASE WHEN current_setting('compressx.default_level') = '5'
    AND current_setting('compressx.min_size') = '48B' THEN 'ok' ELSE 'FAILED' END;
