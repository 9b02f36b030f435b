-- compressx.verify(): decode every stored value; one row per damaged value
CREATE TABLE v_heap (id integer, body text, blob bytea);
INSERT INTO v_heap SELECT i, repeat('heap value ' || i, 300),
       CASE WHEN i % 5 = 0 THEN (SELECT decode(string_agg(md5(k::text || i), ''), 'hex') FROM generate_series(1, 400) k) END
FROM generate_series(1, 100) i;
CREATE TABLE v_cx (LIKE v_heap) USING compressx;
INSERT INTO v_cx SELECT * FROM v_heap;
SELECT compressx.set_column_codec('v_cx', 'body', 'lz4');
INSERT INTO v_cx SELECT * FROM v_heap;
CREATE TABLE v_parted (k integer, t text) PARTITION BY LIST (k);
CREATE TABLE v_parted_1 PARTITION OF v_parted FOR VALUES IN (1) USING compressx;
CREATE TABLE v_parted_2 PARTITION OF v_parted FOR VALUES IN (2);
INSERT INTO v_parted SELECT 1 + i % 2, repeat('p', 500 + i) FROM generate_series(1, 50) i;
SELECT * FROM compressx.verify('v_heap');
SELECT * FROM compressx.verify('v_cx');
SELECT * FROM compressx.verify('v_parted');
-- bad input
SELECT * FROM compressx.verify(NULL);
SELECT * FROM compressx.verify(0);
CREATE VIEW v_view AS SELECT * FROM v_heap;
SELECT * FROM compressx.verify('v_view');
CREATE ROLE cx_verifier;
SET ROLE cx_verifier;
SELECT * FROM compressx.verify('v_cx');
RESET ROLE;
DROP ROLE cx_verifier;
DROP VIEW v_view;
DROP TABLE v_heap, v_cx, v_parted;
-- orphaned TOAST values: a value no row version references (here its row
-- was removed without its TOAST value, as pg_surgery does) is reported,
-- with the ctid of one of its chunks and no column; VACUUM FULL reclaims it
CREATE EXTENSION pg_surgery;
CREATE TABLE v_orphan (id integer, body text);
ALTER TABLE v_orphan ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO v_orphan SELECT i, repeat(md5(i::text), 200) FROM generate_series(1, 3) i;
SELECT heap_force_kill('v_orphan', ARRAY['(0,2)']::tid[]);
SELECT relation, column_name IS NULL AS no_column,
       regexp_replace(problem, 'TOAST value \d+ ', 'TOAST value N ') AS problem
FROM compressx.verify('v_orphan');
VACUUM FULL v_orphan;
SELECT count(*) AS problems FROM compressx.verify('v_orphan');
-- compressx's own references count as references: out-of-line zstd values
-- shared by row versions after a rewrite are no orphans
CREATE TABLE v_shared (id integer, body text, n integer) USING compressx;
INSERT INTO v_shared SELECT i, (SELECT string_agg(md5((i * 100 + k)::text), '') FROM generate_series(1, 100) k), 0
FROM generate_series(1, 5) i;
UPDATE v_shared SET n = 1;
VACUUM FULL v_shared;
SELECT count(*) AS problems FROM compressx.verify('v_shared');
DROP TABLE v_orphan, v_shared;
DROP EXTENSION pg_surgery;
-- Every kind of value compressx writes is one it attributes to itself
-- (format.h: version, codec, flags and the zstd frame magic at its fixed
-- offset; references of 24 bytes naming the table's TOAST relation): zstd
-- at its lowest and highest levels, inline and out of line, compressed in
-- one call and streamed (above 128 kB), with and without a dictionary.
-- verify() and reading would report any other as not written by compressx.
CREATE TABLE v_kinds (id integer, body text) USING compressx;
SELECT compressx.set_column_codec('v_kinds', 'body', 'zstd', -7);
INSERT INTO v_kinds SELECT i, repeat('kind ' || i || ' of value, ', 40) FROM generate_series(1, 20) i;
INSERT INTO v_kinds SELECT 21, (SELECT string_agg(md5(k::text) || repeat('-', 40), '') FROM generate_series(1, 100) k);
SELECT compressx.set_column_codec('v_kinds', 'body', 'zstd', 22);
INSERT INTO v_kinds SELECT i, repeat('kind ' || i || ' of value, ', 40) FROM generate_series(22, 40) i;
INSERT INTO v_kinds SELECT 41, (SELECT string_agg(md5(k::text), '') FROM generate_series(1, 6000) k);
SELECT compressx.set_column_codec('v_kinds', 'body', 'zstd', 3);
SELECT compressx.train_dictionary('v_kinds', 'body', 2048) > 0 AS trained;
INSERT INTO v_kinds SELECT i, repeat('kind ' || i || ' of value, ', 40) FROM generate_series(42, 60) i;
INSERT INTO v_kinds SELECT 61, (SELECT string_agg(md5(k::text), '') FROM generate_series(1, 6000) k);
SELECT methods, external_values FROM compressx.column_stats('v_kinds');
SELECT count(*) AS problems FROM compressx.verify('v_kinds');
SELECT count(*) AS "values", sum(octet_length(body)) AS bytes,
       count(*) FILTER (WHERE body = CASE
           WHEN id = 21 THEN (SELECT string_agg(md5(k::text) || repeat('-', 40), '') FROM generate_series(1, 100) k)
           WHEN id IN (41, 61) THEN (SELECT string_agg(md5(k::text), '') FROM generate_series(1, 6000) k)
           ELSE repeat('kind ' || id || ' of value, ', 40) END) AS equal
FROM v_kinds;
SELECT count(*) AS with_dictionary FROM compressx.dictionaries WHERE relid = 'v_kinds'::regclass;
DROP TABLE v_kinds;
