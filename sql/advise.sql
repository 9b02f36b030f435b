-- compressx.advise(): every codec and level on a sample, one recommendation
CREATE TABLE adv (id integer, doc text, note text, n integer);
INSERT INTO adv SELECT i, repeat('{"id": ' || i || ', "tags": ["alpha", "beta"], "text": "advice"} ', 20),
       CASE WHEN i % 2 = 0 THEN md5(i::text) END, i
FROM generate_series(1, 500) i;

-- one row per column and candidate; ratio and speeds measured
SELECT column_name, codec, level, ratio > 0 AS has_ratio,
       compress_mb_s > 0 AS has_compress_speed, decompress_mb_s > 0 AS has_decompress_speed
FROM compressx.advise('adv') ORDER BY column_name, codec, level, dictionary;
-- compressible documents shrink with every codec; short hashes do not
SELECT column_name, bool_and(ratio > 1.5) FILTER (WHERE codec <> 'none') AS all_shrink,
       bool_and(ratio <= 1) AS none_shrink
FROM compressx.advise('adv') GROUP BY column_name ORDER BY column_name;
-- exactly one recommendation per column; zstd-19 beats zstd-1 on ratio
SELECT column_name, count(*) FILTER (WHERE recommended) AS recommendations
FROM compressx.advise('adv') GROUP BY column_name ORDER BY column_name;
SELECT (SELECT ratio FROM compressx.advise('adv') WHERE column_name = 'doc' AND codec = 'zstd' AND level = 19)
    >= (SELECT ratio FROM compressx.advise('adv') WHERE column_name = 'doc' AND codec = 'zstd' AND level = 1)
       AS higher_level_not_worse;
-- zstd with a dictionary trained on half the sample, measured on the other half
SELECT column_name, count(*) FILTER (WHERE dictionary) AS dictionary_rows,
       max(ratio) FILTER (WHERE dictionary) >= max(ratio) FILTER (WHERE codec = 'zstd' AND level = 3 AND NOT dictionary)
           AS dictionary_not_worse
FROM compressx.advise('adv') GROUP BY column_name ORDER BY column_name;
-- the rule: best ratio among codecs fast enough; nothing is fast enough:
-- the fastest compressor
WITH a AS (SELECT * FROM compressx.advise('adv', 500, 0) WHERE column_name = 'doc')
SELECT (SELECT ratio FROM a WHERE recommended) = (SELECT max(ratio) FROM a) AS best_ratio_when_no_speed_floor;
WITH a AS (SELECT * FROM compressx.advise('adv', 500, 1e12) WHERE column_name = 'doc')
SELECT (SELECT compress_mb_s FROM a WHERE recommended) = (SELECT max(compress_mb_s) FROM a) AS fastest_when_none_is_fast_enough;
-- it reads compressx tables too (decoding their values first)
CREATE TABLE adv_cx (LIKE adv) USING compressx;
INSERT INTO adv_cx SELECT * FROM adv;
SELECT count(*) AS rows, count(DISTINCT column_name) AS columns FROM compressx.advise('adv_cx', 100);
-- "none" is the values as they are, counted as column_stats counts them
-- (no speeds); the recommended row says why and how to apply it
SELECT column_name, ratio = (SELECT ratio FROM compressx.column_stats('adv') s
                             WHERE s.column_name = a.column_name) AS as_column_stats,
       compress_mb_s IS NULL AS untimed
FROM compressx.advise('adv', 500) a WHERE codec = 'none' ORDER BY 1;
-- (which codec wins on doc varies with the sample: the statements' shape
-- is what is checked) a heap table: the setting, the online move, then the
-- dictionary and the column's rewrite; a compressx table: no move
SELECT column_name, note IS NOT NULL AS has_note,
       apply LIKE 'SELECT compressx.set_column_codec(''public.adv'', ''doc'', ''' || codec || '''%'
                  || E'\nCALL compressx.recompress_online(''public.adv'', access_method => ''compressx'');%'
           AS set_then_move,
       (apply LIKE '%train_dictionary(''public.adv'', ''doc'')%') = dictionary AS dictionary_when_wanted,
       apply IS NULL AS nothing_to_apply
FROM compressx.advise('adv', 500, 0) WHERE recommended ORDER BY 1;
SELECT column_name,
       apply LIKE 'SELECT compressx.set_column_codec(''public.adv_cx'', ''doc'', ''' || codec || '''%' AS sets_codec,
       apply NOT LIKE '%access_method%' AS no_move,
       apply LIKE '%CALL compressx.recompress_online(''public.adv_cx'', columns => ARRAY[''doc'']::name[]);'
                  || E'\nVACUUM public.adv_cx;%' AS rewrites_column
FROM compressx.advise('adv_cx', 500, 0) WHERE recommended ORDER BY 1;
-- values too short to save anything: leave as is, and a small sample says so
CREATE TABLE adv_tiny (code text);
INSERT INTO adv_tiny SELECT (ARRAY['ok', 'warn', 'error', 'fatal'])[1 + i % 4] || i % 10 FROM generate_series(1, 40) i;
SELECT codec, ratio, recommended, note, apply FROM compressx.advise('adv_tiny') WHERE recommended;
SELECT count(*) FILTER (WHERE ratio > (SELECT ratio FROM compressx.advise('adv_tiny') WHERE codec = 'none'))
       AS codecs_better_than_none
FROM compressx.advise('adv_tiny');
DROP TABLE adv_tiny;
-- bad input
SELECT * FROM compressx.advise('adv', 0);
SELECT * FROM compressx.advise('adv', 100, -1);
SELECT * FROM compressx.advise('adv', 100, 'NaN');
SELECT * FROM compressx.advise('adv', 100, 'Infinity');
-- memory is bounded: a sample that needs more than compressx.sample_memory
-- stops with an error (1 000 rows of 1.1 kB, sampled and decoded: 2.3 MB)
CREATE TABLE adv_big AS SELECT * FROM adv;
INSERT INTO adv_big SELECT i, repeat('{"id": ' || i || ', "tags": ["alpha", "beta"], "text": "advice"} ', 20), NULL, i
FROM generate_series(501, 2000) i;
SET compressx.sample_memory = '1MB';
SELECT count(*) > 0 AS advised FROM compressx.advise('adv_big', 100);
SELECT count(*) > 0 AS advised FROM compressx.advise('adv_big', 1000);
RESET compressx.sample_memory;
SELECT count(*) > 0 AS advised FROM compressx.advise('adv_big', 1000);
DROP TABLE adv_big;
SELECT * FROM compressx.advise(NULL);
CREATE VIEW adv_view AS SELECT * FROM adv;
SELECT * FROM compressx.advise('adv_view');
CREATE ROLE cx_advised;
SET ROLE cx_advised;
SELECT * FROM compressx.advise('adv');
RESET ROLE;
DROP ROLE cx_advised;
DROP VIEW adv_view;
DROP TABLE adv, adv_cx;
