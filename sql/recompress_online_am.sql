-- compressx.recompress_online(..., access_method => ...): heap <-> compressx
-- in place, and partitioned tables partition by partition
SET client_min_messages = warning;
SET default_toast_compression = pglz;
CREATE TABLE am_docs (id int PRIMARY KEY, gone text, body text, j jsonb, note text);
ALTER TABLE am_docs DROP COLUMN gone;
INSERT INTO am_docs
SELECT i, repeat('online move ' || i || ' ', CASE WHEN i % 10 = 0 THEN 3000 ELSE 40 END),
       jsonb_build_object('k', i, 'v', repeat('value ', 30)),
       CASE WHEN i % 7 = 0 THEN NULL ELSE 'short' END
FROM generate_series(1, 300) i;
CREATE INDEX am_docs_md5 ON am_docs (md5(body));
CREATE UNIQUE INDEX am_docs_j ON am_docs ((j->>'k'));
-- no trigger may fire for the procedure's own row versions
CREATE FUNCTION am_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'trigger % fired', TG_NAME; END $$;
CREATE TRIGGER am_refuse BEFORE INSERT OR UPDATE OR DELETE ON am_docs
    FOR EACH ROW EXECUTE FUNCTION am_refuse();
CREATE VIEW am_state AS
SELECT c.relname, a.amname AS relam,
       (SELECT pa.amname FROM pg_depend d JOIN pg_am pa ON pa.oid = d.refobjid
        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
          AND d.refclassid = 'pg_am'::regclass) AS depends_on
FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam;
CREATE TABLE am_sums AS
SELECT 'start'::text AS at, count(*) AS n,
       md5(string_agg(id || body || j::text || coalesce(note, '-'), ',' ORDER BY id)) AS sum
FROM am_docs;
SELECT column_name, methods FROM compressx.column_stats('am_docs') ORDER BY 1;

-- heap -> compressx, with zstd: relam first (only it changes), then passes
CALL compressx.recompress_online('am_docs', 'zstd', level => 5, access_method => 'compressx',
                                 batch_rows => 40);
SELECT * FROM am_state WHERE relname = 'am_docs';
SELECT column_name, methods FROM compressx.column_stats('am_docs') ORDER BY 1;
SELECT column_name, codec, level, explicit FROM compressx.column_codecs
WHERE table_name = 'am_docs' ORDER BY 1;
INSERT INTO am_sums SELECT 'compressx', count(*),
       md5(string_agg(id || body || j::text || coalesce(note, '-'), ',' ORDER BY id)) FROM am_docs;
SELECT count(DISTINCT sum) AS sums FROM am_sums;
SELECT count(*) AS problems FROM compressx.verify('am_docs');
-- indexes find every row through the new versions
SET enable_seqscan = off;
SELECT count(*) FROM am_docs d WHERE md5(body) = (SELECT md5(body) FROM am_docs WHERE id = d.id);
SELECT count(*) FROM am_docs WHERE j->>'k' = '150';
RESET enable_seqscan;
-- a second call finds nothing to do
CALL compressx.recompress_online('am_docs', 'zstd', level => 5, access_method => 'compressx');
SELECT * FROM am_state WHERE relname = 'am_docs';

-- an UPDATE of another column re-encodes a zstd value once its column is no
-- longer zstd, and keeps it while it is
ALTER TABLE am_docs DISABLE TRIGGER am_refuse;
UPDATE am_docs SET note = note WHERE id <= 10;
SELECT methods
FROM compressx.column_stats('am_docs') WHERE column_name = 'body';
SELECT compressx.set_column_codec('am_docs', 'body', 'lz4');
UPDATE am_docs SET note = note WHERE id <= 10;
SELECT column_name, methods FROM compressx.column_stats('am_docs') ORDER BY 1;
SELECT compressx.set_column_codec('am_docs', 'body', 'zstd', 5);
ALTER TABLE am_docs ENABLE TRIGGER am_refuse;

