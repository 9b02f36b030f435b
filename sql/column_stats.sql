-- compressx.column_stats() and the ratio views
SET default_toast_compression = pglz;
CREATE TABLE cs (
    id integer PRIMARY KEY,
    small text,          -- short values: stored inline, uncompressed
    big text,            -- compressible values above 2 kB: compressed
    ext text,            -- STORAGE EXTERNAL: out of line, uncompressed
    blob bytea,
    doc jsonb,
    n integer            -- not varlena: not reported
);
ALTER TABLE cs ALTER COLUMN ext SET STORAGE EXTERNAL;
ALTER TABLE cs ALTER COLUMN blob SET COMPRESSION lz4;
INSERT INTO cs
SELECT i,
       'row ' || i,
       CASE WHEN i % 10 <> 0 THEN repeat('compressible text ' || i || ' ', 400) END,
       CASE WHEN i % 3 = 0 THEN repeat('x', 3000) END,
       CASE WHEN i % 2 = 0 THEN convert_to(repeat('blob ' || i, 2000), 'UTF8')
            ELSE '\xdeadbeef'::bytea END,
       jsonb_build_object('id', i, 'tags', jsonb_build_array('a', 'b')),
       i
FROM generate_series(1, 300) i;
-- a large value pglz cannot shrink (hex digits): out of line, uncompressed
INSERT INTO cs (id, big)
SELECT 1000, string_agg(md5(i::text), '') FROM generate_series(1, 10000) i;

SELECT column_name, "values", methods, external_values, ratio > 1 AS shrinks
FROM compressx.column_stats('cs');

-- agreement with pg_column_size(), octet_length() and pg_column_compression()
CREATE FUNCTION core_figures(rel regclass, col name,
                             OUT n bigint, OUT stored bigint, OUT raw bigint, OUT methods jsonb)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT count(%1$I), sum(pg_column_size(%1$I)), '
                   'sum(octet_length(%1$I)) FROM %2$s', col, rel)
        INTO n, stored, raw;
    EXECUTE format('SELECT jsonb_object_agg(m, c) FROM (SELECT coalesce(pg_column_compression(%1$I), ''none'') m, '
                   'count(*) c FROM %2$s WHERE %1$I IS NOT NULL GROUP BY 1) x', col, rel)
        INTO methods;
END $$;

SELECT s.column_name,
       s."values" = c.n AS values_agree,
       s.stored_bytes = c.stored AS stored_agrees,
       s.raw_bytes = c.raw AS raw_agrees,
       s.methods = c.methods AS methods_agree
FROM compressx.column_stats('cs') s,
     LATERAL core_figures('cs', s.column_name) c
WHERE s.column_name IN ('small', 'big', 'ext', 'blob');

-- jsonb has no octet_length: values, stored size and methods agree
SELECT s."values" = (SELECT count(doc) FROM cs) AS values_agree,
       s.stored_bytes = (SELECT sum(pg_column_size(doc)) FROM cs) AS stored_agrees,
       s.methods = (SELECT jsonb_object_agg(m, k)
                    FROM (SELECT coalesce(pg_column_compression(doc), 'none') m, count(*) k
                          FROM cs WHERE doc IS NOT NULL GROUP BY 1) x) AS methods_agree
FROM compressx.column_stats('cs') s
WHERE s.column_name = 'doc';

-- deleted rows are not counted; the snapshot decides
DELETE FROM cs WHERE id > 250;
SELECT "values" FROM compressx.column_stats('cs') WHERE column_name = 'small';

-- block sampling: about sample_rows rows, ratio close to the exact one
CREATE TABLE big_cs (id integer, body text);
INSERT INTO big_cs SELECT i, repeat('sampled body ' || (i % 97) || ' ', 30) FROM generate_series(1, 20000) i;
ANALYZE big_cs;
SELECT s."values" BETWEEN 200 AND 2000 AS sample_size_ok,
       abs(s.stored_bytes::numeric / s."values" - e.stored_bytes::numeric / e."values")
           < 0.1 * e.stored_bytes::numeric / e."values" AS mean_size_close
FROM compressx.column_stats('big_cs', 500) s, compressx.column_stats('big_cs') e;
-- never more than the table
SELECT "values" FROM compressx.column_stats('big_cs', 1000000);

-- an empty table, and a table with no varlena column
CREATE TABLE empty_cs (a text, b integer);
SELECT * FROM compressx.column_stats('empty_cs');
CREATE TABLE ints (a integer);
SELECT * FROM compressx.column_stats('ints');

-- partitioned tables are summed over their partitions
CREATE TABLE parted (k integer, body text) PARTITION BY RANGE (k);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (100);
CREATE TABLE parted_2 (body text, k integer);
ALTER TABLE parted ATTACH PARTITION parted_2 FOR VALUES FROM (100) TO (200);
INSERT INTO parted SELECT i, repeat('p' || i, 1500) FROM generate_series(0, 199) i;
SELECT column_name, "values", methods FROM compressx.column_stats('parted');

-- bad input
SELECT * FROM compressx.column_stats('cs', 0);
CREATE VIEW cs_view AS SELECT * FROM cs;
SELECT * FROM compressx.column_stats('cs_view');
CREATE SEQUENCE cs_seq;
SELECT * FROM compressx.column_stats('cs_seq');
SELECT * FROM compressx.column_stats('cs_pkey');
SELECT * FROM compressx.column_stats(0);
SELECT * FROM compressx.column_stats(NULL);
SELECT * FROM compressx.column_stats('cs', NULL) LIMIT 0;

-- the views: rows for tables the current user may read, and no other
SET compressx.ratio_sample_rows = 100000;
SELECT table_name, column_name, access_method, configured_compression,
       values_sampled, methods, ratio > 1 AS shrinks
FROM compressx.column_ratios
WHERE table_name IN ('cs', 'ints', 'parted', 'parted_1')
ORDER BY table_name, column_name;
SELECT table_name, heap_bytes > 0 AS has_heap, toast_bytes > 0 AS has_toast,
       index_bytes > 0 AS has_index,
       total_bytes >= heap_bytes + toast_bytes + index_bytes AS total_ok,
       values_sampled, raw_bytes > stored_bytes AS shrinks
FROM compressx.table_ratios
WHERE table_name IN ('cs', 'empty_cs')
ORDER BY table_name;
-- the views sample with compressx.ratio_sample_rows
SET compressx.ratio_sample_rows = 300;
SELECT values_sampled BETWEEN 100 AND 3000 AS sampled FROM compressx.table_ratios WHERE table_name = 'big_cs';
RESET compressx.ratio_sample_rows;

CREATE ROLE cx_reader;
CREATE TABLE visible_to_reader (t text);
INSERT INTO visible_to_reader VALUES ('hello');
GRANT SELECT ON visible_to_reader TO cx_reader;
SET ROLE cx_reader;
SELECT DISTINCT table_name FROM compressx.column_ratios ORDER BY 1;
SELECT DISTINCT table_name FROM compressx.table_ratios ORDER BY 1;
SELECT * FROM compressx.column_stats('cs');
RESET ROLE;
DROP TABLE visible_to_reader;
DROP ROLE cx_reader;

DROP FUNCTION core_figures(regclass, name);
DROP TABLE cs, big_cs, empty_cs, ints, parted CASCADE;
DROP SEQUENCE cs_seq;
