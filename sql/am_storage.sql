-- Storage rules of the compressx access method: its TOAST relations,
-- columns of PLAIN, EXTERNAL and MAIN storage, and whose settings a
-- table rewrite applies
SET compressx.default_codec = zstd;
SET compressx.min_size = 64;

-- the TOAST relation of a compressx table is a plain heap, also after a
-- rewrite and after SET ACCESS METHOD
CREATE TABLE st (id integer PRIMARY KEY, body text) USING compressx;
CREATE VIEW st_toast_am AS
SELECT a.amname FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid
JOIN pg_am a ON a.oid = t.relam WHERE c.relname = 'st';
SELECT * FROM st_toast_am;
INSERT INTO st SELECT i, (SELECT string_agg(md5((i * 1000 + k)::text), ' ')
                          FROM generate_series(1, 100) k) FROM generate_series(1, 20) i;
VACUUM FULL st;
SELECT * FROM st_toast_am;
ALTER TABLE st SET ACCESS METHOD heap;
ALTER TABLE st SET ACCESS METHOD compressx;
SELECT * FROM st_toast_am;
SELECT count(*) AS damaged FROM compressx.verify('st');

-- PLAIN storage (oidvector, int2vector): never compressed, whatever the
-- codec, since code reading such types never decompresses them; EXTERNAL:
-- never compressed; MAIN: compressed
CREATE TABLE sp (id integer, ov oidvector, iv int2vector, ext text, main text) USING compressx;
ALTER TABLE sp ALTER COLUMN ext SET STORAGE EXTERNAL, ALTER COLUMN main SET STORAGE MAIN;
SELECT compressx.set_column_codec('sp', 'ov', 'lz4', min_size => 0);
SELECT compressx.set_column_codec('sp', 'iv', 'pglz', min_size => 0);
SELECT compressx.set_column_codec('sp', 'ext', 'zstd', min_size => 0);
INSERT INTO sp
SELECT i, array_to_string(array_fill(23::oid, ARRAY[300]), ' ')::oidvector,
       array_to_string(array_fill(7, ARRAY[300]), ' ')::int2vector,
       repeat('external storage ', 50), repeat('main storage ', 50)
FROM generate_series(1, 3) i;
SELECT column_name, methods FROM compressx.column_stats('sp') ORDER BY column_name;
-- functions that read the values without detoasting them get them right
SELECT id, oidvectortypes(ov) = (SELECT string_agg('integer', ', ') FROM generate_series(1, 300)) AS ov_ok,
       array_length(iv::int2[], 1) AS iv_len, ov::text = repeat('23 ', 299) || '23' AS ov_text_ok
FROM sp ORDER BY id;
UPDATE sp SET ov = (array_to_string(array_fill(25::oid, ARRAY[400]), ' '))::oidvector WHERE id = 1;
SELECT id, oidvectortypes(ov) LIKE 'text, text%' AS ov_ok FROM sp WHERE id = 1;
SELECT count(*) AS damaged FROM compressx.verify('sp');