-- compressx -> heap, no codec: a column set to zstd gets the method heap
-- would use (attcompression, else default_toast_compression), and its
-- values follow; a column already set to pglz or lz4 keeps its setting
CALL compressx.recompress_online('am_docs', access_method => 'heap', batch_rows => 40);
SELECT * FROM am_state WHERE relname = 'am_docs';
SELECT column_name, methods FROM compressx.column_stats('am_docs') ORDER BY 1;
-- every column has a setting of its own, none zstd
SELECT attname, codec, level FROM compressx.column_settings
WHERE relid = 'am_docs'::regclass ORDER BY attnum;
INSERT INTO am_sums SELECT 'heap', count(*),
       md5(string_agg(id || body || j::text || coalesce(note, '-'), ',' ORDER BY id)) FROM am_docs;
SELECT count(DISTINCT sum) AS sums FROM am_sums;
SET enable_seqscan = off;
SELECT count(*) FROM am_docs d WHERE md5(body) = (SELECT md5(body) FROM am_docs WHERE id = d.id);
RESET enable_seqscan;
-- the unique index still enforces uniqueness
ALTER TABLE am_docs DISABLE TRIGGER am_refuse;
INSERT INTO am_docs VALUES (1000, 'x', '{"k": 150}');
ALTER TABLE am_docs ENABLE TRIGGER am_refuse;

-- heap -> compressx without a codec: a heap table's COMPRESSION is not kept
-- (compressx.default_codec applies, catalog/attcompression.c)
ALTER TABLE am_docs ALTER COLUMN note SET COMPRESSION lz4;
SELECT compressx.reset_column_codec('am_docs');
CALL compressx.recompress_online('am_docs', access_method => 'compressx');
SELECT column_name, codec, explicit FROM compressx.column_codecs
WHERE table_name = 'am_docs' ORDER BY 1;
SELECT * FROM am_state WHERE relname = 'am_docs';
-- compressx -> heap with a codec: every value and attcompression follow it
CALL compressx.recompress_online('am_docs', 'lz4', access_method => 'heap');
SELECT * FROM am_state WHERE relname = 'am_docs';
SELECT column_name, methods FROM compressx.column_stats('am_docs') ORDER BY 1;
SELECT attname, attcompression FROM pg_attribute
WHERE attrelid = 'am_docs'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
INSERT INTO am_sums SELECT 'lz4 heap', count(*),
       md5(string_agg(id || body || j::text || coalesce(note, '-'), ',' ORDER BY id)) FROM am_docs;
SELECT count(DISTINCT sum) AS sums FROM am_sums;

-- a compressx table: the column's dictionary is part of the target; values
-- naming another (or none) are re-encoded, those naming it are left alone
CREATE TABLE am_dj (id int PRIMARY KEY, doc text) USING compressx;
SELECT compressx.set_column_codec('am_dj', 'doc', 'zstd', 3);
INSERT INTO am_dj
SELECT i, json_build_object('id', i, 'name', 'item-' || i,
                            'kind', (ARRAY['book', 'disk', 'tool', 'food'])[1 + i % 4],
                            'note', 'stock item number ' || i || ' of the catalogue, shelf ' || (i % 50))::text
FROM generate_series(1, 2000) i;
CREATE TABLE am_dj_before AS SELECT id, ctid AS tid, doc FROM am_dj;
SELECT stored_bytes AS dj_bytes FROM compressx.column_stats('am_dj') WHERE column_name = 'doc' \gset
SELECT compressx.train_dictionary('am_dj', 'doc', 4096) > 0 AS trained;
CALL compressx.recompress_online('am_dj', batch_rows => 500);
SELECT count(*) FILTER (WHERE a.ctid <> b.tid) AS rewritten,
       count(*) FILTER (WHERE a.doc IS DISTINCT FROM b.doc) AS differing
FROM am_dj a JOIN am_dj_before b USING (id);
SELECT stored_bytes < 0.7 * :dj_bytes AS shrank FROM compressx.column_stats('am_dj') WHERE column_name = 'doc';
-- a second call: every value names the column's dictionary already (its
-- compaction may still move rows the first call's moved once: each row
-- moves at most once per call, so rows are not compared by ctid)
DROP TABLE am_dj_before;
CREATE TABLE am_dj_before AS SELECT id, ctid AS tid, doc FROM am_dj;
SET client_min_messages = notice;
CALL compressx.recompress_online('am_dj');
SET client_min_messages = warning;
-- a new dictionary: every value again
SELECT compressx.train_dictionary('am_dj', 'doc', 4096) > 0 AS trained;
CALL compressx.recompress_online('am_dj', batch_rows => 500);
SELECT count(*) FILTER (WHERE a.ctid <> b.tid) AS rewritten,
       count(*) FILTER (WHERE a.doc IS DISTINCT FROM b.doc) AS differing
