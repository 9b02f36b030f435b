-- zstd dictionaries: compressx.train_dictionary() and values compressed with one
CREATE TABLE dj (id integer PRIMARY KEY, doc text, n integer) USING compressx;
SELECT compressx.set_column_codec('dj', 'doc', 'zstd', 3);
INSERT INTO dj
SELECT i, json_build_object('id', i, 'name', 'item-' || i,
                            'kind', (ARRAY['book', 'disk', 'tool', 'food'])[1 + i % 4],
                            'price', (i * 37) % 1000 / 10.0,
                            'tags', json_build_array('alpha', 'beta', CASE WHEN i % 3 = 0 THEN 'gamma' ELSE 'delta' END),
                            'note', 'stock item number ' || i || ' of the warehouse catalogue, shelf ' || (i % 50))::text,
       0
FROM generate_series(1, 3000) i;
CREATE TABLE dj_copy AS SELECT * FROM dj;   -- plain heap copy, for comparison
SELECT stored_bytes AS bytes_before FROM compressx.column_stats('dj') WHERE column_name = 'doc' \gset

-- training stores the dictionary and makes it the column's
SELECT compressx.train_dictionary('dj', 'doc', 4096) AS d1 \gset
SELECT relid, attname, octet_length(dict) BETWEEN 1024 AND 4096 AS size_ok, sample_values
FROM compressx.dictionaries WHERE dict_id = :d1;
SELECT column_name, codec, level, explicit, dictionary = :d1 AS has_dictionary
FROM compressx.column_codec_settings('dj') ORDER BY column_name;
SELECT table_name, column_name, dictionary = :d1 AS has_dictionary
FROM compressx.column_codecs WHERE table_name = 'dj' AND column_name = 'doc';

-- existing values keep theirs until a rewrite; VACUUM FULL applies it and
-- the column shrinks (small values gain most from a dictionary)
SELECT stored_bytes = :bytes_before AS unchanged_until_rewrite
FROM compressx.column_stats('dj') WHERE column_name = 'doc';
VACUUM FULL dj;
SELECT stored_bytes < 0.6 * :bytes_before AS shrank_by_40_percent, methods
FROM compressx.column_stats('dj') WHERE column_name = 'doc';
SELECT count(*) AS differing FROM dj JOIN dj_copy c USING (id) WHERE dj.doc IS DISTINCT FROM c.doc;
-- new rows, updates and reads of single rows use it
INSERT INTO dj SELECT id + 10000, doc, n FROM dj_copy WHERE id <= 100;
UPDATE dj SET doc = doc || ' ' WHERE id % 100 = 7;
SELECT count(*) AS differing FROM dj JOIN dj_copy c ON c.id = dj.id % 10000
WHERE dj.doc IS DISTINCT FROM c.doc || CASE WHEN dj.id % 100 = 7 THEN ' ' ELSE '' END;
SELECT doc = (SELECT doc FROM dj_copy WHERE id = 42) AS same FROM dj WHERE id = 42;

-- a second dictionary: values of the first one stay readable; recompress_table
-- re-encodes every value of a column with a dictionary
SELECT compressx.train_dictionary('dj', 'doc', 4096) AS d2 \gset
SELECT :d2 > :d1 AS new_id;
INSERT INTO dj SELECT id + 20000, doc, n FROM dj_copy WHERE id <= 100;
SELECT count(*) AS differing FROM dj JOIN dj_copy c ON c.id = dj.id % 10000
WHERE dj.doc IS DISTINCT FROM c.doc || CASE WHEN dj.id % 100 = 7 AND dj.id < 20000 THEN ' ' ELSE '' END;
SELECT column_name, values_rewritten FROM recompress_table('dj', 'zstd', columns => '{doc}');
SELECT count(*) AS differing FROM dj JOIN dj_copy c ON c.id = dj.id % 10000
WHERE dj.doc IS DISTINCT FROM c.doc || CASE WHEN dj.id % 100 = 7 AND dj.id < 20000 THEN ' ' ELSE '' END;
SELECT count(*) AS damaged FROM compressx.verify('dj');
-- parallel workers load the dictionary themselves
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) AS differing FROM dj JOIN dj_copy c ON c.id = dj.id % 10000
WHERE md5(dj.doc) IS DISTINCT FROM md5(c.doc || CASE WHEN dj.id % 100 = 7 AND dj.id < 20000 THEN ' ' ELSE '' END);
-- force_parallel_mode, called debug_parallel_query since PostgreSQL 16
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS forced;
SELECT sum(length(doc)) = (SELECT sum(length(doc)) FROM dj_copy) + 2 * (SELECT sum(length(doc)) FROM dj_copy WHERE id <= 100) + 31
    AS parallel_read_ok FROM dj;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'off', false) AS forced;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- resetting the column stops using a dictionary
