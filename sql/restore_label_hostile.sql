-- Issue 33 A1, hostile review: a label naming a dictionary the table does
-- not have makes the column wait for a restore's dictionary; when none
-- comes, the automatic-dictionary worker (which serves every table of the
-- database) trains one and rewrites the whole table
-- (src/dictionaries/restored.c).  A restore writes such a label right after
-- CREATE TABLE, before any row; on a table with rows, one SECURITY LABEL
-- by its owner would buy a training and a rewrite of the whole table by
-- the worker, as often as the owner likes.  So such a label applies to an
-- empty table only; the same label again changes nothing.
SET client_min_messages = warning;
CREATE ROLE cx_eve;
GRANT CREATE ON SCHEMA public TO cx_eve;
SET ROLE cx_eve;
CREATE TABLE eve_big (id integer, doc text) USING compressx;
SELECT compressx.set_column_codec('eve_big', 'doc', 'zstd', 3);
INSERT INTO eve_big SELECT i, repeat('row ' || i, 20) FROM generate_series(1, 500) i;
-- a key of no dictionary of hers, on a table with rows: refused
SECURITY LABEL FOR compressx ON COLUMN eve_big.doc IS 'v2 codec=zstd level=3 dict=0b7c5d4e-1111-4222-8333-944455556666';
RESET ROLE;
SELECT count(*) AS waiting FROM compressx.column_settings
WHERE relid = 'eve_big'::regclass AND (restored_dict IS NOT NULL OR restored_at IS NOT NULL);
SET ROLE cx_eve;
-- a restore's order: the label on the empty table, then the rows
CREATE TABLE eve_restored (id integer, doc text) USING compressx;
SECURITY LABEL FOR compressx ON COLUMN eve_restored.doc IS 'v2 codec=zstd level=3 dict=0b7c5d4e-1111-4222-8333-944455556666';
INSERT INTO eve_restored SELECT i, repeat('row ' || i, 20) FROM generate_series(1, 500) i;
RESET ROLE;
CREATE TEMP TABLE seen AS
SELECT restored_dict, restored_at FROM compressx.column_settings WHERE relid = 'eve_restored'::regclass;
SELECT restored_dict, restored_at IS NOT NULL AS waiting FROM seen;
SELECT pg_sleep(0.05);
SET ROLE cx_eve;
-- the same label again, now that the table has rows: nothing new to do
SECURITY LABEL FOR compressx ON COLUMN eve_restored.doc IS 'v2 codec=zstd level=3 dict=0b7c5d4e-1111-4222-8333-944455556666';
-- another key: refused
SECURITY LABEL FOR compressx ON COLUMN eve_restored.doc IS 'v2 codec=zstd level=3 dict=11111111-2222-4333-8444-555555555555';
RESET ROLE;
SELECT s.restored_dict = seen.restored_dict AS same_key, s.restored_at = seen.restored_at AS same_time
FROM compressx.column_settings s, seen WHERE s.relid = 'eve_restored'::regclass;
-- emptied, it may wait again (a restore into a truncated table)
TRUNCATE eve_big;
SET ROLE cx_eve;
SECURITY LABEL FOR compressx ON COLUMN eve_big.doc IS 'v2 codec=zstd level=3 dict=0b7c5d4e-1111-4222-8333-944455556666';
RESET ROLE;
SELECT restored_dict, restored_at IS NOT NULL AS waiting FROM compressx.column_settings
WHERE relid = 'eve_big'::regclass;
DROP TABLE eve_big, eve_restored;
REVOKE CREATE ON SCHEMA public FROM cx_eve;
DROP ROLE cx_eve;