FROM am_dj a JOIN am_dj_before b USING (id);
DROP TABLE am_dj, am_dj_before;

-- a level named on a compressx table: values already in the codec are
-- re-encoded at it when their row was written before the call (the stored
-- form does not record the level); an interrupted call goes on where it
-- stopped
CREATE TABLE am_lv (id int PRIMARY KEY, body text) USING compressx;
SELECT compressx.set_column_codec('am_lv', 'body', 'zstd', 1);
INSERT INTO am_lv SELECT i, repeat(md5((i % 17)::text) || ' level words ' || i || ' ', 60)
FROM generate_series(1, 300) i;
SELECT stored_bytes AS lv_bytes FROM compressx.column_stats('am_lv') WHERE column_name = 'body' \gset
CREATE TABLE am_lv_before AS SELECT id, ctid AS tid, body FROM am_lv;
SET compressx.debug_rewrite_delay = 100;
SET statement_timeout = '350ms';
SET client_min_messages = notice;
CALL compressx.recompress_online('am_lv', 'zstd', 19, batch_rows => 20);
RESET statement_timeout;
RESET compressx.debug_rewrite_delay;
SET client_min_messages = warning;
SELECT count(*) FILTER (WHERE a.ctid <> b.tid) AS lv_done
FROM am_lv a JOIN am_lv_before b USING (id) \gset
SELECT :lv_done BETWEEN 20 AND 280 AS partly_done;
SELECT relation, codec, level FROM compressx.recompress_online_leftovers;
DROP TABLE am_lv_before;
CREATE TABLE am_lv_before AS SELECT id, ctid AS tid, body FROM am_lv;
CALL compressx.recompress_online('am_lv', 'zstd', 19, batch_rows => 20);
-- the resumed call rewrote only the rows the first had not
SELECT count(*) FILTER (WHERE a.ctid <> b.tid) = 300 - :lv_done AS only_the_rest,
       count(*) FILTER (WHERE a.body IS DISTINCT FROM b.body) AS differing
FROM am_lv a JOIN am_lv_before b USING (id);
SELECT stored_bytes < :lv_bytes AS smaller_at_19, methods
FROM compressx.column_stats('am_lv') WHERE column_name = 'body';
-- a new call with a level: every row written before it, again
DROP TABLE am_lv_before;
CREATE TABLE am_lv_before AS SELECT id, ctid AS tid FROM am_lv;
CALL compressx.recompress_online('am_lv', 'zstd', 3);
SELECT count(*) FILTER (WHERE a.ctid <> b.tid) AS rewritten FROM am_lv a JOIN am_lv_before b USING (id);
-- without a level, the codec's default level: a changed setting, applied
-- to every row (issue 34); then, without a codec, values as the setting
-- says stay as they are
DROP TABLE am_lv_before;
CREATE TABLE am_lv_before AS SELECT id, ctid AS tid FROM am_lv;
CALL compressx.recompress_online('am_lv', 'zstd');
SELECT count(*) FILTER (WHERE a.ctid <> b.tid) AS rewritten FROM am_lv a JOIN am_lv_before b USING (id);
DROP TABLE am_lv_before;
CREATE TABLE am_lv_before AS SELECT id, ctid AS tid FROM am_lv;
CALL compressx.recompress_online('am_lv');
SELECT count(*) FILTER (WHERE a.ctid <> b.tid) AS rewritten FROM am_lv a JOIN am_lv_before b USING (id);
SELECT count(*) FROM compressx.recompress_online_leftovers;
DROP TABLE am_lv, am_lv_before;

