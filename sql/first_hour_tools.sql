-- Issue 28 A1, A5: which codec a column of a compressx table gets when the
-- user chose nothing compressx-specific, what \d+ shows for it
-- (pg_attribute.attcompression), and what tells the codec and stored size
-- of one value.
SET compressx.default_codec = zstd;
SET compressx.default_level = 0;
-- what \d+ prints in its Compression column, per variable-length column
CREATE FUNCTION fht_shown(rel regclass) RETURNS text LANGUAGE sql AS $$
SELECT string_agg(a.attname || '=' || CASE a.attcompression WHEN 'p' THEN 'pglz'
                                                           WHEN 'l' THEN 'lz4' ELSE '' END,
                  ', ' ORDER BY a.attnum)
FROM pg_attribute a
WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attlen = -1
$$;
-- the stored codecs of a column's values, as {codec: count}
CREATE FUNCTION fht_codecs(rel regclass, col name) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE format('SELECT string_agg(c || '':'' || n, '', '' ORDER BY c) FROM '
                   '(SELECT compressx.stored_codec(tableoid, ctid, %L) c, count(*) n '
                   'FROM %s GROUP BY 1) x', col, rel) INTO r;
    RETURN r;
END
$$;

-- 1. The demo's table: recompress_table(.., 'pglz') on heap left COMPRESSION
-- pglz on its columns; moving it to compressx gives compressx's default
-- (zstd) all the same, and says that the COMPRESSION is not kept.
CREATE TABLE fht_docs (name text, body text);
INSERT INTO fht_docs SELECT 'page ' || g, repeat('<p>documentation page ' || g || '</p>', 200)
FROM generate_series(1, 30) g;
SELECT column_name, values_rewritten FROM compressx.recompress_table('fht_docs', 'pglz') ORDER BY 1;
SELECT fht_shown('fht_docs');
SELECT fht_codecs('fht_docs', 'body');
ALTER TABLE fht_docs SET ACCESS METHOD compressx;
SELECT fht_shown('fht_docs');
SELECT fht_codecs('fht_docs', 'body');
SELECT column_name, codec, explicit FROM compressx.column_codec_settings('fht_docs') ORDER BY 1;
-- new rows too
INSERT INTO fht_docs VALUES ('new', repeat('<p>new page</p>', 300));
SELECT compressx.stored_codec(tableoid, ctid, 'body') FROM fht_docs WHERE name = 'new';
-- settings chosen with compressx's functions while the table was heap
-- (pending) are kept by the move, and \d+ shows them where core has a name
CREATE TABLE fht_pend (a text COMPRESSION lz4, b text COMPRESSION pglz, c text);
SELECT compressx.set_column_codec('fht_pend', 'a', 'pglz');
SELECT compressx.set_column_codec('fht_pend', 'b', 'zstd', 5);
SELECT fht_shown('fht_pend');
ALTER TABLE fht_pend SET ACCESS METHOD compressx;
SELECT fht_shown('fht_pend');
SELECT column_name, codec, explicit FROM compressx.column_codec_settings('fht_pend') ORDER BY 1;
DROP TABLE fht_pend;

-- 2. A COMPRESSION chosen on a compressx table is the user's choice: it
-- applies, and a NOTICE says that it differs from compressx.default_codec
-- and how to change it.
CREATE TABLE fht_t (a text COMPRESSION lz4, b text, c text COMPRESSION pglz) USING compressx;
SELECT fht_shown('fht_t');
SELECT column_name, codec, explicit FROM compressx.column_codec_settings('fht_t') ORDER BY 1;
-- the same statement with the table named by default_table_access_method
SET default_table_access_method = compressx;
CREATE TABLE fht_t2 (a text COMPRESSION pglz, b text);
RESET default_table_access_method;
-- CREATE TABLE .. LIKE .. INCLUDING COMPRESSION chooses it too; AS does not
CREATE TABLE fht_like (LIKE fht_t INCLUDING COMPRESSION) USING compressx;
CREATE TABLE fht_as USING compressx AS SELECT * FROM fht_t;
SELECT fht_shown('fht_like') AS fht_like, fht_shown('fht_as') AS fht_as;
DROP TABLE fht_t2, fht_like, fht_as;
ALTER TABLE fht_t ALTER COLUMN b SET COMPRESSION pglz;
SELECT fht_shown('fht_t');
INSERT INTO fht_t SELECT repeat('a' || g, 100), repeat('b' || g, 100), repeat('c' || g, 100)
FROM generate_series(1, 5) g;
SELECT fht_codecs('fht_t', 'a') AS a, fht_codecs('fht_t', 'b') AS b, fht_codecs('fht_t', 'c') AS c;
-- back to the default: a COMPRESSION of the same method as the default
-- says nothing; reset_column_codec forgets COMPRESSION too
ALTER TABLE fht_t ALTER COLUMN b SET COMPRESSION default;
SELECT compressx.reset_column_codec('fht_t', 'c');
SELECT fht_shown('fht_t');

