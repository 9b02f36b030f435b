-- compressx.verify(): decode every stored value; one row per damaged value
CREATE TABLE v_heap (id integer, body text, blob bytea);
INSERT INTO v_heap SELECT i, repeat('heap value ' || i, 300),
       CASE WHEN i % 5 = 0 THEN (SELECT decode(string_agg(md5(k::text || i), ''), 'hex') FROM generate_series(1, 400) k) END
FROM generate_series(1, 100) i;
CREATE TABLE v_cx (LIKE v_heap) USING compressx;
INSERT INTO v_cx SELECT * FROM v_heap;
SELECT compressx.set_column_codec('v_cx', 'body', 'lz4');
INSERT INTO v_cx SELECT * FROM v_heap;
CREATE TABLE v_parted (k integer, t text) PARTITION BY LIST (k);
CREATE TABLE v_parted_1 PARTITION OF v_parted FOR VALUES IN (1) USING compressx;
CREATE TABLE v_parted_2 PARTITION OF v_parted FOR VALUES IN (2);
INSERT INTO v_parted SELECT 1 + i % 2, repeat('p', 500 + i) FROM generate_series(1, 50) i;
SELECT * FROM compressx.verify('v_heap');
SELECT * FROM compressx.verify('v_cx');
SELECT * FROM compressx.verify('v_parted');
-- bad input
SELECT * FROM compressx.verify(NULL);
SELECT * FROM compressx.verify(0);
CREATE VIEW v_view AS SELECT * FROM v_heap;
SELECT * FROM compressx.verify('v_view');
CREATE ROLE cx_verifier;
SET ROLE cx_verifier;
SELECT * FROM compressx.verify('v_cx');
RESET ROLE;
DROP ROLE cx_verifier;
DROP VIEW v_view;
DROP TABLE v_heap, v_cx, v_parted;
