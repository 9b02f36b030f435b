-- compressx.compress() / compressx.decompress(): self-describing frames
CREATE TABLE samples (label text, data bytea);
INSERT INTO samples VALUES
    ('empty', ''::bytea),
    ('one byte', '\x01'::bytea),
    ('text', convert_to(repeat('compressx frames round-trip every codec. ', 300), 'UTF8')),
    ('random', (SELECT decode(string_agg(md5(i::text), ''), 'hex')
                FROM generate_series(1, 500) i));

-- every codec round-trips every sample at its default level
SELECT s.label, c.name,
       compressx.decompress(compressx.compress(s.data, c.name)) = s.data AS roundtrip
FROM samples s CROSS JOIN compressx.codecs() c
ORDER BY s.label, c.id;

-- and at every level
SELECT c.name, count(*) AS levels_tried,
       bool_and(compressx.decompress(compressx.compress(s.data, c.name, l)) = s.data) AS roundtrip
FROM compressx.codecs() c
CROSS JOIN LATERAL generate_series(c.min_level, c.max_level) l
CROSS JOIN samples s
WHERE c.min_level IS NOT NULL AND s.label IN ('text', 'random')
GROUP BY c.name ORDER BY c.name;

-- compressible text shrinks at least 4x with every real codec
SELECT c.name,
       octet_length(compressx.compress(s.data, c.name)) * 4 < octet_length(s.data) AS shrinks
FROM samples s CROSS JOIN compressx.codecs() c
WHERE s.label = 'text' AND c.name <> 'none'
ORDER BY c.id;

-- higher levels compress at least as well on repetitive text
SELECT octet_length(compressx.compress(data, 'zstd', 19)) <= octet_length(compressx.compress(data, 'zstd', 1)) AS zstd_19_not_larger,
       octet_length(compressx.compress(data, 'lz4', 12)) <= octet_length(compressx.compress(data, 'lz4', 1)) AS lz4_12_not_larger
FROM samples WHERE label = 'text';

-- the frame header: magic "CX", version 1, codec id, raw length
SELECT substr(compressx.compress(data, 'zstd'), 1, 8) AS header
FROM samples WHERE label = 'text';
-- pglz declines incompressible input: the frame says codec none (id 0)
SELECT get_byte(compressx.compress(data, 'pglz'), 3) AS codec_id
FROM samples WHERE label = 'random';
-- codec names are case-insensitive
SELECT get_byte(compressx.compress('abc', 'ZSTD'), 3) AS codec_id;
-- NULL data gives NULL
SELECT compressx.compress(NULL, 'lz4') IS NULL AS null_in_null_out,
       compressx.decompress(NULL) IS NULL AS null_in_null_out2;

-- bad arguments
SELECT compressx.compress('abc', 'brotli');
SELECT compressx.compress('abc', NULL);
SELECT compressx.compress('abc', 'zstd', 23);
SELECT compressx.compress('abc', 'zstd', -8);
SELECT compressx.compress('abc', 'lz4', 0);
SELECT compressx.compress('abc', 'pglz', 1);
SELECT compressx.compress('abc', 'none', 1);

-- malformed frames: every one is SQLSTATE XX001 (data_corrupted)
\set VERBOSITY sqlstate
SELECT compressx.decompress('');
SELECT compressx.decompress('\x43580103');
SELECT compressx.decompress('\x00000000000000000000000000');
\set VERBOSITY default
SELECT compressx.decompress('\x41420103000000030000000061626364');
SELECT compressx.decompress('\x43580203000000030000000061626364');
SELECT compressx.decompress('\x43580109000000030000000061626364');
-- codec none with a length that does not match the payload
SELECT compressx.decompress('\x435801000000000500000000616263');
-- decompression bomb: 1 GB declared for a few bytes of each codec
-- (terse: the details quote compressed sizes, which vary by library version)
\set VERBOSITY terse
SELECT compressx.decompress(overlay(compressx.compress(data, 'lz4') PLACING '\x3fffffff' FROM 5))
FROM samples WHERE label = 'text';
SELECT compressx.decompress(overlay(compressx.compress(data, 'zstd') PLACING '\x3fffffff' FROM 5))
FROM samples WHERE label = 'text';
SELECT compressx.decompress(overlay(compressx.compress(data, 'pglz') PLACING '\x3fffffff' FROM 5))
FROM samples WHERE label = 'text';
-- above the 1 GB limit
SELECT compressx.decompress(overlay(compressx.compress(data, 'zstd') PLACING '\xffffffff' FROM 5))
FROM samples WHERE label = 'text';

\set VERBOSITY default
-- truncated payloads, for every codec and many cut points: never a crash,
-- never wrong bytes, always data_corrupted
CREATE FUNCTION try_decompress(f bytea) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM compressx.decompress(f);
    RETURN 'decoded';
EXCEPTION WHEN data_corrupted THEN
    RETURN 'data_corrupted';
END $$;

SELECT c.name, try_decompress(substr(f, 1, cut)) AS result, count(*) > 20 AS many_cuts
FROM compressx.codecs() c
CROSS JOIN samples s
CROSS JOIN LATERAL (SELECT compressx.compress(s.data, c.name) AS f) x
CROSS JOIN LATERAL generate_series(1, octet_length(x.f) - 1) cut
WHERE s.label IN ('text', 'random')
GROUP BY 1, 2 ORDER BY 1, 2;

-- every single byte of the payload flipped: corruption is caught by the
-- codec or by the checksum, never returned as data
SELECT c.name, try_decompress(set_byte(f, pos, get_byte(f, pos) # 255)) AS result,
       count(*) > 20 AS many_flips
FROM compressx.codecs() c
CROSS JOIN samples s
CROSS JOIN LATERAL (SELECT compressx.compress(s.data, c.name) AS f) x
CROSS JOIN LATERAL generate_series(12, octet_length(x.f) - 1) pos
WHERE s.label = 'text'
GROUP BY 1, 2 ORDER BY 1, 2;

-- random garbage after a valid header
SELECT c.id, try_decompress(
           decode('435801' || lpad(to_hex(c.id), 2, '0') || '00000400' || '00000000', 'hex')
           || decode(string_agg(md5(i::text || c.id::text), ''), 'hex')) AS result
FROM compressx.codecs() c CROSS JOIN generate_series(1, 40) i
GROUP BY c.id ORDER BY c.id;

DROP FUNCTION try_decompress(bytea);
DROP TABLE samples;