SELECT compressx.reset_column_codec('dj', 'doc');
SELECT column_name, dictionary FROM compressx.column_codec_settings('dj') WHERE column_name = 'doc';
INSERT INTO dj SELECT id + 30000, doc, n FROM dj_copy WHERE id <= 10;
SELECT count(*) FROM dj WHERE id > 30000 AND doc = (SELECT doc FROM dj_copy c WHERE c.id = dj.id - 30000);

-- training reads only the first 128 kB of each value
CREATE TABLE dj_big (id integer, doc text) USING compressx;
INSERT INTO dj_big
SELECT i, (SELECT string_agg('{"k": ' || (i * k) % 977 || ', "word": "w' || k % 31 || '"}', ',')
           FROM generate_series(1, 12000) k)
FROM generate_series(1, 20) i;
SELECT min(length(doc)) > 131072 AS values_larger_than_128kb FROM dj_big;
SELECT compressx.train_dictionary('dj_big', 'doc', 4096) > 0 AS trained;
SELECT sample_values, sample_bytes FROM compressx.dictionaries WHERE relid = 'dj_big'::regclass;
SELECT count(*) FROM dj_big WHERE length(doc) > 131072;
DROP TABLE dj_big;

-- bad input
\set VERBOSITY terse
SELECT compressx.train_dictionary('dj_copy', 'doc');             -- heap
SELECT compressx.train_dictionary('dj', 'nope');                 -- no such column
SELECT compressx.train_dictionary('dj', 'n');                    -- not variable-length
SELECT compressx.train_dictionary('dj', 'doc', 100);             -- dict_size
SELECT compressx.train_dictionary('dj', 'doc', 4096, 0);         -- sample_rows
SELECT compressx.train_dictionary('dj', NULL);
SELECT compressx.set_column_codec('dj', 'doc', 'pglz');
SELECT compressx.train_dictionary('dj', 'doc');                  -- pglz column
CREATE VIEW dj_view AS SELECT * FROM dj;
SELECT compressx.train_dictionary('dj_view', 'doc');
CREATE TABLE dj_parted (id int, doc text) PARTITION BY RANGE (id);
SELECT compressx.train_dictionary('dj_parted', 'doc');
CREATE TEMP TABLE dj_temp (doc text) USING compressx;
SELECT compressx.train_dictionary('dj_temp', 'doc');
\set VERBOSITY default

-- too few values to train on: the error names the table and the column,
-- and says how many values training needs
CREATE TABLE dj_empty (doc text) USING compressx;
SELECT compressx.train_dictionary('dj_empty', 'doc');            -- no rows
INSERT INTO dj_empty SELECT NULL FROM generate_series(1, 100);
SELECT compressx.train_dictionary('dj_empty', 'doc');            -- only NULLs
INSERT INTO dj_empty SELECT repeat('few values ', i) FROM generate_series(1, 6) i;
INSERT INTO dj_empty VALUES ('');
SELECT compressx.train_dictionary('dj_empty', 'doc');            -- six values and an empty one
-- values shorter than 8 bytes are left out: libzstd 1.5.4 crashed the
-- server (SIGSEGV, SIGFPE) training on a few 1-byte values among longer ones
CREATE TABLE dj_tiny (doc text) USING compressx;
INSERT INTO dj_tiny SELECT 'x' FROM generate_series(1, 6);
INSERT INTO dj_tiny SELECT repeat('abcdefghij', 10);
SELECT compressx.set_column_codec('dj_tiny', 'doc', 'zstd');
SELECT compressx.train_dictionary('dj_tiny', 'doc');
DROP TABLE dj_tiny;

-- a value whose dictionary is gone is reported as corrupt, naming the column
CREATE TABLE dj2 (id integer, doc text) USING compressx;
INSERT INTO dj2 SELECT id, doc FROM dj_copy;
SELECT compressx.train_dictionary('dj2', 'doc', 4096) AS d3 \gset
INSERT INTO dj2 SELECT id + 10000, doc FROM dj_copy WHERE id <= 5;
DELETE FROM compressx.dictionaries WHERE dict_id = :d3;
\c
\set VERBOSITY terse
SELECT count(*) FROM dj2 WHERE id < 10000 AND length(doc) > 0;   -- no dictionary: readable
SELECT length(doc) FROM dj2 WHERE id = 10001;
\set VERBOSITY default
SELECT column_name, count(*) FROM compressx.verify('dj2') GROUP BY 1;
-- new values are compressed without it, with one warning (pg_restore -j may
-- load a table before the dictionaries)
INSERT INTO dj2 VALUES (1, repeat('x', 200));
INSERT INTO dj2 VALUES (2, repeat('y', 200));
SELECT length(doc) FROM dj2 WHERE id IN (1, 2) AND doc IN (repeat('x', 200), repeat('y', 200));

