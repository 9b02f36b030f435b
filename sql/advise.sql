-- compressx.advise(): every codec and level on a sample, one recommendation
CREATE TABLE adv (id integer, doc text, note text, n integer);
INSERT INTO adv SELECT i, repeat('{"id": ' || i || ', "tags": ["alpha", "beta"], "text": "advice"} ', 20),
       CASE WHEN i % 2 = 0 THEN md5(i::text) END, i
FROM generate_series(1, 500) i;
-- (each call times every codec: one call's rows serve the checks below)
CREATE TEMP TABLE adv_rows AS SELECT * FROM compressx.advise('adv');

-- one row per column and candidate; ratio and speeds measured
SELECT column_name, codec, level, ratio > 0 AS has_ratio,
       compress_mb_s > 0 AS has_compress_speed, decompress_mb_s > 0 AS has_decompress_speed
FROM adv_rows ORDER BY column_name, codec, level, dictionary;
-- compressible documents shrink with every codec; short hashes do not
SELECT column_name, bool_and(ratio > 1.5) FILTER (WHERE codec <> 'none') AS all_shrink,
       bool_and(ratio <= 1) AS none_shrink
FROM adv_rows GROUP BY column_name ORDER BY column_name;
-- exactly one recommendation per column; zstd-19 beats zstd-1 on ratio
SELECT column_name, count(*) FILTER (WHERE recommended) AS recommendations
FROM adv_rows GROUP BY column_name ORDER BY column_name;
SELECT (SELECT ratio FROM adv_rows WHERE column_name = 'doc' AND codec = 'zstd' AND level = 19)
    >= (SELECT ratio FROM adv_rows WHERE column_name = 'doc' AND codec = 'zstd' AND level = 1)
       AS higher_level_not_worse;
-- zstd with a dictionary trained on half the sample, measured on the other half
SELECT column_name, count(*) FILTER (WHERE dictionary) AS dictionary_rows,
       max(ratio) FILTER (WHERE dictionary) >= max(ratio) FILTER (WHERE codec = 'zstd' AND level = 3 AND NOT dictionary)
           AS dictionary_not_worse
FROM adv_rows GROUP BY column_name ORDER BY column_name;
-- speeds relative to zstd 3 (1 for itself), timed beside it in the same
-- call; every row says why it won or lost, in figures and codec names
-- (nothing of the values); the recommended row's note starts with its reason
SELECT column_name,
       bool_and(compress_relative = 1 AND decompress_relative = 1)
           FILTER (WHERE codec = 'zstd' AND level = 3 AND NOT dictionary) AS reference_is_one,
       bool_and(compress_relative > 0 AND decompress_relative > 0) FILTER (WHERE codec <> 'none') AS relative_speeds,
       bool_and(compress_relative IS NULL) FILTER (WHERE codec = 'none') AS none_untimed,
       bool_and(reason IS NOT NULL) AS every_row_has_a_reason,
       bool_and(reason !~ '(alpha|beta|advice|[0-9a-f]{32})') AS no_values_in_reasons,
       bool_and(starts_with(note, reason)) FILTER (WHERE recommended) AS note_starts_with_reason
FROM adv_rows GROUP BY column_name ORDER BY column_name;
-- the reasons' kinds (figures masked)
SELECT column_name, codec, level, dictionary, recommended,
       regexp_replace(reason, '\m[0-9]+(\.[0-9]+)?', 'N', 'g') AS reason
FROM adv_rows WHERE recommended OR codec = 'none' ORDER BY column_name, recommended;

-- the rule, priority balance (the default): the best ratio among codecs
-- at least half as fast as zstd 3 both ways, among those storing the values
-- 2% smaller than as they are (speeds are shown rounded: a margin)
SELECT column_name,
       bool_and(compress_relative >= 0.49 AND decompress_relative >= 0.49) FILTER (WHERE recommended)
           AS winner_fast_enough,
       NOT bool_or(ratio > (SELECT ratio FROM adv_rows w WHERE w.column_name = a.column_name AND w.recommended)
                   AND compress_relative >= 0.51 AND decompress_relative >= 0.51
                   AND ratio >= 1.03 * (SELECT ratio FROM adv_rows n WHERE n.column_name = a.column_name AND n.codec = 'none'))
           AS no_better_ratio_fast_enough
FROM adv_rows a GROUP BY column_name ORDER BY 1;
-- priority size: the best ratio, whatever the speed
WITH a AS (SELECT * FROM compressx.advise('adv', 500, priority => 'size') WHERE column_name = 'doc')
SELECT (SELECT ratio FROM a WHERE recommended) = (SELECT max(ratio) FROM a) AS size_takes_best_ratio;
-- min_compress_mb_s, given: a floor in MB/s the caller asks for (none by
-- default); when nothing meets it, the fastest compressor
WITH a AS (SELECT * FROM compressx.advise('adv', 500, 0, 'size') WHERE column_name = 'doc')
SELECT (SELECT ratio FROM a WHERE recommended) = (SELECT max(ratio) FROM a) AS best_ratio_when_no_speed_floor;
WITH a AS (SELECT * FROM compressx.advise('adv', 500, 1e12) WHERE column_name = 'doc')
SELECT (SELECT compress_relative FROM a WHERE recommended) = (SELECT max(compress_relative) FROM a) AS fastest_when_none_is_fast_enough,
       (SELECT note FROM a WHERE recommended) AS note;

-- each priority's winner, on values where the choice is clear: documents
-- of 26 kB, each of its own words (a dictionary does not help), which
-- zstd 19 stores much smaller than the others but compresses many times
-- slower than zstd 3, and lz4 decodes several times faster than zstd
CREATE TABLE adv_words (id integer, doc text);
INSERT INTO adv_words
SELECT i, (SELECT string_agg(substr(md5((i * 1000 + (j * 7919 + j / 7) % 300)::text), 1, 4 + j % 4), ' ')
           FROM generate_series(1, 4000) j)
FROM generate_series(1, 40) i;
CREATE TEMP TABLE adv_prio AS
SELECT p AS priority, a.* FROM unnest('{size,balance,speed}'::text[]) p,
     LATERAL compressx.advise('adv_words', priority => p) a;
SELECT priority, codec, level = 19 AS level_19, dictionary,
       regexp_replace(regexp_replace(reason, 'the fastest, .*', 'the fastest, X'), '\m[0-9]+(\.[0-9]+)?', 'N', 'g')
           AS reason
FROM adv_prio WHERE recommended ORDER BY priority;
-- size: the largest ratio of all; balance: zstd 19 too slow to compress;
-- speed: every zstd too slow to decompress
SELECT priority, bool_and(ratio <= (SELECT ratio FROM adv_prio w WHERE w.priority = p.priority AND w.recommended))
           AS winner_has_best_ratio,
       bool_or(reason LIKE 'compresses at % times the speed of zstd 3: priority balance wants 0.5 or more'
               AND codec = 'zstd' AND level = 19) AS zstd_19_too_slow_to_compress,
       bool_and(reason LIKE 'decompresses at % times the speed of the fastest, lz4 %: priority speed wants 0.5 or more')
           FILTER (WHERE codec = 'zstd') AS zstd_too_slow_to_decompress
FROM adv_prio p WHERE priority = 'size' OR codec = 'zstd' OR recommended
GROUP BY priority ORDER BY priority;

-- the same data gives the same rows: the sample does not depend on
-- chance, nor on the planner's statistics (before and after ANALYZE), on a
-- table larger than the sample whose values differ from block to block
CREATE TABLE adv_var (id integer, doc text);
INSERT INTO adv_var SELECT i, repeat(md5((i / 40)::text), 1 + (i / 40) % 9) || repeat('-', (i / 40) % 13 * 10)
FROM generate_series(1, 4000) i;
CREATE TEMP TABLE adv_var1 AS
SELECT codec, level, dictionary, ratio, recommended FROM compressx.advise('adv_var', 200, priority => 'size');
ANALYZE adv_var;
SELECT count(*) AS rows_differing FROM (
    (SELECT * FROM adv_var1
     EXCEPT SELECT codec, level, dictionary, ratio, recommended FROM compressx.advise('adv_var', 200, priority => 'size'))
    UNION ALL
    (SELECT codec, level, dictionary, ratio, recommended FROM compressx.advise('adv_var', 200, priority => 'size')
     EXCEPT SELECT * FROM adv_var1)) d;
DROP TABLE adv_var, adv_words;

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
FROM compressx.advise('adv', 500, priority => 'size') WHERE recommended ORDER BY 1;
SELECT column_name,
       apply LIKE 'SELECT compressx.set_column_codec(''public.adv_cx'', ''doc'', ''' || codec || '''%' AS sets_codec,
       apply NOT LIKE '%access_method%' AS no_move,
       apply LIKE '%CALL compressx.recompress_online(''public.adv_cx'', columns => ARRAY[''doc'']::name[]);'
                  || E'\nVACUUM public.adv_cx;%' AS rewrites_column
FROM compressx.advise('adv_cx', 500, priority => 'size') WHERE recommended ORDER BY 1;
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
SELECT * FROM compressx.advise('adv', priority => 'fast');
SELECT * FROM compressx.advise('adv', priority => NULL);
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
