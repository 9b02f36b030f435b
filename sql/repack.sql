-- REPACK (PostgreSQL 19: CLUSTER and VACUUM FULL became REPACK) on a
-- compressx table with zstd values at two levels, a dictionary and pglz:
-- REPACK keeps every column's codec, level and dictionary, value by value
-- (compressx.value_storage() before and after); REPACK (CONCURRENTLY),
-- which applies the changes it decodes through heap's access method, is
-- refused before it starts, naming compressx.recompress_online, and leaves
-- the table as it was.  Before 19 there is no REPACK: the file stops here
-- (expected/repack_1.out).
SELECT current_setting('server_version_num')::int >= 190000 AS has_repack \gset
\if :has_repack
\else
\quit
\endif

CREATE TABLE rp (id integer PRIMARY KEY, doc text, big text, note text) USING compressx;
SELECT compressx.set_column_codec('rp', 'doc', 'zstd', 19);
SELECT compressx.set_column_codec('rp', 'big', 'zstd', 1);
SELECT compressx.set_column_codec('rp', 'note', 'pglz');
INSERT INTO rp
SELECT i, json_build_object('id', i, 'name', 'item-' || i,
                            'kind', (ARRAY['book', 'disk', 'tool', 'food'])[1 + i % 4],
                            'price', (i * 37) % 1000 / 10.0,
                            'note', 'stock item number ' || i || ' of the warehouse catalogue, shelf ' || (i % 50))::text,
       CASE WHEN i % 10 = 0
            THEN (SELECT string_agg(md5((i * 1000 + k)::text), ' ') FROM generate_series(1, 150) k)
                 || repeat(' padding', 200) END,
       repeat('note ' || (i % 7) || ' ', 60)
FROM generate_series(1, 2000) i;
CREATE TABLE rp_copy AS SELECT * FROM rp;   -- heap, for comparison
SELECT sum(compressx.stored_size('rp', ctid, 'doc')) AS doc_plain_zstd FROM rp \gset

-- a dictionary for doc, applied by a rewrite (VACUUM FULL, REPACK's code)
SELECT compressx.train_dictionary('rp', 'doc', 4096) AS d \gset
VACUUM FULL rp;
SELECT column_name, codec, level, dictionary = :d AS has_dictionary
FROM compressx.column_codec_settings('rp') ORDER BY column_name;
SELECT sum(compressx.stored_size('rp', ctid, 'doc')) < 0.6 * :doc_plain_zstd AS dictionary_in_use
FROM rp;

-- every value's stored form: method, stored bytes, out of line or not
CREATE VIEW rp_stored AS
SELECT r.id, c.col, v.method, v.stored_bytes, v.external
FROM rp r CROSS JOIN (VALUES ('doc'), ('big'), ('note')) c(col),
     LATERAL compressx.value_storage('rp', r.ctid, c.col::name) v;
CREATE TABLE rp_before AS SELECT * FROM rp_stored;
SELECT col, method, external, count(*) FROM rp_before GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
CREATE TABLE rp_settings_before AS SELECT * FROM compressx.column_codec_settings('rp');
SELECT pg_relation_filenode('rp') AS filenode_before \gset

-- REPACK: a new file, the same stored forms
REPACK rp;
SELECT pg_relation_filenode('rp') <> :filenode_before AS rewritten;
SELECT count(*) AS changed_values
FROM ((SELECT * FROM rp_stored EXCEPT SELECT * FROM rp_before)
      UNION ALL (SELECT * FROM rp_before EXCEPT SELECT * FROM rp_stored)) d;
SELECT count(*) AS changed_settings
FROM ((SELECT * FROM compressx.column_codec_settings('rp') EXCEPT SELECT * FROM rp_settings_before)
      UNION ALL (SELECT * FROM rp_settings_before EXCEPT SELECT * FROM compressx.column_codec_settings('rp'))) d;
SELECT count(*) AS differing FROM rp FULL JOIN rp_copy c USING (id)
WHERE rp.doc IS DISTINCT FROM c.doc OR rp.big IS DISTINCT FROM c.big OR rp.note IS DISTINCT FROM c.note;

-- REPACK USING INDEX (CLUSTER's ordering) and with a dead row version
UPDATE rp SET note = note || '.' WHERE id = 7;
UPDATE rp SET note = rtrim(note, '.') WHERE id = 7;
REPACK rp USING INDEX rp_pkey;
SELECT count(*) AS changed_values
FROM ((SELECT * FROM rp_stored EXCEPT SELECT * FROM rp_before)
      UNION ALL (SELECT * FROM rp_before EXCEPT SELECT * FROM rp_stored)) d;
SELECT count(*) AS damaged FROM compressx.verify('rp');

-- REPACK (CONCURRENTLY): refused before it starts; nothing changes
SELECT pg_relation_filenode('rp') AS filenode_before \gset
\set VERBOSITY default
REPACK (CONCURRENTLY) rp;
REPACK (CONCURRENTLY) public.rp USING INDEX rp_pkey;
\set VERBOSITY terse
SELECT pg_relation_filenode('rp') = :filenode_before AS same_file;
SELECT count(*) AS changed_values
FROM ((SELECT * FROM rp_stored EXCEPT SELECT * FROM rp_before)
      UNION ALL (SELECT * FROM rp_before EXCEPT SELECT * FROM rp_stored)) d;
SELECT count(*) AS slots FROM pg_replication_slots;
-- CONCURRENTLY false is plain REPACK
REPACK (CONCURRENTLY false) rp;
SELECT count(*) AS changed_values
FROM ((SELECT * FROM rp_stored EXCEPT SELECT * FROM rp_before)
      UNION ALL (SELECT * FROM rp_before EXCEPT SELECT * FROM rp_stored)) d;
-- a name that is not a compressx table is left to core
REPACK (CONCURRENTLY) rp_missing;
CREATE TABLE rp_heap (id integer PRIMARY KEY, v text);
INSERT INTO rp_heap SELECT i, repeat('v', i % 100) FROM generate_series(1, 1000) i;
DELETE FROM rp_heap WHERE id % 2 = 0;
SELECT pg_relation_filenode('rp_heap') AS heap_filenode \gset
REPACK (CONCURRENTLY) rp_heap;
SELECT pg_relation_filenode('rp_heap') <> :heap_filenode AS heap_repacked, count(*) FROM rp_heap;

-- what compressx offers instead: recompress_online, then VACUUM
CALL compressx.recompress_online('rp');
SELECT count(*) AS differing FROM rp FULL JOIN rp_copy c USING (id)
WHERE rp.doc IS DISTINCT FROM c.doc OR rp.big IS DISTINCT FROM c.big OR rp.note IS DISTINCT FROM c.note;

DROP VIEW rp_stored;
DROP TABLE rp, rp_copy, rp_before, rp_settings_before, rp_heap;