-- a damaged dictionary (zstd's magic number, then nothing it can parse) is
-- reported as such
CREATE TABLE dj3 (id integer, doc text) USING compressx;
INSERT INTO dj3 SELECT id, doc FROM dj_copy;
SELECT compressx.train_dictionary('dj3', 'doc', 4096) AS d4 \gset
INSERT INTO dj3 SELECT id + 10000, doc FROM dj_copy WHERE id <= 5;
UPDATE compressx.dictionaries SET dict = '\x37a430ec00000000ffff'::bytea WHERE dict_id = :d4;
\c
\set VERBOSITY terse
SELECT length(doc) FROM dj3 WHERE id = 10001;
\set VERBOSITY default
DROP TABLE dj3;

-- lz4 with a dictionary: compressx's own format (version 2), checksummed;
-- train_dictionary serves lz4 columns too
CREATE TABLE dl (id integer PRIMARY KEY, doc text, n integer) USING compressx;
SELECT compressx.set_column_codec('dl', 'doc', 'lz4');
INSERT INTO dl SELECT id, doc, 0 FROM dj_copy;
SELECT stored_bytes AS lz4_bytes, methods FROM compressx.column_stats('dl') WHERE column_name = 'doc' \gset
SELECT :'methods' AS methods_before;
SELECT compressx.train_dictionary('dl', 'doc', 8192) AS d5 \gset
SELECT column_name, codec, level, dictionary = :d5 AS has_dictionary
FROM compressx.column_codec_settings('dl') WHERE column_name = 'doc';
VACUUM FULL dl;
SELECT stored_bytes < 0.75 * :lz4_bytes AS shrank_by_25_percent, methods
FROM compressx.column_stats('dl') WHERE column_name = 'doc';
SELECT count(*) AS differing FROM dl JOIN dj_copy c USING (id) WHERE dl.doc IS DISTINCT FROM c.doc;
-- values too large for the row go out of line (a reference of version 2)
CREATE TABLE dl_big AS
SELECT 100000 + id AS id, doc || (SELECT string_agg(md5(k::text || id), '') FROM generate_series(1, 200) k) AS doc
FROM dj_copy WHERE id <= 20;
INSERT INTO dl SELECT id, doc, 0 FROM dl_big;
SELECT method, external FROM compressx.value_storage('dl', (SELECT ctid FROM dl WHERE id = 100001), 'doc');
SELECT count(*) AS differing FROM dl JOIN dl_big b USING (id) WHERE dl.doc IS DISTINCT FROM b.doc;
-- an UPDATE of another column keeps the stored value; one of the column re-encodes it
UPDATE dl SET n = n + 1 WHERE id <= 100 OR id > 100000;
UPDATE dl SET doc = doc || ' ' WHERE id % 100 = 7 AND id < 100000;
SELECT count(*) AS differing FROM dl JOIN dj_copy c ON c.id = dl.id % 100000
LEFT JOIN dl_big b ON b.id = dl.id
WHERE dl.doc IS DISTINCT FROM CASE WHEN dl.id > 100000 THEN b.doc
                                   WHEN dl.id % 100 = 7 THEN c.doc || ' ' ELSE c.doc END;
SELECT count(*) AS damaged FROM compressx.verify('dl');
-- another codec retires the dictionary, and lz4 again does not revive it
SELECT compressx.set_column_codec('dl', 'doc', 'lz4', 9);
SELECT column_name, codec, level, dictionary FROM compressx.column_codec_settings('dl') WHERE column_name = 'doc';
SELECT column_name, values_rewritten > 0 AS rewritten FROM recompress_table('dl', 'lz4', columns => '{doc}');
SELECT methods FROM compressx.column_stats('dl') WHERE column_name = 'doc';
SELECT count(*) AS differing FROM dl JOIN dj_copy c ON c.id = dl.id % 100000
LEFT JOIN dl_big b ON b.id = dl.id
WHERE dl.doc IS DISTINCT FROM CASE WHEN dl.id > 100000 THEN b.doc
                                   WHEN dl.id % 100 = 7 THEN c.doc || ' ' ELSE c.doc END;
DROP TABLE dl, dl_big;
-- an lz4 column whose dictionary is gone compresses without it, saying so
CREATE TABLE dlm (id integer, doc text) USING compressx;
SELECT compressx.set_column_codec('dlm', 'doc', 'lz4');
INSERT INTO dlm SELECT id, doc FROM dj_copy;
SELECT compressx.train_dictionary('dlm', 'doc', 4096) AS d6 \gset
DELETE FROM compressx.dictionaries WHERE dict_id = :d6;
\c
INSERT INTO dlm VALUES (0, repeat('z', 300));
SELECT method, length(doc) FROM dlm, compressx.value_storage('dlm', dlm.ctid, 'doc') WHERE id = 0;
DROP TABLE dlm;

-- dictionaries go with their table
SELECT count(*) > 0 AS has_dictionaries FROM compressx.dictionaries WHERE relid = 'dj'::regclass;
DROP TABLE dj, dj2, dj_empty, dj_copy, dj_parted CASCADE;
SELECT count(*) AS dictionaries_left FROM compressx.dictionaries WHERE attname = 'doc';
