-- compressx tables cannot be published: logical decoding reads WAL, not the
-- access method, and cannot decode compressx's own format.  Every DDL that
-- would publish one is refused.
SET client_min_messages = error;   -- no wal_level warnings
CREATE TABLE pub_heap (id integer PRIMARY KEY, t text);
CREATE TABLE pub_cx (id integer PRIMARY KEY, t text) USING compressx;
CREATE PUBLICATION cx_p1 FOR TABLE pub_heap;
-- directly
CREATE PUBLICATION cx_p2 FOR TABLE pub_cx;
ALTER PUBLICATION cx_p1 ADD TABLE pub_cx;
-- FOR ALL TABLES
CREATE PUBLICATION cx_p3 FOR ALL TABLES;
-- FOR TABLES IN SCHEMA, before and after the table exists
CREATE SCHEMA cx_s1;
CREATE TABLE cx_s1.x (t text) USING compressx;
CREATE PUBLICATION cx_p4 FOR TABLES IN SCHEMA cx_s1;
CREATE SCHEMA cx_s2;
CREATE PUBLICATION cx_p5 FOR TABLES IN SCHEMA cx_s2;
CREATE TABLE cx_s2.y (t text) USING compressx;
CREATE TABLE cx_s2.z (t text);
ALTER TABLE cx_s2.z SET ACCESS METHOD compressx;
SET default_table_access_method = compressx;
CREATE TABLE cx_s2.w AS SELECT 'x'::text AS t;
RESET default_table_access_method;
-- partitions of a published partitioned table
CREATE TABLE pub_parted (k integer, t text) PARTITION BY RANGE (k);
CREATE PUBLICATION cx_p6 FOR TABLE pub_parted WITH (publish_via_partition_root = true);
CREATE TABLE pub_parted_1 PARTITION OF pub_parted FOR VALUES FROM (0) TO (10) USING compressx;
CREATE TABLE pub_parted_2 (k integer, t text) USING compressx;
ALTER TABLE pub_parted ATTACH PARTITION pub_parted_2 FOR VALUES FROM (10) TO (20);
-- A FOR ALL TABLES publication made while the guard was off (or before
-- compressx tables existed): DDL that touches a compressx table or the
-- publication is refused, DDL on other tables goes on, whoever runs it.
ALTER EVENT TRIGGER compressx_publications DISABLE;
CREATE PUBLICATION cx_p7 FOR ALL TABLES;
ALTER EVENT TRIGGER compressx_publications ENABLE;
CREATE SCHEMA cx_s3 CREATE TABLE sneaky (t text) USING compressx;
SELECT count(*) AS sneaky_schema FROM pg_namespace WHERE nspname = 'cx_s3';
CREATE TABLE pub_unrelated (t text);
ALTER TABLE pub_unrelated ADD COLUMN u text;
ALTER TABLE pub_heap ADD COLUMN u text;
ALTER TABLE cx_s1.x ADD COLUMN u text;
ALTER PUBLICATION cx_p7 SET (publish = 'insert');
DROP PUBLICATION cx_p7;
DROP TABLE pub_unrelated;
-- what is left: only publications without compressx tables
SELECT pubname FROM pg_publication ORDER BY 1;
SELECT count(*) AS published_compressx_tables
FROM pg_publication p, pg_get_publication_tables(p.pubname::text) g
JOIN pg_class c ON c.oid = g.relid JOIN pg_am am ON am.oid = c.relam
WHERE am.amname = 'compressx';
-- heap tables, and compressx tables outside publications, are untouched
ALTER PUBLICATION cx_p1 ADD TABLE cx_s2.z;
RESET client_min_messages;
DROP PUBLICATION cx_p1, cx_p5, cx_p6;
DROP TABLE pub_heap, pub_cx, pub_parted, pub_parted_2, cx_s2.z;
DROP SCHEMA cx_s1, cx_s2 CASCADE;
