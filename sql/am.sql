-- The compressx table access method: storage, settings, reads, writes
SET compressx.default_codec = zstd;
SET compressx.default_level = 0;
SET compressx.min_size = 64;

CREATE TABLE docs (
    id integer PRIMARY KEY,
    title text,                 -- short: below min_size, stored plain
    body text,                  -- zstd by default
    meta jsonb,
    blob bytea,
    n integer
) USING compressx;
INSERT INTO docs
SELECT i, 'doc ' || i,
       repeat('body of document ' || i || ' with words and more words. ', 5 + i % 40),
       jsonb_build_object('id', i, 'tags', jsonb_build_array('alpha', 'beta', 'gamma'),
                          'note', repeat('n', 80)),
       CASE WHEN i % 25 = 0
            THEN (SELECT decode(string_agg(md5(k::text || i), ''), 'hex')
                  FROM generate_series(1, 700) k)
                 || convert_to(repeat('compressible tail ', 800), 'UTF8')
       END,
       i
FROM generate_series(1, 400) i;
CREATE TABLE docs_copy AS SELECT * FROM docs;   -- plain heap copy, for comparison

SELECT amname FROM pg_am a JOIN pg_class c ON c.relam = a.oid WHERE c.relname = 'docs';

-- every value reads back identical to the heap copy
CREATE FUNCTION same(a regclass, b regclass) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE ra text; rb text;
BEGIN
    EXECUTE format('SELECT md5(string_agg(t::text, '','' ORDER BY id)) FROM %s t', a) INTO ra;
    EXECUTE format('SELECT md5(string_agg(t::text, '','' ORDER BY id)) FROM %s t', b) INTO rb;
    RETURN ra = rb;
END $$;
SELECT same('docs', 'docs_copy');

-- stored forms: zstd for body, meta and blob; title below min_size; blob out of line
SELECT column_name, "values", methods, external_values > 0 AS has_external,
       ratio > 1 AS shrinks
FROM compressx.column_stats('docs');

-- compressx.inline_max: stored zstd values larger than it go out of line
CREATE TABLE inl (id integer, body text) USING compressx;
INSERT INTO inl SELECT i, (SELECT string_agg(md5(k::text || i), '') FROM generate_series(1, 20) k)
FROM generate_series(1, 20) i;                 -- 640 hex chars, about 400 bytes as zstd
SET compressx.inline_max = 200;
INSERT INTO inl SELECT id + 100, body FROM inl;
RESET compressx.inline_max;
-- the 20 rows written with inline_max 200 hold references, the others not
SELECT methods, external_values FROM compressx.column_stats('inl');
SELECT count(*) FILTER (WHERE body = (SELECT string_agg(md5(k::text || (id % 100)), '') FROM generate_series(1, 20) k))
    AS identical FROM inl;
DROP TABLE inl;

-- a column's own inline limit (set_column_inline) beats the setting's, for
-- that column only; NULL returns it to compressx.inline_max
CREATE TABLE inl2 (id integer, a text, b text) USING compressx;
SELECT compressx.set_column_inline('inl2', 'a', 200);
SELECT column_name, codec, explicit FROM compressx.column_codec_settings('inl2') ORDER BY 1;
INSERT INTO inl2 SELECT i, v, v FROM generate_series(1, 20) i,
    LATERAL (SELECT string_agg(md5(k::text || i), '') AS v FROM generate_series(1, 20) k) x;
