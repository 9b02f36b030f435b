-- Work any role can start stays cancellable and bounded (issue 17, items 4
-- and 5).  Times are checked against bounds many times what the fixed code
-- takes (and far below what it took before); memory is read from
-- /proc/self/status of this backend.
CREATE TABLE lim_src AS
SELECT convert_to(string_agg(md5(i::text), ''), 'UTF8') AS b FROM generate_series(1, 650000) i;
SELECT length(b) AS source_bytes FROM lim_src;

-- zstd at level 22 on 20 MB (minutes before): cancelled by statement_timeout
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '1s';
SELECT length(compressx.compress(b, 'zstd', 22)) FROM lim_src;
RESET statement_timeout;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '2.5 s' AS cancelled_in_time;

-- lz4 at level 12 on 20 MB (refused before: one library call; in chunks
-- since issue 27, item A4): cancelled by statement_timeout
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '100ms';
SELECT length(compressx.compress(b, 'lz4', 12)) FROM lim_src;
RESET statement_timeout;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '1.5 s' AS cancelled_in_time;
SELECT length(compressx.compress(substr(b, 1, 8 * 1024 * 1024), 'lz4', 12)) > 0 AS lz4_8mb FROM lim_src;

-- memory: a backend does not keep a large compression's buffers ...
\c
CREATE FUNCTION pg_temp.vm(field text) RETURNS bigint LANGUAGE sql AS $$
    SELECT (regexp_match(pg_read_file('/proc/self/status'), field || ':\s+(\d+) kB'))[1]::bigint * 1024
$$;
SELECT substr(b, 1, 4000000) AS b4 INTO TEMP lim4 FROM lim_src;
SELECT pg_temp.vm('VmRSS') AS rss0, pg_temp.vm('VmHWM') AS hwm0 \gset
SET compressx.max_codec_memory = '24MB';
SELECT length(compressx.decompress(compressx.compress(b4, 'zstd', 22))) AS round_trip FROM lim4;
-- ... and one compression stays within compressx.max_codec_memory (level
-- 22 on 4 MB took about 70 MB; here the input's copies add about 12 MB)
SELECT (pg_temp.vm('VmHWM') - :hwm0) / 1048576 < 50 AS peak_bounded;
RESET compressx.max_codec_memory;
SELECT length(compressx.compress(b4, 'zstd', 19)) > 0 AS level19 FROM lim4;
SELECT (pg_temp.vm('VmRSS') - :rss0) / 1048576 < 30 AS memory_returned;
-- the limit is the superuser's to set
CREATE ROLE cx_lim_user;
SET ROLE cx_lim_user;
SET compressx.max_codec_memory = '4GB';
RESET ROLE;
DROP ROLE cx_lim_user;

-- decompression bombs: a header's declared size is checked against what
-- its blocks can produce before anything is allocated.  28 bytes: a
-- compressx frame around a 16-byte zstd frame declaring nearly 1 GB (one empty
-- block); it allocated 1 GB before failing
SELECT compressx.decompress('\x435801033fffff000000000028b52ffde000ffff3f00000000010000'::bytea);
-- a real frame of 100 MB of spaces (about 3 kB) still decodes
SELECT length(compressx.compress(convert_to(repeat(' ', 100000000), 'UTF8'), 'zstd', 1)) < 4000 AS tiny_frame;
SELECT length(compressx.decompress(compressx.compress(convert_to(repeat(' ', 100000000), 'UTF8'), 'zstd', 1))) AS decoded;

-- advise on a large table is cancelled within a value, not a candidate
CREATE TABLE lim_adv (id integer, b text);
ALTER TABLE lim_adv ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO lim_adv
SELECT i, (SELECT string_agg(md5((i * 100000 + j)::text), '') FROM generate_series(1, 32768) j)
FROM generate_series(1, 60) i;
-- (by 6 s it is compressing with zstd at level 19, which took half a minute)
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '6s';
SELECT count(*) FROM compressx.advise('lim_adv', 1000);
RESET statement_timeout;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '8 s' AS cancelled_in_time;

-- training takes a bounded sample (8 MB): one library call, no interrupts
CREATE TABLE lim_dict (id integer, doc text) USING compressx;
INSERT INTO lim_dict
SELECT i, (SELECT string_agg(format('{"id": %s, "k": "%s", "n": %s}', i * 1000 + j, md5(j::text), j % 13), ',')
           FROM generate_series(1, 2000) j)
FROM generate_series(1, 500) i;
SELECT clock_timestamp() AS t0 \gset
SELECT compressx.train_dictionary('lim_dict', 'doc', 16384, 10000) > 0 AS trained;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '5 s' AS trained_in_time;
SELECT sample_bytes <= 8 * 1024 * 1024 AS sample_bounded FROM compressx.dictionaries
WHERE relid = 'lim_dict'::regclass;

DROP TABLE lim_src, lim_adv, lim_dict;