-- 3. compressx's settings are mirrored into attcompression where core has
-- a name for the codec (pglz, lz4), blank for zstd, none and the default.
SELECT compressx.set_column_codec('fht_t', 'b', 'lz4');
SELECT fht_shown('fht_t');
SELECT compressx.set_column_codec('fht_t', 'b', 'zstd', 19);
SELECT fht_shown('fht_t');
SELECT compressx.set_column_codec('fht_t', 'a', 'none');
SELECT fht_shown('fht_t');
SELECT compressx.set_column_codec('fht_t', 'a', 'pglz');
SELECT fht_shown('fht_t');
SELECT compressx.reset_column_codec('fht_t', 'a');
SELECT fht_shown('fht_t');
-- a COMPRESSION where compressx has a setting of its own does not apply:
-- the NOTICE says so, and \d+ keeps showing the setting
ALTER TABLE fht_t ALTER COLUMN b SET COMPRESSION lz4;
SELECT fht_shown('fht_t');
SELECT column_name, codec, explicit FROM compressx.column_codec_settings('fht_t') ORDER BY 1;
-- recompress_table on a compressx table sets the codec: mirrored too
SELECT column_name, values_rewritten FROM compressx.recompress_table('fht_t', 'lz4', NULL, '{c}');
SELECT fht_shown('fht_t');
SELECT fht_codecs('fht_t', 'c') AS c;
-- partitions: a new one follows its parent's setting and shows it; reset
-- on a partition leaves it following the parent's
CREATE TABLE fht_parted (id int, body text) PARTITION BY RANGE (id);
CREATE TABLE fht_parted_1 PARTITION OF fht_parted FOR VALUES FROM (0) TO (10) USING compressx;
SELECT compressx.set_column_codec('fht_parted', 'body', 'lz4');
CREATE TABLE fht_parted_2 PARTITION OF fht_parted FOR VALUES FROM (10) TO (20) USING compressx;
SELECT fht_shown('fht_parted_1') AS p1, fht_shown('fht_parted_2') AS p2;
SELECT compressx.reset_column_codec('fht_parted_1', 'body');
SELECT fht_shown('fht_parted_1') AS p1;
SELECT compressx.reset_column_codec('fht_parted');
SELECT fht_shown('fht_parted_1') AS p1, fht_shown('fht_parted_2') AS p2;
DROP TABLE fht_parted;
-- heap tables keep their own attcompression: a setting there is pending
CREATE TABLE fht_heap (a text COMPRESSION lz4, b text);
SELECT compressx.set_column_codec('fht_heap', 'b', 'pglz');
SELECT fht_shown('fht_heap');
-- back to heap: every attcompression is a method heap stores
ALTER TABLE fht_t SET ACCESS METHOD heap;
SELECT fht_shown('fht_t');
INSERT INTO fht_t SELECT repeat('a' || g, 1000), repeat('b' || g, 1000), repeat('c' || g, 1000)
FROM generate_series(1, 3) g;
SELECT pg_column_compression(a) AS a, pg_column_compression(b) AS b,
       pg_column_compression(c) AS c, count(*)
FROM fht_t GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
DROP TABLE fht_heap;

-- 4. The online moves follow the same rule.
CREATE TABLE fht_on (id int PRIMARY KEY, body text COMPRESSION lz4, note text);
INSERT INTO fht_on SELECT g, repeat('online body ' || g, 200), 'n' FROM generate_series(1, 20) g;
CALL compressx.recompress_online('fht_on', access_method => 'compressx');
SELECT fht_shown('fht_on');
SELECT fht_codecs('fht_on', 'body');
SELECT compressx.set_column_codec('fht_on', 'body', 'pglz');
CALL compressx.recompress_online('fht_on', 'lz4');
SELECT fht_shown('fht_on');
SELECT fht_codecs('fht_on', 'body');
CALL compressx.recompress_online('fht_on', access_method => 'heap');
SELECT fht_shown('fht_on');
SELECT pg_column_compression(body), count(*) FROM fht_on GROUP BY 1;
DROP TABLE fht_on;