-- bad input for a move, nothing changed
SET client_min_messages = notice;
CALL compressx.recompress_online('am_docs', 'zstd', access_method => 'heap');
CALL compressx.recompress_online('am_docs', 'lz4', 3, access_method => 'heap');
CALL compressx.recompress_online('am_docs', 'none', access_method => 'heap');
CALL compressx.recompress_online('am_docs', access_method => 'heap', columns => '{body}');
CALL compressx.recompress_online('am_docs', access_method => 'btree');
-- a published table moves too: logical decoding reads compressx tables
-- through the output plugin compressx (TAP test 012_logical.pl)
CREATE SCHEMA am_pubs;
CREATE TABLE am_pubs.t (t text);
INSERT INTO am_pubs.t SELECT repeat('published ' || i, 80) FROM generate_series(1, 20) i;
SET client_min_messages = error;   -- the wal_level warning differs by major
CREATE PUBLICATION am_pub FOR TABLES IN SCHEMA am_pubs;
SET client_min_messages = notice;
CALL compressx.recompress_online('am_pubs.t', access_method => 'compressx');
DROP PUBLICATION am_pub;
SELECT * FROM am_state WHERE relname IN ('am_docs', 't') ORDER BY 1;
SET client_min_messages = warning;

-- partitioned: the parents' settings, then each partition in turn
CREATE TABLE am_parts (id int, body text) PARTITION BY RANGE (id);
CREATE TABLE am_parts_a PARTITION OF am_parts FOR VALUES FROM (0) TO (100);
CREATE TABLE am_parts_b PARTITION OF am_parts FOR VALUES FROM (100) TO (200) USING compressx;
CREATE TABLE am_parts_c PARTITION OF am_parts FOR VALUES FROM (200) TO (400)
    PARTITION BY RANGE (id);
CREATE TABLE am_parts_c1 PARTITION OF am_parts_c FOR VALUES FROM (200) TO (400);
INSERT INTO am_parts SELECT i, repeat('part ' || i || ' ', 60 + i % 400) FROM generate_series(0, 399) i;
CREATE TABLE am_parts_sum AS
SELECT md5(string_agg(id || body, ',' ORDER BY id)) AS sum FROM am_parts;
CALL compressx.recompress_online('am_parts', 'lz4');
SELECT tableoid::regclass, pg_column_compression(body), count(*) FROM am_parts GROUP BY 1, 2 ORDER BY 1, 2;
-- new partitions follow the parents: attcompression and compressx's setting
SELECT attrelid::regclass, attcompression FROM pg_attribute
WHERE attrelid IN ('am_parts'::regclass, 'am_parts_c'::regclass) AND attname = 'body' ORDER BY 1;
SELECT relid::regclass, codec FROM compressx.column_settings
WHERE relid IN ('am_parts'::regclass, 'am_parts_c'::regclass) ORDER BY 1;
CALL compressx.recompress_online('am_parts', 'zstd', access_method => 'compressx');
SELECT * FROM am_state WHERE relname LIKE 'am_parts%' ORDER BY 1;
SELECT p.relid::regclass AS partition, s.methods
FROM pg_partition_tree('am_parts') p, compressx.column_stats(p.relid) s
WHERE p.isleaf ORDER BY 1;
CALL compressx.recompress_online('am_parts', access_method => 'heap');
SELECT * FROM am_state WHERE relname LIKE 'am_parts%' ORDER BY 1;
SELECT tableoid::regclass, pg_column_compression(body), count(*) FROM am_parts GROUP BY 1, 2 ORDER BY 1, 2;
SELECT (SELECT md5(string_agg(id || body, ',' ORDER BY id)) FROM am_parts) = sum AS same FROM am_parts_sum;
-- every partition must be the caller's before any work
CREATE ROLE am_owner;
GRANT CREATE ON SCHEMA public TO am_owner;
ALTER TABLE am_parts OWNER TO am_owner;
ALTER TABLE am_parts_a OWNER TO am_owner;
ALTER TABLE am_parts_c OWNER TO am_owner;
ALTER TABLE am_parts_c1 OWNER TO am_owner;
SET ROLE am_owner;
SET client_min_messages = notice;
CALL compressx.recompress_online('am_parts', 'pglz');
RESET ROLE;
SELECT tableoid::regclass, pg_column_compression(body), count(*) FROM am_parts GROUP BY 1, 2 ORDER BY 1, 2;
-- nothing is left running
SELECT count(*) FROM compressx.recompress_online_progress;

