-- recompress_table(): rewrite existing values with another codec
SET default_toast_compression = pglz;
CREATE TABLE docs (
    id integer PRIMARY KEY,
    title text,
    body text,                 -- pglz, inline and out of line
    extra text,
    counter integer
);
INSERT INTO docs
SELECT i, 'doc ' || i,
       repeat('body of document ' || i || ' with some words. ', 60 + (i % 7) * 200),
       repeat('extra ' || i, 500),
       i
FROM generate_series(1, 200) i;
CREATE INDEX docs_body_md5 ON docs (md5(body));
CREATE INDEX docs_title_partial ON docs (title) WHERE counter % 2 = 0;

-- nothing else may happen to the table: triggers that fail on any DML
CREATE FUNCTION forbid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'trigger fired on %', TG_OP; END $$;
CREATE TRIGGER docs_forbid BEFORE INSERT OR UPDATE OR DELETE ON docs
    FOR EACH ROW EXECUTE FUNCTION forbid();
CREATE TRIGGER docs_forbid_stmt BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON docs
    FOR EACH STATEMENT EXECUTE FUNCTION forbid();

CREATE TABLE checksums (label text, sum text);
INSERT INTO checksums
SELECT 'before', md5(string_agg(id || title || body || extra || counter, ',' ORDER BY id)) FROM docs;

SELECT column_name, methods FROM compressx.column_stats('docs');
CREATE TEMP TABLE stats_before AS SELECT * FROM compressx.column_stats('docs');

-- with the default search_path
SHOW search_path;
CREATE TEMP TABLE rc_result AS SELECT * FROM recompress_table('docs', 'lz4');
SELECT column_name, values_rewritten FROM rc_result;

-- every compressed value now uses lz4; the data is byte-identical
SELECT column_name, methods FROM compressx.column_stats('docs');
SELECT pg_column_compression(body) AS method, count(*) FROM docs GROUP BY 1 ORDER BY 1;
SELECT (SELECT sum FROM checksums WHERE label = 'before')
     = md5(string_agg(id || title || body || extra || counter, ',' ORDER BY id)) AS identical
FROM docs;
-- bytes_before and bytes_after are what column_stats reports before and after
SELECT r.column_name, r.bytes_before = b.stored_bytes AS before_matches,
       r.bytes_after = a.stored_bytes AS after_matches
FROM rc_result r
JOIN stats_before b USING (column_name)
JOIN compressx.column_stats('docs') a USING (column_name)
ORDER BY 1;
DROP TABLE rc_result, stats_before;

-- the columns' setting is the target, so new rows follow it
SELECT attname, attcompression FROM pg_attribute
WHERE attrelid = 'docs'::regclass AND attnum > 0 ORDER BY attnum;
ALTER TABLE docs DISABLE TRIGGER USER;
INSERT INTO docs VALUES (1000, 'new', repeat('a new row after recompression ', 200), NULL, 1000);
SELECT pg_column_compression(body) FROM docs WHERE id = 1000;
DELETE FROM docs WHERE id = 1000;
ALTER TABLE docs ENABLE TRIGGER USER;

-- indexes are valid and answer correctly
SELECT indexrelid::regclass, indisvalid, indisready FROM pg_index
WHERE indrelid = 'docs'::regclass ORDER BY 1;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE md5(body) = md5(repeat('body of document 7 with some words. ', 60 + 7 * 200));
SELECT id FROM docs WHERE md5(body) = (SELECT md5(body) FROM docs WHERE id = 7);
SELECT count(*) FROM docs WHERE counter % 2 = 0 AND title > 'doc 5';
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a second run finds nothing to do and does not rewrite the table
SELECT pg_relation_filenode('docs') AS filenode \gset
SELECT column_name, values_rewritten FROM recompress_table('docs', 'lz4');
SELECT pg_relation_filenode('docs') = :filenode AS not_rewritten;

-- only the named columns; NULL codec: each column's own setting
ALTER TABLE docs ALTER COLUMN extra SET COMPRESSION pglz;
SELECT column_name, values_rewritten FROM recompress_table('docs', NULL, NULL, ARRAY['extra']::name[]);
SELECT column_name, methods FROM compressx.column_stats('docs');
-- columns without a setting follow default_toast_compression
ALTER TABLE docs ALTER COLUMN body SET COMPRESSION default;
SELECT column_name, values_rewritten > 0 AS rewritten FROM recompress_table('docs', columns => '{body}');
SELECT column_name, methods FROM compressx.column_stats('docs');
SELECT attname, attcompression FROM pg_attribute
WHERE attrelid = 'docs'::regclass AND attname IN ('body', 'extra') ORDER BY attnum;
SELECT (SELECT sum FROM checksums WHERE label = 'before')
     = md5(string_agg(id || title || body || extra || counter, ',' ORDER BY id)) AS identical
FROM docs;

