-- Scans, index fetches and row locks where rows have nothing to decode, or
-- some of their values only (issue 37: the fetch path skips the work of a
-- row with nothing to decode; the results must be heap's)
SET max_parallel_workers_per_gather = 0;
CREATE TABLE sp_heap (id int PRIMARY KEY, a int, b int, s text, d text) USING heap;
CREATE TABLE sp (id int PRIMARY KEY, a int, b int, s text, d text) USING compressx;
SELECT compressx.set_column_codec('sp', 'd', 'zstd', 3, 64);
-- d: zstd (long), plain (short, below min_size), NULL, out of line (large),
-- in turn, so that rows with and without values to decode alternate
INSERT INTO sp_heap
SELECT i, i % 100, i % 7, md5(i::text),
       CASE i % 4 WHEN 0 THEN repeat('long value ' || i, 20)
                  WHEN 1 THEN 'short ' || i
                  WHEN 2 THEN NULL
                  ELSE (SELECT string_agg(md5((i * 1000 + g)::text), '') FROM generate_series(1, 150) g) END
FROM generate_series(1, 2000) i;
INSERT INTO sp SELECT * FROM sp_heap;
SELECT compressx.stored_codec(tableoid, ctid, 'd') AS stored, count(*)
FROM sp GROUP BY 1 ORDER BY 1;
-- sequential scans: narrow, filtered, wide; each against heap
SELECT count(*), sum(a), sum(b) FROM sp;
SELECT count(*) FROM sp WHERE s LIKE 'ab%';
SELECT (SELECT count(*) FROM sp WHERE s LIKE 'ab%') = (SELECT count(*) FROM sp_heap WHERE s LIKE 'ab%') AS like_same;
SELECT count(*) AS differing FROM ((SELECT * FROM sp EXCEPT SELECT * FROM sp_heap) UNION ALL (SELECT * FROM sp_heap EXCEPT SELECT * FROM sp)) x;
-- a qualifier reads the first columns, the projection the rest of the same row
SELECT sum(length(d)) = (SELECT sum(length(d)) FROM sp_heap WHERE a < 50) AS incremental_same FROM sp WHERE a < 50;
SELECT md5(string_agg(d, ',' ORDER BY id)) = (SELECT md5(string_agg(d, ',' ORDER BY id)) FROM sp_heap WHERE b = 3) AS wide_same
FROM sp WHERE b = 3;
-- columns added with a default: old rows lack them (the stored tuple is
-- shorter than the descriptor), and are read after columns they have
ALTER TABLE sp ADD COLUMN x text DEFAULT 'missing text', ADD COLUMN y int DEFAULT 7;
ALTER TABLE sp_heap ADD COLUMN x text DEFAULT 'missing text', ADD COLUMN y int DEFAULT 7;
INSERT INTO sp VALUES (3001, 1, 2, 'new row', repeat('new long value ', 20), 'x here', 8);
INSERT INTO sp_heap VALUES (3001, 1, 2, 'new row', repeat('new long value ', 20), 'x here', 8);
SELECT x, y, count(*) FROM sp GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) FROM sp WHERE a = 1 AND y = 7 AND x = 'missing text' AND length(d) > 0;
SELECT id, a, y, x, left(d, 20) FROM sp WHERE id IN (4, 5, 3001) ORDER BY id;
SELECT count(*) AS differing FROM ((SELECT * FROM sp EXCEPT SELECT * FROM sp_heap) UNION ALL (SELECT * FROM sp_heap EXCEPT SELECT * FROM sp)) x;
-- a dropped column: its values are not presented
ALTER TABLE sp DROP COLUMN b;
ALTER TABLE sp_heap DROP COLUMN b;
SELECT count(*) AS differing FROM ((SELECT * FROM sp EXCEPT SELECT * FROM sp_heap) UNION ALL (SELECT * FROM sp_heap EXCEPT SELECT * FROM sp)) x;
-- index scans, index-only scans, bitmap scans, TID scans
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT s FROM sp WHERE id = ANY ('{1,2,3,4,5}');
SELECT id, s, left(d, 12), y FROM sp WHERE id = ANY ('{1,2,3,4,5,3001}') ORDER BY id;
EXPLAIN (COSTS OFF) SELECT id FROM sp WHERE id BETWEEN 10 AND 20;
SELECT count(id), sum(id) FROM sp WHERE id BETWEEN 10 AND 20;
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT count(*), sum(length(d)) FROM sp WHERE id < 100;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_seqscan;
SELECT id, left(d, 12) FROM sp WHERE ctid = (SELECT ctid FROM sp WHERE id = 8);
-- a cursor going back and forth over rows with and without values to decode
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, left(d, 10) AS d FROM sp WHERE id <= 8 ORDER BY id;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 8 FROM c;
COMMIT;
-- row locks and UPDATE of a small column: values and system columns as heap
BEGIN;
SELECT id, a, left(d, 10) FROM sp WHERE id IN (1, 4) ORDER BY id FOR UPDATE;
WITH u AS (UPDATE sp SET a = a + 1000 WHERE id % 10 = 0
           RETURNING id, a, left(d, 10) AS d, xmin = txid_current()::text::xid AS mine)
SELECT * FROM u ORDER BY id LIMIT 4;
UPDATE sp_heap SET a = a + 1000 WHERE id % 10 = 0;
COMMIT;
SELECT count(*) AS differing FROM ((SELECT * FROM sp EXCEPT SELECT * FROM sp_heap) UNION ALL (SELECT * FROM sp_heap EXCEPT SELECT * FROM sp)) x;
-- out-of-line values survive an UPDATE of another column and go with DELETE
SELECT count(*) AS problems FROM compressx.verify('sp');
DELETE FROM sp WHERE id % 4 = 3;
DELETE FROM sp_heap WHERE id % 4 = 3;
SELECT count(*) AS differing FROM ((SELECT * FROM sp EXCEPT SELECT * FROM sp_heap) UNION ALL (SELECT * FROM sp_heap EXCEPT SELECT * FROM sp)) x;
DROP TABLE sp, sp_heap;