SELECT column_name, external_values FROM compressx.column_stats('inl2') ORDER BY 1;
SET compressx.inline_max = 100;                -- the column's 200 still rules a
INSERT INTO inl2 SELECT id + 100, a, b FROM inl2 WHERE id <= 20;
RESET compressx.inline_max;
SELECT column_name, external_values FROM compressx.column_stats('inl2') ORDER BY 1;
SELECT compressx.set_column_inline('inl2', 'a', NULL);
VACUUM FULL inl2;                              -- re-encodes: every value inline again
SELECT column_name, external_values FROM compressx.column_stats('inl2') ORDER BY 1;
SELECT count(*) AS identical FROM inl2
WHERE a = b AND a = (SELECT string_agg(md5(k::text || (id % 100)), '') FROM generate_series(1, 20) k);
\set VERBOSITY terse
SELECT compressx.set_column_inline('inl2', 'a', 24);          -- not above a reference's size
SELECT compressx.set_column_inline('inl2', 'nope', 500);      -- no such column
SELECT compressx.set_column_inline('inl2', 'id', 500);        -- not variable-length
SELECT compressx.set_column_inline(NULL, 'a', 500);
\set VERBOSITY default
DROP TABLE inl2;


-- reads decode lazily: count(*) and narrow columns decode nothing (an
-- aggregate keeps a copy of its first input row: at most one row's values)
SELECT compressx.decoded_values() AS d0 \gset
SELECT count(*) FROM docs;
SELECT sum(n), count(title) FROM docs;
SELECT id FROM docs WHERE n % 100 = 0 ORDER BY id;
SELECT count(*) FROM docs WHERE octet_length(body) > 1000;
SELECT compressx.decoded_values() - :d0 < 10 AS narrow_queries_decode_nothing;
SELECT count(*) FROM docs WHERE body LIKE '%document 7 %';
SELECT compressx.decoded_values() - :d0 >= 400 AS reading_body_decodes_it;

-- system columns and a row's identity survive decoding and materializing
SELECT ctid = '(0,1)' AS ctid_ok, xmin::text::bigint > 0 AS xmin_ok, tableoid = 'docs'::regclass AS tableoid_ok
FROM docs WHERE id = 1;
SELECT count(*) FROM (SELECT DISTINCT ON (body) body FROM docs ORDER BY body) s;

-- settings
SELECT compressx.set_column_codec('docs', 'body', 'lz4');
SELECT compressx.set_column_codec('docs', 'meta', 'pglz', min_size => 16);
SELECT compressx.set_column_codec('docs', 'blob', 'zstd', 19);
SELECT column_name, codec, level, min_size, explicit FROM compressx.column_codecs
WHERE table_name = 'docs' ORDER BY column_name;
SELECT relid, attname, attnum, codec, level, min_size FROM compressx.column_settings ORDER BY attnum;
INSERT INTO docs SELECT id + 1000, title, body, meta, blob, n FROM docs_copy WHERE id <= 50;
-- new rows follow the settings; core reads pglz and lz4 natively
SELECT pg_column_compression(body) AS body, pg_column_compression(meta) AS meta, count(*)
FROM docs WHERE id > 1000 GROUP BY 1, 2;
-- VACUUM FULL re-encodes every value to the current settings
VACUUM FULL docs;
SELECT column_name, methods FROM compressx.column_stats('docs') ORDER BY column_name;

DELETE FROM docs WHERE id > 1000;
SELECT same('docs', 'docs_copy');
-- CLUSTER too, after a reset to the defaults
SELECT compressx.reset_column_codec('docs', 'body');
CLUSTER docs USING docs_pkey;
SELECT column_name, methods FROM compressx.column_stats('docs') WHERE column_name = 'body';
SELECT same('docs', 'docs_copy');
-- codec none
SELECT compressx.set_column_codec('docs', 'title', 'none');
SELECT column_name, codec FROM compressx.column_codecs WHERE table_name = 'docs' AND column_name = 'title';

-- bad settings
SELECT compressx.set_column_codec('docs', 'body', 'brotli');
SELECT compressx.set_column_codec('docs', 'body', 'zstd', 99);
SELECT compressx.set_column_codec('docs', 'body', 'pglz', 3);
SELECT compressx.set_column_codec('docs', 'body', 'zstd', min_size => -1);
SELECT compressx.set_column_codec('docs', 'nope', 'zstd');
SELECT compressx.set_column_codec('docs', 'n', 'zstd');
SELECT compressx.set_column_codec('docs', NULL, 'zstd');
SELECT compressx.set_column_codec('docs_pkey', 'id', 'zstd');
SELECT compressx.set_column_codec('pg_class', 'relname', 'zstd');
SELECT compressx.reset_column_codec('docs', 'nope');
-- temporary tables cannot have settings: their rows could outlive them
CREATE TEMP TABLE docs_temp (id integer, body text) USING compressx;
INSERT INTO docs_temp SELECT i, repeat('temporary ' || i, 20) FROM generate_series(1, 10) i;
SELECT compressx.set_column_codec('docs_temp', 'body', 'lz4');
SELECT compressx.reset_column_codec('docs_temp');
SELECT * FROM recompress_table('docs_temp', 'lz4');
INSERT INTO compressx.column_settings VALUES ('docs_temp', 'body', 2, 'lz4');
SELECT count(*) AS temp_settings FROM compressx.column_settings WHERE relid = 'docs_temp'::regclass;
SELECT column_name, codec, explicit FROM compressx.column_codec_settings('docs_temp');
DROP TABLE docs_temp;
-- a row for a relation or column that does not exist (as an old dump may
-- hold) is skipped with a warning, not an error that would abort the COPY
INSERT INTO compressx.column_settings VALUES ('4000000000', 'body', 2, 'lz4'), ('docs', 'gone', 9, 'lz4');
SELECT count(*) AS skipped_rows_stored FROM compressx.column_settings
WHERE relid = '4000000000'::regclass OR attname = 'gone';
CREATE ROLE cx_stranger;
GRANT SELECT ON docs TO cx_stranger;
SET ROLE cx_stranger;
SELECT compressx.set_column_codec('docs', 'body', 'lz4');
SELECT compressx.reset_column_codec('docs');
INSERT INTO compressx.column_settings VALUES ('docs', 'body', 3, 'lz4', NULL, NULL);
SELECT count(*) AS visible_settings FROM compressx.column_codecs WHERE table_name = 'docs';
RESET ROLE;
REVOKE ALL ON docs FROM cx_stranger;
SET ROLE cx_stranger;
SELECT count(*) AS visible_settings FROM compressx.column_codecs WHERE table_name = 'docs';
RESET ROLE;
DROP ROLE cx_stranger;

-- settings follow renames, and go with dropped columns and tables
ALTER TABLE docs RENAME COLUMN blob TO payload;
SELECT attname, codec, level FROM compressx.column_settings WHERE relid = 'docs'::regclass ORDER BY attname;
ALTER TABLE docs DROP COLUMN title;
SELECT attname FROM compressx.column_settings WHERE relid = 'docs'::regclass ORDER BY attname;
-- ALTER COLUMN TYPE rewrites through the transient table: settings still apply
ALTER TABLE docs ALTER COLUMN meta TYPE text USING meta::text;
SELECT column_name, methods FROM compressx.column_stats('docs') WHERE column_name = 'meta';

-- UPDATE reuses unchanged stored values: no new TOAST data, little WAL
SELECT pg_relation_size(reltoastrelid) AS toast_before FROM pg_class WHERE relname = 'docs' \gset
SELECT pg_current_wal_insert_lsn() AS lsn0 \gset
SELECT compressx.decoded_values() AS d0 \gset
UPDATE docs SET n = n + 1 WHERE payload IS NOT NULL;
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'lsn0') < 20000 AS little_wal;
-- ... found by their stored bytes: the update decoded nothing
SELECT compressx.decoded_values() - :d0 AS decoded_by_update;
-- RETURNING still sees system columns and the values; only what it reads is decoded
UPDATE docs SET n = n + 1 WHERE id IN (3, 4)
RETURNING id, xmin = pg_current_xact_id()::xid AS own_xmin, ctid IS NOT NULL AS has_ctid,
          tableoid = 'docs'::regclass AS tableoid_ok, n, md5(body) = (SELECT md5(body) FROM docs_copy c WHERE c.id = docs.id) AS body_ok;