-- inside a transaction: rolled back, the old state is back
BEGIN;
SELECT column_name, values_rewritten > 0 AS rewritten FROM recompress_table('docs', 'lz4', columns => '{body}');
SELECT pg_column_compression(body) AS method, count(*) FROM docs GROUP BY 1;
ROLLBACK;
SELECT pg_column_compression(body) AS method, count(*) FROM docs GROUP BY 1;
SELECT attcompression FROM pg_attribute WHERE attrelid = 'docs'::regclass AND attname = 'body';

-- rows inserted earlier in the same transaction are rewritten too
BEGIN;
ALTER TABLE docs DISABLE TRIGGER USER;
INSERT INTO docs VALUES (2000, 'in xact', repeat('inserted in the same transaction ', 200), NULL, 2000);
SELECT column_name, values_rewritten FROM recompress_table('docs', 'lz4', columns => '{body}');
SELECT pg_column_compression(body) AS method, count(*) FROM docs GROUP BY 1;
ROLLBACK;

-- a cursor open on the table in this session
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM docs;
FETCH 1 FROM c \g /dev/null
SELECT * FROM recompress_table('docs', 'lz4');
ROLLBACK;

-- partitioned tables recurse into every partition
CREATE TABLE events (k integer, payload text) PARTITION BY RANGE (k);
CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM (0) TO (100);
CREATE TABLE events_2 PARTITION OF events FOR VALUES FROM (100) TO (200)
    PARTITION BY RANGE (k);
CREATE TABLE events_2a PARTITION OF events_2 FOR VALUES FROM (100) TO (200);
INSERT INTO events SELECT i, repeat('event ' || i || ' ', 400) FROM generate_series(0, 199) i;
SELECT column_name, values_rewritten, bytes_before > bytes_after AS lz4_smaller_here
FROM recompress_table('events', 'lz4');
SELECT tableoid::regclass, pg_column_compression(payload), count(*) FROM events GROUP BY 1, 2 ORDER BY 1;
SELECT attrelid::regclass, attcompression FROM pg_attribute
WHERE attname = 'payload' AND attrelid IN ('events'::regclass, 'events_1'::regclass,
                                           'events_2'::regclass, 'events_2a'::regclass)
ORDER BY 1;

-- materialized views are tables too
CREATE MATERIALIZED VIEW docs_mv AS SELECT id, body FROM docs;
SELECT column_name, values_rewritten > 0 AS rewritten FROM recompress_table('docs_mv', 'lz4');
SELECT pg_column_compression(body), count(*) FROM docs_mv GROUP BY 1;

-- dropped columns, a column added with a default, unlogged and temporary tables
CREATE UNLOGGED TABLE odd (a text, gone text, b text);
INSERT INTO odd SELECT repeat('a' || i, 900), repeat('g' || i, 900), repeat('b' || i, 900)
FROM generate_series(1, 20) i;
ALTER TABLE odd DROP COLUMN gone;
ALTER TABLE odd ADD COLUMN c text DEFAULT repeat('default value ', 300);
SELECT md5(string_agg(a || b || c, ',' ORDER BY a)) AS sum FROM odd \gset
SELECT column_name, values_rewritten FROM recompress_table('odd', 'lz4');
SELECT md5(string_agg(a || b || c, ',' ORDER BY a)) = :'sum' AS identical,
       count(*) FILTER (WHERE pg_column_compression(a) = 'lz4') AS a_lz4,
       count(*) FILTER (WHERE pg_column_compression(b) = 'lz4') AS b_lz4
FROM odd;
SELECT relpersistence FROM pg_class WHERE relname = 'odd';
CREATE TEMP TABLE tmp_docs AS SELECT id, body FROM docs;
SELECT column_name, values_rewritten > 0 AS rewritten FROM recompress_table('tmp_docs', 'lz4');
SELECT pg_column_compression(body), count(*) FROM tmp_docs GROUP BY 1;
DROP TABLE odd, tmp_docs;

-- progress view exists; nothing is running now
SELECT count(*) FROM compressx.recompress_progress;