-- A rewrite applies the settings of the table it rebuilds, named by OID:
-- another table named "pg_temp_<oid>" does not borrow them.
CREATE ROLE cx_storage_owner;
CREATE ROLE cx_storage_other;
GRANT CREATE ON SCHEMA public TO cx_storage_owner, cx_storage_other;
SET ROLE cx_storage_owner;
CREATE TABLE victim (id integer, body text) USING compressx;
SELECT compressx.set_column_codec('victim', 'body', 'lz4');
INSERT INTO victim SELECT i, repeat('victim ' || i, 40) FROM generate_series(1, 5) i;
GRANT ALL ON victim TO cx_storage_other;
SELECT 'pg_temp_' || 'victim'::regclass::oid AS lookalike \gset
RESET ROLE;
-- a table of that name made by anybody, outside a rewrite: defaults (zstd)
SET ROLE cx_storage_other;
CREATE TABLE :"lookalike" (id integer, body text) USING compressx;
INSERT INTO :"lookalike" SELECT i, repeat('other ' || i, 40) FROM generate_series(1, 5) i;
SELECT methods FROM compressx.column_stats(:'lookalike') WHERE column_name = 'body';
DROP TABLE :"lookalike";
-- ... even in a transaction holding AccessExclusiveLock on the victim
BEGIN;
LOCK TABLE victim IN ACCESS EXCLUSIVE MODE;
CREATE TABLE :"lookalike" (id integer, body text) USING compressx;
INSERT INTO :"lookalike" SELECT i, repeat('other ' || i, 40) FROM generate_series(1, 5) i;
SELECT methods FROM compressx.column_stats(:'lookalike') WHERE column_name = 'body';
ROLLBACK;
RESET ROLE;
-- the real rewrites apply the victim's settings: SET ACCESS METHOD (through
-- heap and back), ALTER COLUMN TYPE, VACUUM FULL, CLUSTER
SET ROLE cx_storage_owner;
ALTER TABLE victim SET ACCESS METHOD heap;
ALTER TABLE victim SET ACCESS METHOD compressx;
SELECT methods FROM compressx.column_stats('victim') WHERE column_name = 'body';
ALTER TABLE victim ALTER COLUMN id TYPE bigint;
SELECT methods FROM compressx.column_stats('victim') WHERE column_name = 'body';
SELECT compressx.set_column_codec('victim', 'body', 'pglz');
VACUUM FULL victim;
SELECT methods FROM compressx.column_stats('victim') WHERE column_name = 'body';
CREATE INDEX victim_id ON victim (id);
SELECT compressx.set_column_codec('victim', 'body', 'zstd');
CLUSTER victim USING victim_id;
SELECT methods FROM compressx.column_stats('victim') WHERE column_name = 'body';
SELECT count(*) AS rows, count(*) FILTER (WHERE body = repeat('victim ' || id, 40)) AS intact FROM victim;
DROP TABLE victim;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM cx_storage_owner, cx_storage_other;
DROP ROLE cx_storage_owner;
DROP ROLE cx_storage_other;

-- a setting naming another table's dictionary is not used: new values are
-- compressed without it (the other table may drop it at any time)
CREATE TABLE dict_src (id integer, doc text) USING compressx;
INSERT INTO dict_src SELECT i, json_build_object('id', i, 'kind', 'item', 'note', 'number ' || i)::text
FROM generate_series(1, 2000) i;
SELECT compressx.train_dictionary('dict_src', 'doc', 2048) AS src_dict \gset
CREATE TABLE dict_thief (id integer, doc text) USING compressx;
SELECT compressx.set_column_codec('dict_thief', 'doc', 'zstd', min_size => 0);
UPDATE compressx.column_settings SET dict_id = :src_dict WHERE relid = 'dict_thief'::regclass;
\set VERBOSITY terse
INSERT INTO dict_thief SELECT id, doc FROM dict_src WHERE id <= 3;
\set VERBOSITY default
DROP TABLE dict_src;
SELECT count(*) AS readable FROM dict_thief WHERE doc LIKE '{"id" : %';
DROP TABLE dict_thief;

-- a column's own COMPRESSION (CREATE TABLE, ALTER TABLE .. SET COMPRESSION)
-- is its codec unless compressx.set_column_codec says otherwise
CREATE TABLE cm (id integer, a text COMPRESSION lz4, b text, c text COMPRESSION lz4) USING compressx;
ALTER TABLE cm ALTER COLUMN b SET COMPRESSION pglz;
SELECT compressx.set_column_codec('cm', 'c', 'zstd', 5);
INSERT INTO cm SELECT i, repeat('column compression ' || i, 20), repeat('column compression ' || i, 20),
                      repeat('column compression ' || i, 20) FROM generate_series(1, 4) i;
SELECT column_name, methods FROM compressx.column_stats('cm') ORDER BY 1;
SELECT column_name, codec, level, explicit FROM compressx.column_codec_settings('cm') ORDER BY 1;
SELECT column_name, configured_compression FROM compressx.column_ratios WHERE table_name = 'cm' ORDER BY 1;
-- one value as stored: pg_column_compression() and pg_column_size() see
-- the decoded value of a compressx table; compressx.value_storage() does not
SELECT pg_column_compression(c) AS core_says, pg_column_size(c) = octet_length(c) + 4 AS core_size_is_decoded,
       v.method, v.stored_bytes < v.raw_bytes AS stored_smaller, v.raw_bytes = octet_length(c) AS raw_ok, v.external
