-- Codec none stores values uncompressed (issue 33, item C14): heap's
-- toaster compressed large values of such a column with pglz (its
-- attcompression is blank), and stored_codec said pglz.  Core's name for
-- "out of line when the row needs it, never compressed" is storage
-- EXTERNAL: a column set to none gets it, and a column leaving none gets
-- its type's storage back.
CREATE TABLE none_t (id integer, doc text, other text) USING compressx;
SELECT compressx.set_column_codec('none_t', 'doc', 'none');
SELECT compressx.set_column_codec('none_t', 'other', 'none');
SELECT attname, attstorage, attcompression FROM pg_attribute
WHERE attrelid = 'none_t'::regclass AND attnum > 0 ORDER BY attnum;
-- compressible text of 10 to 100 kB, and small values beside them
INSERT INTO none_t
SELECT i, repeat('compressible text of row ' || i || '. ', 400 * i), 'small ' || i
FROM generate_series(1, 10) i;
SELECT id, compressx.stored_codec(tableoid, ctid, 'doc') AS codec,
       pg_column_compression(doc) AS core_method,
       pg_column_size(doc) >= octet_length(doc) AS uncompressed,
       compressx.stored_codec(tableoid, ctid, 'other') AS small_codec
FROM none_t ORDER BY id;
SELECT v.method, count(*), bool_and(v.stored_bytes >= v.raw_bytes) AS stored_whole,
       bool_and(v.external) AS external
FROM none_t, compressx.value_storage('none_t', none_t.ctid, 'doc') v
GROUP BY v.method;
SELECT count(*) FILTER (WHERE doc = repeat('compressible text of row ' || id || '. ', 400 * id))
  AS reads_back FROM none_t;
-- leaving none: the column's type storage again, values compressed again
SELECT compressx.set_column_codec('none_t', 'doc', 'pglz');
SELECT compressx.reset_column_codec('none_t', 'other');
SELECT attname, attstorage, attcompression FROM pg_attribute
WHERE attrelid = 'none_t'::regclass AND attnum > 0 ORDER BY attnum;
INSERT INTO none_t VALUES (11, repeat('compressible text of row 11. ', 4400), 'small 11');
SELECT compressx.stored_codec(tableoid, ctid, 'doc') FROM none_t WHERE id = 11;
-- a storage the user chose is not the mirror's to undo
ALTER TABLE none_t ALTER COLUMN other SET STORAGE MAIN;
SELECT compressx.set_column_codec('none_t', 'doc', 'zstd');
SELECT attname, attstorage FROM pg_attribute
WHERE attrelid = 'none_t'::regclass AND attnum > 0 ORDER BY attnum;
DROP TABLE none_t;