-- 5. Per value: stored codec and stored size of any value.  On heap they
-- agree with pg_column_compression() and pg_column_size().
CREATE TABLE fht_hv (kind text, v text);
ALTER TABLE fht_hv ALTER COLUMN v SET STORAGE external;
INSERT INTO fht_hv VALUES ('external uncompressed', repeat('x', 5000));
ALTER TABLE fht_hv ALTER COLUMN v SET STORAGE extended;
INSERT INTO fht_hv VALUES ('inline', 'small value');
ALTER TABLE fht_hv ALTER COLUMN v SET COMPRESSION lz4;
INSERT INTO fht_hv VALUES ('lz4', repeat('lz4 value ', 400));
ALTER TABLE fht_hv ALTER COLUMN v SET COMPRESSION pglz;
INSERT INTO fht_hv VALUES ('pglz', repeat('pglz value ', 400));
INSERT INTO fht_hv VALUES ('incompressible external', (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 400) g));
SELECT kind, compressx.stored_codec(tableoid, ctid, 'v') AS stored_codec,
       pg_column_compression(v),
       compressx.stored_size(tableoid, ctid, 'v') = pg_column_size(v) AS size_agrees
FROM fht_hv ORDER BY kind;
-- on compressx: zstd values (pg_column_compression NULL, pg_column_size the
-- raw size), lz4 values, values with dictionaries
CREATE TABLE fht_cv (kind text, v text) USING compressx;
INSERT INTO fht_cv VALUES ('zstd', repeat('zstd value ', 400));
INSERT INTO fht_cv VALUES ('small', 'tiny');
SELECT compressx.set_column_codec('fht_cv', 'v', 'lz4');
INSERT INTO fht_cv VALUES ('lz4', repeat('lz4 value ', 400));
SELECT compressx.set_column_codec('fht_cv', 'v', 'zstd');
INSERT INTO fht_cv SELECT 'train', '{"event": "login", "user": ' || g || ', "agent": "Mozilla/5.0 (X11; Linux x86_64)", "ok": true}'
FROM generate_series(1, 400) g;
SELECT compressx.train_dictionary('fht_cv', 'v', 4096, 400) > 0 AS zstd_dictionary;
INSERT INTO fht_cv VALUES ('zstd dict', '{"event": "login", "user": 9999, "agent": "Mozilla/5.0 (X11; Linux x86_64)", "ok": true}');
SELECT compressx.set_column_codec('fht_cv', 'v', 'lz4');
SELECT compressx.train_dictionary('fht_cv', 'v', 4096, 400) > 0 AS lz4_dictionary;
INSERT INTO fht_cv VALUES ('lz4 dict', '{"event": "login", "user": 8888, "agent": "Mozilla/5.0 (X11; Linux x86_64)", "ok": true}');
SELECT kind, compressx.stored_codec(tableoid, ctid, 'v') AS stored_codec,
       pg_column_compression(v),
       compressx.stored_size(tableoid, ctid, 'v') < pg_column_size(v) AS smaller_than_raw,
       compressx.stored_size(tableoid, ctid, 'v') = pg_column_size(v) AS size_agrees
FROM fht_cv WHERE kind <> 'train' ORDER BY kind;
-- the sum over a column: what pg_column_size() sums on heap
SELECT sum(compressx.stored_size(tableoid, ctid, 'body')) < sum(pg_column_size(body)) / 5 AS stored_much_smaller
FROM fht_docs;
-- NULL for a NULL value or a row that is not there
INSERT INTO fht_cv VALUES ('null', NULL);
SELECT compressx.stored_codec(tableoid, ctid, 'v') IS NULL AS codec_null,
       compressx.stored_size(tableoid, ctid, 'v') IS NULL AS size_null
FROM fht_cv WHERE kind = 'null';
SELECT compressx.stored_codec('fht_cv', '(4000,1)', 'v') IS NULL AS no_row;
SELECT compressx.stored_codec('fht_cv', '(0,1)', 'nope');
DROP TABLE fht_docs, fht_t, fht_hv, fht_cv;
DROP FUNCTION fht_shown(regclass), fht_codecs(regclass, name);