SELECT compressx.decoded_values() - :d0 AS decoded_by_returning;
-- a value taken from another column is decoded and encoded for its own column
UPDATE docs SET meta = body WHERE id = 5;
SELECT meta = body AS copied, md5(meta) = (SELECT md5(body) FROM docs_copy WHERE id = 5) AS same_text
FROM docs WHERE id = 5;
SELECT pg_relation_size(reltoastrelid) = :toast_before AS toast_unchanged
FROM pg_class WHERE relname = 'docs';
-- and a changed value is re-encoded and its old out-of-line value deleted
UPDATE docs SET payload = payload || '\x00'::bytea WHERE id = 25;
SELECT octet_length(payload) FROM docs WHERE id = 25;

-- no out-of-line value is left behind: DELETE, UPDATE, aborted inserts, ON CONFLICT
CREATE FUNCTION toast_values(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
                   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel)) INTO n;
    RETURN n;
END $$;
CREATE TABLE leak (k integer PRIMARY KEY, v text) USING compressx;
INSERT INTO leak SELECT i, (SELECT string_agg(md5(j::text || i), '') FROM generate_series(1, 200) j)
FROM generate_series(1, 10) i;
SELECT (SELECT sum(external_values) FROM compressx.column_stats('leak')) AS refs, toast_values('leak');
BEGIN;
INSERT INTO leak SELECT i, (SELECT string_agg(md5(j::text || i), '') FROM generate_series(1, 200) j)
FROM generate_series(11, 20) i;
ROLLBACK;
INSERT INTO leak VALUES (1, (SELECT string_agg(md5(j::text || 'x'), '') FROM generate_series(1, 200) j))
ON CONFLICT (k) DO NOTHING;
INSERT INTO leak VALUES (2, (SELECT string_agg(md5(j::text || 'y'), '') FROM generate_series(1, 200) j))
ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v;
UPDATE leak SET v = v || 'z' WHERE k = 3;
DELETE FROM leak WHERE k = 4;
VACUUM leak;
SELECT (SELECT sum(external_values) FROM compressx.column_stats('leak')) AS refs, toast_values('leak');
TRUNCATE leak;
SELECT toast_values('leak');
-- one command meeting a row twice, where the new value goes out of line:
-- UPDATE .. FROM updates it once and MERGE refuses (21000), as for heap,
-- and no out-of-line value is left behind
CREATE TABLE twice (id integer PRIMARY KEY, body text) USING compressx;
CREATE TABLE twice_heap (id integer PRIMARY KEY, body text);
INSERT INTO twice SELECT 1, string_agg(md5(k::text), '') FROM generate_series(1, 375) k;
INSERT INTO twice_heap SELECT * FROM twice;
UPDATE twice s SET body = s.body || v.x FROM (VALUES (1, 'a'), (1, 'b')) v(id, x) WHERE s.id = v.id;
UPDATE twice_heap s SET body = s.body || v.x FROM (VALUES (1, 'a'), (1, 'b')) v(id, x) WHERE s.id = v.id;
SELECT length(body) - 12000 AS suffixes, right(body, 1) IN ('a', 'b') AS one_of_them,
       left(body, 12000) = (SELECT string_agg(md5(k::text), '') FROM generate_series(1, 375) k) AS rest_kept