FROM cm, compressx.value_storage('cm', cm.ctid, 'c') v WHERE id = 2;
SELECT * FROM compressx.value_storage('cm', '(0,200)', 'c');
SELECT * FROM compressx.value_storage('cm', '(4000,1)', 'c');
SELECT * FROM compressx.value_storage('cm', '(0,1)', 'nope');
SELECT * FROM compressx.value_storage('cm', '(0,1)', 'id');
-- nothing that cannot hold compressx values has settings to show
CREATE VIEW cm_view AS SELECT * FROM cm;
SELECT * FROM compressx.column_codec_settings('cm_view');
SELECT * FROM compressx.column_codec_settings('pg_class');
DROP VIEW cm_view;
DROP TABLE cm;

-- a partition created after set_column_codec on its parent follows the
-- parent; on an inheritance parent the setting reaches its children
CREATE TABLE pt (k integer, body text) PARTITION BY RANGE (k);
CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (0) TO (10) USING compressx;
SELECT compressx.set_column_codec('pt', 'body', 'lz4');
CREATE TABLE pt_2 PARTITION OF pt FOR VALUES FROM (10) TO (20) USING compressx;
CREATE TABLE pt_3 PARTITION OF pt FOR VALUES FROM (20) TO (30) PARTITION BY RANGE (k);
CREATE TABLE pt_3a PARTITION OF pt_3 FOR VALUES FROM (20) TO (30) USING compressx;
INSERT INTO pt SELECT i, repeat('partitioned ' || i, 30) FROM generate_series(0, 29) i;
SELECT c.relname, s.codec, s.explicit FROM pg_class c, compressx.column_codec_settings(c.oid) s
WHERE c.relname IN ('pt_1', 'pt_2', 'pt_3a') AND s.column_name = 'body' ORDER BY 1;
SELECT methods FROM compressx.column_stats('pt') WHERE column_name = 'body';
-- the parent's later change reaches the new partitions too
SELECT compressx.set_column_codec('pt', 'body', 'pglz');
INSERT INTO pt SELECT i, repeat('partitioned ' || i, 30) FROM generate_series(0, 29) i;
SELECT methods FROM compressx.column_stats('pt') WHERE column_name = 'body';
DROP TABLE pt;
CREATE TABLE inh (id integer, body text) USING compressx;
CREATE TABLE inh_child (extra integer) INHERITS (inh) USING compressx;
SELECT compressx.set_column_codec('inh', 'body', 'lz4');
INSERT INTO inh_child SELECT i, repeat('inherited ' || i, 30), i FROM generate_series(1, 5) i;
SELECT methods FROM compressx.column_stats('inh_child') WHERE column_name = 'body';
SELECT compressx.reset_column_codec('inh');
SELECT count(*) AS settings_left FROM compressx.column_settings WHERE relid IN ('inh'::regclass, 'inh_child'::regclass);
DROP TABLE inh CASCADE;

-- another codec retires a column's dictionary: back on zstd, new values
-- do not use it again until a new one is trained
CREATE TABLE retire (id integer, doc text) USING compressx;
INSERT INTO retire SELECT i, json_build_object('id', i, 'kind', 'item', 'note', 'number ' || i)::text
FROM generate_series(1, 2000) i;
SELECT compressx.train_dictionary('retire', 'doc', 2048) > 0 AS trained;
SELECT dictionary IS NOT NULL AS has_dictionary FROM compressx.column_codec_settings('retire') WHERE column_name = 'doc';
SELECT compressx.set_column_codec('retire', 'doc', 'lz4');
SELECT compressx.set_column_codec('retire', 'doc', 'zstd');
SELECT dictionary IS NOT NULL AS has_dictionary FROM compressx.column_codec_settings('retire') WHERE column_name = 'doc';
DROP TABLE retire;

-- DELETE frees what it reads per row: the executor's memory does not grow
-- with the number of rows deleted
CREATE TABLE dl (id integer, body text) USING compressx;
INSERT INTO dl SELECT i, repeat('x', 100) || i FROM generate_series(1, 20000) i;
WITH d AS (DELETE FROM dl RETURNING
           (SELECT sum(used_bytes) FROM pg_backend_memory_contexts WHERE name = 'ExecutorState') AS m)
SELECT count(*) AS deleted, max(m) - min(m) < 100000 AS no_growth FROM d;
DROP TABLE dl;

DROP VIEW st_toast_am;
DROP TABLE st, sp;
