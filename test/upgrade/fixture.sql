-- The database test/upgrade_check.sh upgrades: every kind of value
-- compressx writes, and every object whose identity pg_upgrade must keep.
\set ON_ERROR_STOP on
CREATE EXTENSION compressx;
-- settings made with ALTER DATABASE travel with the database
ALTER DATABASE cx_upgrade SET compressx.default_level = 5;
ALTER DATABASE cx_upgrade SET compressx.min_size = 48;

-- one column per codec, values inline and out of line, a dropped column
-- between them and an index on an expression over a compressed column
CREATE TABLE mixed (id integer PRIMARY KEY, p text, gone text, l text, z text, zb bytea)
    USING compressx;
SELECT compressx.set_column_codec('mixed', 'p', 'pglz');
SELECT compressx.set_column_codec('mixed', 'l', 'lz4', 1);
SELECT compressx.set_column_codec('mixed', 'z', 'zstd', 9, 32);
SELECT compressx.set_column_codec('mixed', 'zb', 'zstd', 19);
INSERT INTO mixed
SELECT i, repeat('pglz row ' || i || ' ', 20), 'dropped ' || i,
       repeat('lz4 row ' || i || ' ', 20), repeat('zstd row ' || i || ' ', 20),
       convert_to(repeat('bytes ' || i, 30), 'UTF8')
FROM generate_series(1, 1500) i;
-- out of line: each value compresses to more than the TOAST target
INSERT INTO mixed
SELECT i, big, 'dropped', big, big, convert_to(big, 'UTF8')
FROM generate_series(1501, 1530) i,
     LATERAL (SELECT string_agg(md5((i * 1000 + k)::text) || ' is part ' || k || ' of a large value; ', '') AS big
              FROM generate_series(1, 300) k) b;
ALTER TABLE mixed DROP COLUMN gone;
CREATE INDEX mixed_z_md5 ON mixed (md5(z));

-- dictionaries: d1 compressed the old values and was replaced by d2 (kept,
-- retired); both are referenced by stored values
CREATE TABLE dj (id integer PRIMARY KEY, doc text) USING compressx;
SELECT compressx.set_column_codec('dj', 'doc', 'zstd', 3);
INSERT INTO dj
SELECT i, json_build_object('id', i, 'name', 'item-' || i,
                            'kind', (ARRAY['book', 'disk', 'tool', 'food'])[1 + i % 4],
                            'note', 'stock item ' || i || ' of the catalogue, shelf ' || (i % 50))::text
FROM generate_series(1, 2000) i;
SELECT compressx.train_dictionary('dj', 'doc', 4096) > 0 AS d1;
VACUUM FULL dj;
INSERT INTO dj
SELECT i, json_build_object('order', i, 'customer', 'customer-' || (i % 97),
                            'lines', json_build_array(i % 7, i % 11, i % 13), 'status', 'shipped')::text
FROM generate_series(3001, 4000) i;
SELECT compressx.train_dictionary('dj', 'doc', 4096) > 0 AS d2;
INSERT INTO dj SELECT id + 10000, doc FROM dj WHERE id <= 500 OR id > 3900;

-- an automatic dictionary, trained at once, and its column's state (the
-- background worker stays off: the state must not change on its own)
SET compressx.auto_dictionary_worker = off;
SET compressx.auto_dictionary_min_values = 200;
CREATE TABLE autod (id integer PRIMARY KEY, doc text) USING compressx;
INSERT INTO autod
SELECT i, json_build_object('id', i, 'name', 'customer ' || i,
                            'city', (ARRAY['Paris', 'Lyon', 'Nantes', 'Lille'])[1 + i % 4],
                            'note', 'regular customer since ' || (2000 + i % 20))::text
FROM generate_series(1, 1000) i;
SELECT compressx.set_column_codec('autod', 'doc', 'zstd', dictionary => 'auto');
INSERT INTO autod SELECT id + 1000, doc FROM autod WHERE id <= 100;

-- a partitioned table with compressx partitions of different codecs and a
-- heap one
CREATE TABLE events (id integer, kind integer, payload text) PARTITION BY LIST (kind);
CREATE TABLE events_a PARTITION OF events FOR VALUES IN (1) USING compressx;
CREATE TABLE events_b PARTITION OF events FOR VALUES IN (2) USING compressx;
CREATE TABLE events_h PARTITION OF events FOR VALUES IN (3) USING heap;
SELECT compressx.set_column_codec('events_b', 'payload', 'lz4');
INSERT INTO events
SELECT i, 1 + i % 3, repeat('event ' || i || ' happened; ', 12) FROM generate_series(1, 3000) i;

-- heap -> compressx -> heap
CREATE TABLE roundtrip (id integer PRIMARY KEY, body text);
INSERT INTO roundtrip SELECT i, repeat('round trip ' || i, 15) FROM generate_series(1, 500) i;
ALTER TABLE roundtrip SET ACCESS METHOD compressx;
ALTER TABLE roundtrip SET ACCESS METHOD heap;

-- a heap table recompressed with lz4 (values inline and out of line)
CREATE TABLE heapdocs (id integer PRIMARY KEY, body text);
INSERT INTO heapdocs SELECT i, repeat('heap document ' || i || ' ', 300) FROM generate_series(1, 150) i;
INSERT INTO heapdocs
SELECT i, string_agg(md5((i * 7 + k)::text) || ' is part ' || k || ' of a large value; ', '')
FROM generate_series(151, 200) i, generate_series(1, 400) k GROUP BY i;
SELECT column_name, values_rewritten FROM recompress_table('heapdocs', 'lz4');

-- a heap table with a pending setting: its column's label comes first in
-- pg_upgrade's schema restore, before any compressx table is created (the
-- extension's C functions, created before, load the label provider)
CREATE TABLE aaa_pending (id integer PRIMARY KEY, body text);
INSERT INTO aaa_pending SELECT i, 'pending setting ' || i FROM generate_series(1, 10) i;
SELECT compressx.set_column_codec('aaa_pending', 'body', 'zstd', 19);

CHECKPOINT;