FROM twice;
SELECT length(body) - 12000 AS suffixes FROM twice_heap;
MERGE INTO twice s USING (VALUES (1, 'c'), (1, 'd')) v(id, x) ON s.id = v.id
WHEN MATCHED THEN UPDATE SET body = s.body || v.x;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
MERGE INTO twice_heap s USING (VALUES (1, 'c'), (1, 'd')) v(id, x) ON s.id = v.id
WHEN MATCHED THEN UPDATE SET body = s.body || v.x;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT length(body) - 12000 AS suffixes FROM twice;
VACUUM twice;
SELECT (SELECT sum(external_values) FROM compressx.column_stats('twice')) AS refs, toast_values('twice');
DROP TABLE twice, twice_heap;
-- settings survive TRUNCATE
SELECT compressx.set_column_codec('leak', 'v', 'lz4');
TRUNCATE leak;
INSERT INTO leak VALUES (1, repeat('after truncate ', 100));
SELECT codec FROM compressx.column_codecs WHERE table_name = 'leak' AND column_name = 'v';
SELECT pg_column_compression(v) FROM leak;
-- the ratio views cover compressx tables, with their own method
SET compressx.ratio_sample_rows = 100000;
SELECT table_name, column_name, access_method, methods
FROM compressx.column_ratios WHERE table_name = 'docs' AND column_name = 'body';
SELECT table_name, access_method, ratio > 1 AS shrinks FROM compressx.table_ratios WHERE table_name = 'docs';
RESET compressx.ratio_sample_rows;