-- bad input: clear errors, nothing done
SELECT * FROM recompress_table('docs', 'zstd');
SELECT * FROM recompress_table('docs', 'none');
SELECT * FROM recompress_table('docs', 'brotli');
SELECT * FROM recompress_table('docs', 'lz4', 5);
SELECT * FROM recompress_table('docs', 'pglz', 1);
SELECT * FROM recompress_table('docs', NULL, 3);
SELECT * FROM recompress_table('docs', 'lz4', columns => '{nope}');
SELECT * FROM recompress_table('docs', 'lz4', columns => '{counter}');
SELECT * FROM recompress_table('docs', 'lz4', columns => '{}');
SELECT * FROM recompress_table('docs', 'lz4', columns => '{body,NULL}');
SELECT * FROM recompress_table(NULL, 'lz4');
SELECT * FROM recompress_table(0, 'lz4');
CREATE VIEW docs_view AS SELECT * FROM docs;
SELECT * FROM recompress_table('docs_view', 'lz4');
CREATE FOREIGN DATA WRAPPER cx_dummy;
CREATE SERVER cx_dummy_server FOREIGN DATA WRAPPER cx_dummy;
CREATE FOREIGN TABLE docs_foreign (body text) SERVER cx_dummy_server;
SELECT * FROM recompress_table('docs_foreign', 'lz4');
CREATE SEQUENCE docs_seq;
SELECT * FROM recompress_table('docs_seq', 'lz4');
SELECT * FROM recompress_table('docs_pkey', 'lz4');
SELECT * FROM recompress_table('pg_class', 'lz4');
SELECT * FROM recompress_table('pg_toast.pg_toast_1262', 'lz4');

-- only the owner
CREATE ROLE cx_other;
CREATE ROLE cx_owner;
GRANT SELECT, UPDATE ON docs TO cx_other;
SET ROLE cx_other;
SELECT * FROM recompress_table('docs', 'lz4');
RESET ROLE;
-- a non-superuser owner may; a partition owned by somebody else stops a
-- recursive run before any work
ALTER TABLE events OWNER TO cx_owner;
ALTER TABLE events_1 OWNER TO cx_owner;
ALTER TABLE events_2 OWNER TO cx_owner;
ALTER TABLE events_2a OWNER TO cx_other;
SET ROLE cx_owner;
SELECT * FROM recompress_table('events', 'pglz');
RESET ROLE;
SELECT pg_column_compression(payload), count(*) FROM events GROUP BY 1;
ALTER TABLE events_2a OWNER TO cx_owner;
SET ROLE cx_owner;
SELECT column_name, values_rewritten FROM recompress_table('events', 'pglz');
RESET ROLE;
SELECT pg_column_compression(payload), count(*) FROM events GROUP BY 1;
DROP TABLE events;
REVOKE ALL ON docs FROM cx_other;
DROP ROLE cx_other;
DROP ROLE cx_owner;

-- compressx tables: a value counts as rewritten when its stored form
-- changes (not the short ones below min_size, plain before and after);
-- bytes_after is what the table stores afterwards, also for codec "none",
-- whose values stay whole (heap's toaster compressed them in rows above
-- 2 kB before issue 33, item C14: storage EXTERNAL now)
CREATE TABLE rc_cx (id integer, short text, body text) USING compressx;
INSERT INTO rc_cx SELECT i, 'tiny ' || i, repeat('recompress me ' || i, 300) FROM generate_series(1, 20) i;
SELECT column_name, values_rewritten FROM recompress_table('rc_cx', 'lz4');
SELECT column_name, values_rewritten FROM recompress_table('rc_cx', 'lz4');
CREATE TEMP TABLE rc_none AS SELECT * FROM recompress_table('rc_cx', 'none');
SELECT r.column_name, r.values_rewritten, r.bytes_after < 40000 AS small,
       r.bytes_after = s.stored_bytes AS after_is_stored, s.methods
FROM rc_none r JOIN compressx.column_stats('rc_cx') s USING (column_name) ORDER BY 1;
SELECT count(*) FILTER (WHERE body = repeat('recompress me ' || id, 300)) AS intact FROM rc_cx;
DROP TABLE rc_cx, rc_none;

-- a session that has the table's row type cached (row_to_json) keeps a
-- working descriptor through the recompression (it read a freed one)
CREATE TABLE rc_rowtype (id integer, body text);
INSERT INTO rc_rowtype SELECT i, repeat('row type ' || i, 300) FROM generate_series(1, 5) i;
SELECT count(row_to_json(r)) AS cached FROM rc_rowtype r;
SELECT column_name, values_rewritten FROM recompress_table('rc_rowtype', 'lz4');
CREATE TABLE rc_rowtype_cx (id integer, body text) USING compressx;
INSERT INTO rc_rowtype_cx SELECT * FROM rc_rowtype;
SELECT count(row_to_json(r)) AS cached FROM rc_rowtype_cx r;
SELECT column_name, values_rewritten FROM recompress_table('rc_rowtype_cx', 'pglz');
DROP TABLE rc_rowtype, rc_rowtype_cx;

-- the triggers never fired
SELECT (SELECT sum FROM checksums WHERE label = 'before')
     = md5(string_agg(id || title || body || extra || counter, ',' ORDER BY id)) AS identical
FROM docs;

DROP MATERIALIZED VIEW docs_mv;
DROP VIEW docs_view;
DROP FOREIGN TABLE docs_foreign;
DROP SERVER cx_dummy_server;
DROP FOREIGN DATA WRAPPER cx_dummy;
DROP SEQUENCE docs_seq;
DROP TABLE docs, checksums;
DROP FUNCTION forbid();
