-- compressx tables can be published: logical decoding reads their values
-- through the output plugin compressx (TAP test 012_logical.pl replicates
-- them).  What the guard refuses is publishing compressx's own tables by
-- name or schema: their rows name this database's relations by OID.
SET client_min_messages = error;   -- no wal_level warnings
CREATE TABLE pub_heap (id integer PRIMARY KEY, t text);
CREATE TABLE pub_cx (id integer PRIMARY KEY, t text) USING compressx;
CREATE PUBLICATION cx_p1 FOR TABLE pub_heap;
-- compressx tables: directly, added, FOR ALL TABLES, by schema, partitions
CREATE PUBLICATION cx_p2 FOR TABLE pub_cx;
ALTER PUBLICATION cx_p1 ADD TABLE pub_cx;
CREATE PUBLICATION cx_p3 FOR ALL TABLES;
CREATE SCHEMA cx_s1;
CREATE TABLE cx_s1.x (t text) USING compressx;
CREATE PUBLICATION cx_p4 FOR TABLES IN SCHEMA cx_s1;
CREATE TABLE cx_s1.y (t text);
ALTER TABLE cx_s1.y SET ACCESS METHOD compressx;
CREATE TABLE pub_parted (k integer, t text) PARTITION BY RANGE (k);
CREATE PUBLICATION cx_p5 FOR TABLE pub_parted WITH (publish_via_partition_root = true);
CREATE TABLE pub_parted_1 PARTITION OF pub_parted FOR VALUES FROM (0) TO (10) USING compressx;
SELECT p.pubname, g.relid::regclass::text AS published
FROM pg_publication p, pg_get_publication_tables(p.pubname::text) g
JOIN pg_class c ON c.oid = g.relid JOIN pg_am am ON am.oid = c.relam
WHERE am.amname = 'compressx' AND c.relnamespace <> 'compressx'::regnamespace
ORDER BY 1, 2;
-- compressx's own tables: refused by name, by schema, when added
CREATE PUBLICATION cx_p6 FOR TABLE compressx.column_settings;
CREATE PUBLICATION cx_p7 FOR TABLE pub_heap, compressx.dictionaries;
CREATE PUBLICATION cx_p8 FOR TABLES IN SCHEMA compressx;
ALTER PUBLICATION cx_p1 ADD TABLE compressx.online_runs;
ALTER PUBLICATION cx_p1 ADD TABLES IN SCHEMA compressx;
SELECT pubname FROM pg_publication ORDER BY 1;
-- dictionaries are read by decoding with its historic snapshot
SELECT reloptions FROM pg_class WHERE oid = 'compressx.dictionaries'::regclass;
-- a subscriber's replication workers skip rows of compressx's own tables
SELECT tgrelid::regclass, tgenabled FROM pg_trigger
WHERE tgname = 'skip_replicated_rows' ORDER BY 1::text;
-- no logical slot here, nothing to report
SELECT * FROM compressx.check_logical();
-- UPDATE and DELETE log identity bodies while a logical slot exists here
SHOW compressx.logical_body_messages;
CREATE ROLE cx_pub_plain;
SET ROLE cx_pub_plain;
SET compressx.logical_body_messages = off;
RESET ROLE;
DROP ROLE cx_pub_plain;
-- a role that is no superuser publishes its own compressx table: the guard
-- reads nothing that role may not (dynamic_library_path is superuser-only)
CREATE ROLE cx_pub_owner;
DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO cx_pub_owner', current_database()); END $$;
CREATE TABLE pub_owned (id int PRIMARY KEY, b text) USING compressx;
ALTER TABLE pub_owned OWNER TO cx_pub_owner;
SET ROLE cx_pub_owner;
CREATE PUBLICATION cx_p9 FOR TABLE pub_owned;
ALTER PUBLICATION cx_p9 SET TABLE pub_owned;
DROP PUBLICATION cx_p9;
RESET ROLE;
DROP TABLE pub_owned;
DO $$ BEGIN EXECUTE format('REVOKE CREATE ON DATABASE %I FROM cx_pub_owner', current_database()); END $$;
DROP ROLE cx_pub_owner;
RESET client_min_messages;
DROP PUBLICATION cx_p1, cx_p2, cx_p3, cx_p4, cx_p5;
DROP TABLE pub_heap, pub_cx, pub_parted;
DROP SCHEMA cx_s1 CASCADE;