-- indexes of every kind see decoded values, built plainly and concurrently
CREATE TABLE words (id integer, body text, doc tsvector, r int4range) USING compressx;
INSERT INTO words SELECT i, repeat(md5(i::text), 3 + i % 5) || ' word' || (i % 17),
       to_tsvector('simple', 'word' || (i % 17) || ' ' || repeat('filler ', 30)),
       int4range(i, i + 10)
FROM generate_series(1, 2000) i;
CREATE INDEX words_btree ON words (body);
CREATE INDEX words_expr ON words (lower(substr(body, 1, 40)));
CREATE INDEX words_partial ON words (id) WHERE body LIKE '%word3';
CREATE INDEX words_hash ON words USING hash (body);
CREATE INDEX words_gin ON words USING gin (doc);
CREATE INDEX words_gist ON words USING gist (r);
CREATE INDEX words_brin ON words USING brin (id);
CREATE UNIQUE INDEX CONCURRENTLY words_uniq ON words (body, id);
CREATE INDEX CONCURRENTLY words_conc_expr ON words (md5(body));
REINDEX TABLE words;
REINDEX TABLE CONCURRENTLY words;
SELECT indexrelid::regclass, indisvalid FROM pg_index WHERE indrelid = 'words'::regclass ORDER BY 1;
SET enable_seqscan = off;
SELECT count(*) FROM words WHERE body = repeat(md5('7'), 5) || ' word7';
SELECT count(*) FROM words WHERE lower(substr(body, 1, 40)) = lower(substr(repeat(md5('7'), 5), 1, 40));
SELECT count(*) FROM words WHERE body LIKE '%word3' AND id < 100;
SELECT count(*) FROM words WHERE doc @@ to_tsquery('simple', 'word5');
SELECT count(*) FROM words WHERE r @> 15;
SELECT count(*) FROM words WHERE md5(body) = md5(repeat(md5('9'), 3) || ' word9');
RESET enable_seqscan;
SELECT count(*) FROM words WHERE body LIKE '%word3' AND id < 100;

-- ALTER TABLE .. SET ACCESS METHOD, both ways
CREATE TABLE moving AS SELECT * FROM docs_copy;
ALTER TABLE moving ADD PRIMARY KEY (id);
SELECT compressx.set_column_codec('moving', 'body', 'zstd', 9);
ALTER TABLE moving SET ACCESS METHOD compressx;
SELECT column_name, methods FROM compressx.column_stats('moving') WHERE column_name IN ('body', 'meta') ORDER BY 1;
SELECT same('moving', 'docs_copy');
ALTER TABLE moving SET ACCESS METHOD heap;
SELECT column_name, methods ?| ARRAY['zstd'] AS any_zstd FROM compressx.column_stats('moving') ORDER BY 1;
SELECT same('moving', 'docs_copy');

ALTER TABLE moving SET ACCESS METHOD compressx;

-- default_table_access_method
SET default_table_access_method = compressx;
CREATE TABLE by_default (t text);
SELECT amname FROM pg_am a JOIN pg_class c ON c.relam = a.oid WHERE c.relname = 'by_default';
RESET default_table_access_method;