-- an interrupted move to heap: listed as a leftover until CALLed again or
-- cleaned up; cleanup restores the settings of before the run, and leaves
-- every row whole (in zstd or pglz: the table is still compressx)
SET client_min_messages = warning;
CREATE TABLE am_left (id int PRIMARY KEY, body text) USING compressx;
SELECT compressx.set_column_codec('am_left', 'body', 'zstd', 7);
INSERT INTO am_left SELECT i, repeat('leftover ' || i || ' ', 300) FROM generate_series(1, 200) i;
CREATE TABLE am_left_sum AS SELECT md5(string_agg(id || body, ',' ORDER BY id)) AS sum FROM am_left;
SET compressx.debug_rewrite_delay = 100;	-- per batch, before its commit
SET statement_timeout = '350ms';
SET client_min_messages = notice;
CALL compressx.recompress_online('am_left', access_method => 'heap', batch_rows => 10);
RESET statement_timeout;
RESET compressx.debug_rewrite_delay;
SELECT relation, codec, level, columns, target_access_method, access_method, resume, cleanup
FROM compressx.recompress_online_leftovers;
SELECT attname, codec, level FROM compressx.column_settings WHERE relid = 'am_left'::regclass;
SELECT (methods->>'pglz')::int BETWEEN 10 AND 190 AS partly_done,
       (methods->>'pglz')::int + (methods->>'zstd')::int AS all_values
FROM compressx.column_stats('am_left') WHERE column_name = 'body';
-- another role sees no leftover of a table it does not own, and cannot clean it
CREATE ROLE am_stranger;
SET ROLE am_stranger;
SELECT count(*) FROM compressx.recompress_online_leftovers;
SELECT compressx.recompress_online_cleanup('am_left');
RESET ROLE;
DROP ROLE am_stranger;
SELECT compressx.recompress_online_cleanup('am_left');
SELECT attname, codec, level FROM compressx.column_settings WHERE relid = 'am_left'::regclass;
SELECT count(*) FROM compressx.recompress_online_leftovers;
SELECT compressx.recompress_online_cleanup('am_left');
SELECT (SELECT md5(string_agg(id || body, ',' ORDER BY id)) FROM am_left) = sum AS same FROM am_left_sum;
SELECT count(*) AS problems FROM compressx.verify('am_left');
-- a run CALLed again after a cleanup completes the move
SET client_min_messages = warning;
CALL compressx.recompress_online('am_left', access_method => 'heap');
SELECT * FROM am_state WHERE relname = 'am_left';
SELECT (SELECT md5(string_agg(id || body, ',' ORDER BY id)) FROM am_left) = sum AS same FROM am_left_sum;

-- a heap table: cleanup restores attcompression
CREATE TABLE am_left_h (id int PRIMARY KEY, body text);
ALTER TABLE am_left_h ALTER COLUMN body SET COMPRESSION pglz;
INSERT INTO am_left_h SELECT i, repeat('leftover heap ' || i || ' ', 300) FROM generate_series(1, 200) i;
SET compressx.debug_rewrite_delay = 100;
SET statement_timeout = '350ms';
SET client_min_messages = notice;
CALL compressx.recompress_online('am_left_h', 'lz4', batch_rows => 10);
RESET statement_timeout;
RESET compressx.debug_rewrite_delay;
SELECT relation, codec, target_access_method, access_method FROM compressx.recompress_online_leftovers;
SELECT attcompression FROM pg_attribute WHERE attrelid = 'am_left_h'::regclass AND attname = 'body';
SELECT compressx.recompress_online_cleanup('am_left_h');
SELECT attcompression FROM pg_attribute WHERE attrelid = 'am_left_h'::regclass AND attname = 'body';
SELECT count(*) FROM compressx.recompress_online_leftovers;
-- bad input
SELECT compressx.recompress_online_cleanup('am_state');
SELECT compressx.recompress_online_cleanup(NULL);
SELECT compressx.recompress_online_cleanup('compressx.column_settings');

RESET client_min_messages;
DROP VIEW am_state;
DROP TABLE am_docs, am_sums, am_parts, am_parts_sum, am_pubs.t, am_left, am_left_sum, am_left_h CASCADE;
DROP SCHEMA am_pubs;
DROP FUNCTION am_refuse();
REVOKE CREATE ON SCHEMA public FROM am_owner;
DROP ROLE am_owner;
