-- compressx.max_codec_memory bounds a zstd compression with a dictionary
-- too (issue 33, item A5): with one, zstd's parameters were not narrowed
-- (a 2 MB value at level 22 grew the backend by 65 MB under a 16 MB bound,
-- against 5 MB without a dictionary).  Memory is read from
-- /proc/self/status of this backend.
CREATE TABLE mem_dict (id integer, b text) USING compressx;
INSERT INTO mem_dict
SELECT i, json_build_object('id', i, 'kind', 'kind ' || i % 7, 'pad', md5(i::text))::text
FROM generate_series(1, 5000) i;
SELECT compressx.train_dictionary('mem_dict', 'b', 112640, 5000) > 0 AS trained;
SELECT compressx.set_column_codec('mem_dict', 'b', 'zstd', 22);
CREATE TABLE mem_src AS
SELECT string_agg(md5(i::text), '') AS b FROM generate_series(1, 65536) i;
-- a fresh backend, whose peak is its current size
\c
CREATE FUNCTION pg_temp.vm(field text) RETURNS bigint LANGUAGE sql AS $$
    SELECT (regexp_match(pg_read_file('/proc/self/status'), field || ':\s+(\d+) kB'))[1]::bigint * 1024
$$;
SELECT pg_temp.vm('VmHWM') AS hwm0 \gset
SET compressx.max_codec_memory = '16MB';
INSERT INTO mem_dict SELECT -1, b FROM mem_src;
-- the bound and the value's copies (2 MB each), with room to spare
SELECT (pg_temp.vm('VmHWM') - :hwm0) / 1048576 < 16 + 16 AS peak_bounded;
RESET compressx.max_codec_memory;
-- compressed with the dictionary, and reads back
SELECT v.method, v.stored_bytes < v.raw_bytes * 0.6 AS compressed,
       s.dict_id IS NOT NULL AS has_dictionary
FROM mem_dict, compressx.value_storage('mem_dict', mem_dict.ctid, 'b') v,
     compressx.column_settings s
WHERE id = -1 AND s.relid = 'mem_dict'::regclass;
SELECT m.b = s.b AS reads_back FROM mem_dict m, mem_src s WHERE m.id = -1;
DROP TABLE mem_dict, mem_src;