-- recompress_table on compressx tables takes every codec and level
SELECT column_name, values_rewritten > 0 AS rewritten, bytes_after < bytes_before * 1.1 AS still_small
FROM recompress_table('moving', 'zstd', 19, '{body}');
SELECT column_name, methods FROM compressx.column_stats('moving') WHERE column_name = 'body';
SELECT column_name, codec, level FROM compressx.column_codecs WHERE table_name = 'moving' AND column_name = 'body';
-- no level: the codec's default, a changed setting, applied to every value
SELECT column_name, values_rewritten > 0 AS rewritten FROM recompress_table('moving', 'zstd', columns => '{body}');
SELECT column_name, values_rewritten FROM recompress_table('moving', columns => '{body}');
SELECT column_name, values_rewritten > 0 AS rewritten FROM recompress_table('moving', 'none', columns => '{body}');
SELECT column_name, methods FROM compressx.column_stats('moving') WHERE column_name = 'body';
SELECT same('moving', 'docs_copy');

-- COPY out and in, triggers and RETURNING see plain values
CREATE TABLE seen (body_md5 text);
CREATE FUNCTION remember() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO seen VALUES (md5(NEW.body)); RETURN NEW; END $$;
CREATE TABLE trig (id integer, body text) USING compressx;
CREATE TRIGGER trig_remember BEFORE INSERT OR UPDATE ON trig FOR EACH ROW EXECUTE FUNCTION remember();
INSERT INTO trig SELECT id, body FROM docs_copy WHERE id <= 3 RETURNING id, md5(body) = md5((SELECT body FROM docs_copy c WHERE c.id = trig.id)) AS plain;
UPDATE trig SET id = id + 10 RETURNING id, length(body) > 100 AS plain;
SELECT count(*) FROM seen s JOIN docs_copy c ON md5(c.body) = s.body_md5;
COPY (SELECT * FROM trig ORDER BY id) TO STDOUT WITH (FORMAT csv);
CREATE TABLE trig2 (LIKE trig) USING compressx;
COPY trig2 FROM STDIN WITH (FORMAT csv);
1,"copied in through multi_insert, copied in through multi_insert, copied in through multi_insert, copied in"
2,short
\.
SELECT id, length(body), pg_column_compression(body) IS NULL AS own_format FROM trig2 ORDER BY id;

DROP TABLE docs, docs_copy, leak, words, moving, by_default, seen, trig, trig2;
DROP FUNCTION same(regclass, regclass);
DROP FUNCTION toast_values(regclass);
DROP FUNCTION remember();
-- settings of dropped tables are gone
SELECT count(*) FROM compressx.column_settings;

-- the defaults of columns without a setting follow the GUCs
CREATE TABLE guc (id integer, body text) USING compressx;
SET compressx.default_codec = lz4;
SET compressx.default_level = 9;
SET compressx.min_size = 1000;
SELECT column_name, codec, level, min_size, explicit FROM compressx.column_codec_settings('guc');
INSERT INTO guc VALUES (1, repeat('below min_size ', 50)), (2, repeat('above min_size ', 100));
SELECT id, pg_column_compression(body) AS method FROM guc ORDER BY id;
-- a default level the codec does not take falls back to the codec's default
SET compressx.default_level = 19;
SELECT codec, level FROM compressx.column_codec_settings('guc');
SET compressx.default_codec = zstd;
SELECT codec, level FROM compressx.column_codec_settings('guc');
SET compressx.default_codec = pglz;
SELECT codec, level FROM compressx.column_codec_settings('guc');
RESET compressx.default_codec;
RESET compressx.default_level;
RESET compressx.min_size;
DROP TABLE guc;

-- on a partitioned table, settings go to the table and its partitions
CREATE TABLE parted (id integer, body text) PARTITION BY RANGE (id);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (100) USING compressx;
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (100) TO (200) USING compressx;
SELECT compressx.set_column_codec('parted', 'body', 'lz4', 5);
SELECT relid, codec, level FROM compressx.column_settings WHERE relid::text LIKE 'parted%' ORDER BY 1;
SELECT compressx.reset_column_codec('parted', 'body');
SELECT count(*) FROM compressx.column_settings WHERE relid::text LIKE 'parted%';
DROP TABLE parted;
