/* compressx 0.1.0 -> 0.2.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.2.0'" to load this file. \quit

-- How one stored value is kept, which pg_column_compression() and
-- pg_column_size() cannot say for compressx tables (their values reach
-- functions decoded).
CREATE FUNCTION compressx.value_storage(rel regclass, row_ctid tid, column_name name)
RETURNS TABLE (method text, stored_bytes bigint, raw_bytes bigint, external boolean)
AS 'MODULE_PATHNAME', 'compressx_value_storage'
LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION compressx.value_storage(regclass, tid, name) IS
'how one value is stored: method, stored and raw bytes, out of line or not (rel: the table or partition holding the row; SELECT privilege)';

-- configured_compression of compressx columns: the codec compressx applies
-- (it said "default (pglz)", heap's default, before)
CREATE OR REPLACE VIEW compressx.column_ratios AS
SELECT t.schema_name,
       t.table_name,
       s.column_name,
       t.access_method,
       CASE WHEN t.access_method OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name
            THEN (SELECT cc.codec OPERATOR(pg_catalog.||)
                         COALESCE(' level ' OPERATOR(pg_catalog.||) cc.level::pg_catalog.text, '')
                         OPERATOR(pg_catalog.||)
                         CASE WHEN cc.dictionary IS NOT NULL THEN ' with dictionary' ELSE '' END
                  FROM compressx.column_codec_settings(t.relid) cc
                  WHERE cc.column_name OPERATOR(pg_catalog.=) s.column_name)
            ELSE CASE a.attcompression
                      WHEN 'p' THEN 'pglz'
                      WHEN 'l' THEN 'lz4'
                      ELSE 'default (' OPERATOR(pg_catalog.||)
                           pg_catalog.current_setting('default_toast_compression')
                           OPERATOR(pg_catalog.||) ')'
                 END
       END AS configured_compression,
       s."values" AS values_sampled,
       s.methods,
       s.external_values,
       s.raw_bytes,
       s.stored_bytes,
       s.ratio
FROM compressx.readable_tables t
CROSS JOIN LATERAL compressx.column_stats(t.relid, compressx.ratio_sample_rows()) s
JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) t.relid
     AND a.attname OPERATOR(pg_catalog.=) s.column_name;

-- pg_dump dumps the settings rows of existing columns of existing tables
-- only: a row left behind by a drop (made where neither the event trigger
-- nor the library's hook ran) would name its relation by OID, which the
-- restored database may give to another table.  pg_dump runs this with an
-- empty search_path, on the table named compressx.column_settings.
SELECT pg_catalog.pg_extension_config_dump('compressx.column_settings',
    'WHERE EXISTS (SELECT FROM pg_catalog.pg_attribute a'
    ' JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid'
    ' WHERE a.attrelid OPERATOR(pg_catalog.=) column_settings.relid'
    ' AND a.attname OPERATOR(pg_catalog.=) column_settings.attname'
    ' AND NOT a.attisdropped AND c.relpersistence OPERATOR(pg_catalog.<>) ''t''::pg_catalog."char")');

-- Every backend caches digested dictionaries; a changed or deleted row
-- must empty those caches (deleting rows sends no invalidation itself).
CREATE FUNCTION compressx.dictionaries_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'compressx_dictionaries_changed'
LANGUAGE C;

CREATE TRIGGER dictionaries_changed
AFTER UPDATE OR DELETE OR TRUNCATE ON compressx.dictionaries
FOR EACH STATEMENT EXECUTE FUNCTION compressx.dictionaries_changed();

-- Rows loaded by pg_restore carry the column numbers of the dumped
-- database: take the number from the column's name, which is what counts.
-- A row inserted for a relation or column that does not exist is skipped
-- with a warning rather than failing: pg_restore loads every row of this
-- table in one COPY, and one such row (in a dump made by a version that
-- dumped rows of dropped tables) would lose every table's settings.
-- Temporary tables cannot have settings (their rows could outlive them).
CREATE OR REPLACE FUNCTION compressx.settings_fix_attnum()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    persistence "char";
BEGIN
    SELECT c.relpersistence INTO persistence FROM pg_class c WHERE c.oid = NEW.relid;
    IF NOT FOUND AND TG_OP = 'INSERT' THEN
        RAISE WARNING 'skipping compressx settings of column "%" of relation with OID %, which does not exist',
                      NEW.attname, NEW.relid::oid
            USING ERRCODE = 'undefined_table',
                  DETAIL = 'Such a row is left behind by a table dropped where neither compressx''s event trigger nor its library ran.';
        RETURN NULL;
    ELSIF persistence = 't' THEN
        RAISE EXCEPTION 'temporary table % cannot have compressx column settings', NEW.relid
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'A temporary table can be dropped without its settings being deleted.';
    END IF;
    SELECT a.attnum INTO NEW.attnum
    FROM pg_attribute a
    WHERE a.attrelid = NEW.relid AND a.attname = NEW.attname AND NOT a.attisdropped;
    IF NOT FOUND AND TG_OP = 'INSERT' THEN
        RAISE WARNING 'skipping compressx settings of column "%" of relation %, which does not exist',
                      NEW.attname, NEW.relid
            USING ERRCODE = 'undefined_column',
                  DETAIL = 'Such a row is left behind by a column dropped or renamed where compressx''s event triggers did not run.';
        RETURN NULL;
    ELSIF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', NEW.attname, NEW.relid
            USING ERRCODE = 'undefined_column';
    END IF;
    RETURN NEW;
END
$$;

-- Every operator this script binds is pg_catalog's, named with OPERATOR():
-- while an extension script runs, the target schema (public by default) is
-- on search_path, and an operator a role planted there for a type pair
-- pg_catalog has no exact operator for (regclass = oid, oid = integer,
-- numeric / bigint) would be bound into a view and run as whoever reads
-- it.  Version 0.1.0's views had such pairs; they are replaced here.

-- Settings are keyed by column number (was the column name): a rename can
-- no longer make two rows collide.  0.1.0 renamed rows after any ALTER
-- TABLE, for every table; ALTER TYPE .. RENAME ATTRIBUTE .. CASCADE renamed
-- columns without it, and the next rename anywhere could then fail on the
-- key for everyone's ALTER TABLE.
ALTER TABLE compressx.column_settings DROP CONSTRAINT column_settings_pkey;
-- rows of temporary tables (no longer allowed: they outlive their tables)
DELETE FROM compressx.column_settings s
USING pg_catalog.pg_class c
WHERE c.oid OPERATOR(pg_catalog.=) s.relid
  AND c.relpersistence OPERATOR(pg_catalog.=) 't'::pg_catalog."char";
-- of two rows for one column (a rename the event trigger missed, then a
-- setting under the new name), keep the one that names the column as it is
DELETE FROM compressx.column_settings s
WHERE s.ctid OPERATOR(pg_catalog.=) ANY (
    SELECT r.ctid
    FROM (SELECT x.ctid,
                 pg_catalog.row_number() OVER (
                     PARTITION BY x.relid, x.attnum
                     ORDER BY COALESCE(a.attname OPERATOR(pg_catalog.=) x.attname, false) DESC,
                              x.ctid) AS n
          FROM compressx.column_settings x
          LEFT JOIN pg_catalog.pg_attribute a
                 ON a.attrelid OPERATOR(pg_catalog.=) x.relid
                AND a.attnum OPERATOR(pg_catalog.=) x.attnum
                AND NOT a.attisdropped) r
    WHERE r.n OPERATOR(pg_catalog.>) 1);
UPDATE compressx.column_settings s
SET attname = a.attname
FROM pg_catalog.pg_attribute a
WHERE a.attrelid OPERATOR(pg_catalog.=) s.relid
  AND a.attnum OPERATOR(pg_catalog.=) s.attnum
  AND NOT a.attisdropped
  AND a.attname OPERATOR(pg_catalog.<>) s.attname;
ALTER TABLE compressx.column_settings ADD PRIMARY KEY (relid, attnum);

-- Column renames through ALTER TYPE .. RENAME ATTRIBUTE .. CASCADE too.
DROP EVENT TRIGGER compressx_ddl_end;
CREATE EVENT TRIGGER compressx_ddl_end ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE', 'ALTER MATERIALIZED VIEW', 'ALTER TYPE')
    EXECUTE FUNCTION compressx.on_ddl_end();

-- Tables hidden by row-level security from the current user are left out:
-- compressx's inspection reads every row of a table.
CREATE OR REPLACE VIEW compressx.readable_tables AS
SELECT c.oid AS relid,
       n.nspname AS schema_name,
       c.relname AS table_name,
       am.amname AS access_method,
       c.reltoastrelid
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) c.relam
WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog."char"[])
  AND am.amname OPERATOR(pg_catalog.=) ANY ('{heap,compressx}'::pg_catalog.name[])
  AND NOT n.nspname OPERATOR(pg_catalog.=) ANY ('{pg_catalog,information_schema,pg_toast}'::pg_catalog.name[])
  AND (c.relpersistence OPERATOR(pg_catalog.<>) 't'::pg_catalog."char"
       OR c.relnamespace OPERATOR(pg_catalog.=) pg_catalog.pg_my_temp_schema())
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
  AND NOT pg_catalog.row_security_active(c.oid);

CREATE OR REPLACE VIEW compressx.table_ratios AS
SELECT t.schema_name,
       t.table_name,
       t.access_method,
       pg_catalog.pg_relation_size(t.relid) AS heap_bytes,
       CASE WHEN t.reltoastrelid OPERATOR(pg_catalog.<>) 0::pg_catalog.oid
            THEN pg_catalog.pg_total_relation_size(t.reltoastrelid)
            ELSE 0::pg_catalog.int8
       END AS toast_bytes,
       pg_catalog.pg_indexes_size(t.relid) AS index_bytes,
       pg_catalog.pg_total_relation_size(t.relid) AS total_bytes,
       s.values_sampled,
       s.raw_bytes,
       s.stored_bytes,
       CASE WHEN s.stored_bytes OPERATOR(pg_catalog.>) 0::pg_catalog.int8
            THEN pg_catalog.round(s.raw_bytes::pg_catalog.numeric
                                  OPERATOR(pg_catalog./) s.stored_bytes::pg_catalog.numeric, 2)
       END AS ratio
FROM compressx.readable_tables t
CROSS JOIN LATERAL (
    SELECT pg_catalog.sum(cs."values")::pg_catalog.int8 AS values_sampled,
           pg_catalog.sum(cs.raw_bytes)::pg_catalog.int8 AS raw_bytes,
           pg_catalog.sum(cs.stored_bytes)::pg_catalog.int8 AS stored_bytes
    FROM compressx.column_stats(t.relid, compressx.ratio_sample_rows()) cs
) s;

CREATE OR REPLACE VIEW compressx.column_codecs AS
SELECT n.nspname AS schema_name,
       c.relname AS table_name,
       s.column_name,
       am.amname AS access_method,
       s.codec,
       s.level,
       s.min_size,
       s.explicit,
       s.dictionary
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) c.relam
CROSS JOIN LATERAL compressx.column_codec_settings(c.oid) s
WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog."char"[])
  AND (am.amname OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name
       OR EXISTS (SELECT 1 FROM compressx.column_settings cs
                  WHERE cs.relid::pg_catalog.oid OPERATOR(pg_catalog.=) c.oid))
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT');

CREATE OR REPLACE VIEW compressx.recompress_progress AS
SELECT p.pid,
       d.datname,
       p.relid,
       p.relid::pg_catalog.regclass AS relation,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) 0::pg_catalog.int8 THEN 'checking values'
            WHEN p.param2 OPERATOR(pg_catalog.=) 1::pg_catalog.int8 THEN 'rewriting'
            WHEN p.param2 OPERATOR(pg_catalog.=) 5::pg_catalog.int8 THEN 'swapping relation files'
            WHEN p.param2 OPERATOR(pg_catalog.=) 6::pg_catalog.int8 THEN 'rebuilding indexes'
            WHEN p.param2 OPERATOR(pg_catalog.=) 7::pg_catalog.int8 THEN 'final cleanup'
       END AS phase,
       p.param19 AS partition_number,
       p.param6 AS heap_blks_total,
       p.param7 AS heap_blks_scanned,
       p.param5 AS tuples_written,
       p.param18 AS values_rewritten,
       p.param8 AS indexes_rebuilt
FROM pg_catalog.pg_stat_get_progress_info('CLUSTER') p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid
WHERE p.param20 OPERATOR(pg_catalog.=) 1129861699::pg_catalog.int8;

-- recompress_table in schema compressx as well, where only the extension's
-- owner can create objects: a role with CREATE on the extension's schema
-- (public by default) can plant a better-matching recompress_table(text,
-- text) there, which an unqualified call would run instead.
CREATE FUNCTION compressx.recompress_table(
    rel regclass, codec text DEFAULT NULL, level integer DEFAULT NULL,
    columns name[] DEFAULT NULL)
RETURNS TABLE (column_name name, values_rewritten bigint,
               bytes_before bigint, bytes_after bigint)
AS 'MODULE_PATHNAME', 'compressx_recompress_table'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.recompress_table(regclass, text, integer, name[]) IS
'rewrite existing values of a table with a codec; takes ACCESS EXCLUSIVE lock; owner only (the same function as recompress_table in the extension''s schema; call this one where other roles may create objects in that schema)';

-- The publication guard checks what the command touched: the relations it
-- created or altered (with their partitions and inheritance children) and
-- the publications it created or altered.  It checked every publication
-- before, so one published compressx table (made through CREATE SCHEMA ..
-- CREATE TABLE, which it did not watch) failed every later CREATE TABLE
-- and ALTER TABLE in the database, whoever ran them.
CREATE OR REPLACE FUNCTION compressx.check_publications()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pub name;
    tbl regclass;
BEGIN
    WITH cmd AS (
        SELECT DISTINCT d.classid, d.objid
        FROM pg_event_trigger_ddl_commands() d
    ), pubs AS (
        -- ALTER PUBLICATION .. ADD reports the membership it adds
        SELECT c.objid AS pubid FROM cmd c WHERE c.classid = 'pg_publication'::regclass
        UNION
        SELECT pr.prpubid FROM cmd c JOIN pg_publication_rel pr ON pr.oid = c.objid
        WHERE c.classid = 'pg_publication_rel'::regclass
        UNION
        SELECT pn.pnpubid FROM cmd c JOIN pg_publication_namespace pn ON pn.oid = c.objid
        WHERE c.classid = 'pg_publication_namespace'::regclass
    ), rels AS (
        SELECT c.objid AS relid FROM cmd c WHERE c.classid = 'pg_class'::regclass
        UNION
        SELECT i.inhrelid FROM cmd c, LATERAL (
            WITH RECURSIVE tree(relid) AS (
                SELECT c.objid
                UNION
                SELECT h.inhrelid FROM pg_inherits h JOIN tree ON h.inhparent = tree.relid)
            SELECT tree.relid AS inhrelid FROM tree) i
        WHERE c.classid = 'pg_class'::regclass
    )
    SELECT p.pubname, t.relid::regclass INTO pub, tbl
    FROM pg_publication p
    CROSS JOIN LATERAL pg_get_publication_tables(p.pubname::text) g
    CROSS JOIN LATERAL (SELECT g.relid
                        UNION
                        SELECT pt.relid FROM pg_partition_tree(g.relid) pt) t
    JOIN pg_class c ON c.oid = t.relid
    JOIN pg_am am ON am.oid = c.relam
    WHERE am.amname = 'compressx'
      AND (t.relid IN (SELECT r.relid FROM rels r)
           OR p.oid IN (SELECT pubs.pubid FROM pubs))
    ORDER BY p.pubname, t.relid::regclass::text
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'compressx table % cannot be part of publication "%"', tbl, pub
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Logical replication decodes WAL, not the table access method, so it cannot read values compressx stores in its own format.',
                  HINT = format('Leave the table out of the publication, or store it as heap: ALTER TABLE %s SET ACCESS METHOD heap.', tbl);
    END IF;
END
$$;

DROP EVENT TRIGGER compressx_publications;
CREATE EVENT TRIGGER compressx_publications ON ddl_command_end
    WHEN TAG IN ('CREATE PUBLICATION', 'ALTER PUBLICATION', 'CREATE TABLE',
                 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE', 'CREATE SCHEMA')
    EXECUTE FUNCTION compressx.check_publications();

-- recompress_online (issue 12, first step): in place, in committed batches,
-- while other sessions read and write.  A procedure in C: it commits, so it
-- can have no SET clause, and it runs no SQL a planted object could catch.
CREATE PROCEDURE compressx.recompress_online(
    rel regclass, codec text DEFAULT NULL, level integer DEFAULT NULL,
    columns name[] DEFAULT NULL, access_method name DEFAULT NULL,
    batch_rows integer DEFAULT NULL,
    max_lock_wait interval DEFAULT '1s')
AS 'MODULE_PATHNAME', 'compressx_recompress_online'
LANGUAGE C;

COMMENT ON PROCEDURE compressx.recompress_online(regclass, text, integer, name[], name, integer, interval) IS
'recompress a table in place, in committed batches, while other sessions read and write it';

CREATE VIEW compressx.recompress_online_progress AS
SELECT p.pid,
       d.datname,
       p.relid,
       p.relid::pg_catalog.regclass AS relation,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) 1::pg_catalog.int8 THEN 'setting target'
            WHEN p.param2 OPERATOR(pg_catalog.=) 2::pg_catalog.int8 THEN 'rewriting'
            WHEN p.param2 OPERATOR(pg_catalog.=) 3::pg_catalog.int8 THEN 'retrying held rows'
            WHEN p.param2 OPERATOR(pg_catalog.=) 4::pg_catalog.int8 THEN 'waiting for writers'
            WHEN p.param2 OPERATOR(pg_catalog.=) 5::pg_catalog.int8 THEN 'waiting for old row versions'
            WHEN p.param2 OPERATOR(pg_catalog.=) 6::pg_catalog.int8 THEN 'changing access method'
            ELSE 'starting'
       END AS phase,
       CASE WHEN p.param13 OPERATOR(pg_catalog.<>) 0::pg_catalog.int8
            THEN p.param13::pg_catalog.oid::pg_catalog.regclass END AS current_table,
       p.param14 AS tables_done,
       p.param15 AS tables_total,
       p.param3 AS pass,
       p.param4 AS heap_blks_total,
       p.param5 AS heap_blks_scanned,
       p.param6 AS rows_total_estimate,
       p.param7 AS rows_checked,
       p.param8 AS rows_rewritten,
       p.param9 AS bytes_before,
       p.param10 AS bytes_after,
       p.param11 AS retries,
       p.param12 AS batches
FROM pg_catalog.pg_stat_get_progress_info('CLUSTER') p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid
WHERE p.param20 OPERATOR(pg_catalog.=) 1129860942::pg_catalog.int8;

GRANT SELECT ON compressx.recompress_online_progress TO PUBLIC;

COMMENT ON VIEW compressx.recompress_online_progress IS
'one row per running compressx.recompress_online call';

-- recompress_online: the tables of runs that have not completed (resume by
-- CALLing again, or abandon with recompress_online_cleanup), with the
-- settings they had before the first such run.  Written by the procedure
-- and the cleanup function only (as the extension's owner, after checking
-- the caller owns the table); read through the view below.
CREATE TABLE compressx.online_runs (
    relid regclass PRIMARY KEY,
    started_at timestamptz NOT NULL,
    codec text,
    level integer,
    columns name[],
    access_method name,
    settings_before jsonb,          -- its rows of compressx.column_settings
    compression_before text,        -- attnum:attcompression of its columns
    epoch bigint                    -- with a level: rows written by older
                                    -- transactions are re-encoded (full xid)
) USING heap;
REVOKE ALL ON compressx.online_runs FROM PUBLIC;

COMMENT ON TABLE compressx.online_runs IS
'tables with a compressx.recompress_online run that has not completed; see compressx.recompress_online_leftovers';

CREATE VIEW compressx.recompress_online_leftovers AS
SELECT r.relid AS relation,
       r.started_at,
       r.codec,
       r.level,
       r.columns,
       r.access_method AS target_access_method,
       a.amname AS access_method,
       pg_catalog.format('CALL compressx.recompress_online(%L, %L, %s, %L, %L)',
                         r.relid::pg_catalog.text, r.codec,
                         COALESCE(r.level::pg_catalog.text, 'NULL'),
                         r.columns, r.access_method) AS resume,
       pg_catalog.format('SELECT compressx.recompress_online_cleanup(%L)',
                         r.relid::pg_catalog.text) AS cleanup
FROM compressx.online_runs r
JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.relid::pg_catalog.oid
LEFT JOIN pg_catalog.pg_am a ON a.oid OPERATOR(pg_catalog.=) c.relam
WHERE pg_catalog.pg_has_role(c.relowner, 'USAGE')
  AND NOT EXISTS (
      SELECT FROM pg_catalog.pg_locks l,
                  (SELECT r.relid
                   UNION
                   SELECT p.relid FROM pg_catalog.pg_partition_ancestors(r.relid) p) anc
      WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory'
        AND l.granted
        AND l.database OPERATOR(pg_catalog.=)
            (SELECT d.oid FROM pg_catalog.pg_database d
             WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
        AND l.classid OPERATOR(pg_catalog.=) anc.relid::pg_catalog.oid
        AND l.objid OPERATOR(pg_catalog.=) 0::pg_catalog.oid
        AND l.objsubid OPERATOR(pg_catalog.=) 17240::pg_catalog.int2);

GRANT SELECT ON compressx.recompress_online_leftovers TO PUBLIC;

COMMENT ON VIEW compressx.recompress_online_leftovers IS
'tables whose compressx.recompress_online run was interrupted (cancel, error, crash) and is not running now';

CREATE FUNCTION compressx.recompress_online_cleanup(rel regclass)
RETURNS text
AS 'MODULE_PATHNAME', 'compressx_recompress_online_cleanup'
LANGUAGE C STRICT;

COMMENT ON FUNCTION compressx.recompress_online_cleanup(regclass) IS
'abandon an interrupted recompress_online run: restore the column settings the table had before it';

-- Logical replication and CDC (issue 13).  Decoding reads compressx's
-- values from WAL through the output plugin compressx (pgoutput's
-- protocol) or compressx_test_decoding (src/logical/decoder.c), which read
-- dictionaries with the historic snapshot: the dictionaries table must be a
-- user catalog table for its rows to be seen, and kept, as of each decoded
-- change.  Rows that committed before this are seen by slots created after
-- it.
ALTER TABLE compressx.dictionaries SET (user_catalog_table = true);

-- The publication guard now refuses only what cannot work: publishing
-- compressx's own tables by name or by schema.  Their rows name relations
-- and dictionaries by this database's OIDs and ids, which mean nothing, or
-- something else, on another server.  FOR ALL TABLES includes them (core
-- gives no way out); compressx.skip_replicated_rows() below keeps a
-- subscriber's own rows.  compressx tables themselves may be published.
CREATE OR REPLACE FUNCTION compressx.check_publications()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pub name;
    tbl regclass;
BEGIN
    SELECT p.pubname, c.oid::regclass INTO pub, tbl
    FROM pg_event_trigger_ddl_commands() d
    JOIN pg_publication p ON
         (d.classid = 'pg_publication'::regclass AND p.oid = d.objid)
      OR (d.classid = 'pg_publication_rel'::regclass AND p.oid =
            (SELECT pr.prpubid FROM pg_publication_rel pr WHERE pr.oid = d.objid))
      OR (d.classid = 'pg_publication_namespace'::regclass AND p.oid =
            (SELECT pn.pnpubid FROM pg_publication_namespace pn WHERE pn.oid = d.objid))
    JOIN pg_class c ON c.relnamespace = 'compressx'::regnamespace AND c.relkind = 'r'
    WHERE NOT p.puballtables
      AND (EXISTS (SELECT 1 FROM pg_publication_rel pr
                   WHERE pr.prpubid = p.oid AND pr.prrelid = c.oid)
           OR EXISTS (SELECT 1 FROM pg_publication_namespace pn
                      WHERE pn.pnpubid = p.oid AND pn.pnnspid = c.relnamespace))
    ORDER BY p.pubname, c.relname
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'compressx''s own table % cannot be part of publication "%"', tbl, pub
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Its rows name this database''s relations and dictionaries by their OIDs and ids, which mean nothing on another server.',
                  HINT = 'Publish the compressx tables themselves; a subscriber keeps its own compressx settings.';
    END IF;
END
$$;

DROP EVENT TRIGGER compressx_publications;
CREATE EVENT TRIGGER compressx_publications ON ddl_command_end
    WHEN TAG IN ('CREATE PUBLICATION', 'ALTER PUBLICATION')
    EXECUTE FUNCTION compressx.check_publications();

-- A subscriber with compressx installed, subscribed to a FOR ALL TABLES
-- publication of a server with compressx, would get that server's
-- settings and dictionaries: rows naming its relations by OID.  The
-- logical replication workers (apply and table sync) skip them; nothing
-- else does, whatever session_replication_role says.
CREATE FUNCTION compressx.skip_replicated_rows()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (SELECT a.backend_type FROM pg_stat_get_activity(pg_backend_pid()) a)
           LIKE 'logical replication%' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER skip_replicated_rows BEFORE INSERT OR UPDATE OR DELETE
    ON compressx.column_settings FOR EACH ROW
    EXECUTE FUNCTION compressx.skip_replicated_rows();
ALTER TABLE compressx.column_settings ENABLE REPLICA TRIGGER skip_replicated_rows;
CREATE TRIGGER skip_replicated_rows BEFORE INSERT OR UPDATE OR DELETE
    ON compressx.dictionaries FOR EACH ROW
    EXECUTE FUNCTION compressx.skip_replicated_rows();
ALTER TABLE compressx.dictionaries ENABLE REPLICA TRIGGER skip_replicated_rows;
CREATE TRIGGER skip_replicated_rows BEFORE INSERT OR UPDATE OR DELETE
    ON compressx.online_runs FOR EACH ROW
    EXECUTE FUNCTION compressx.skip_replicated_rows();
ALTER TABLE compressx.online_runs ENABLE REPLICA TRIGGER skip_replicated_rows;

-- Logical slots of this database whose plugin cannot decode compressx's
-- own (zstd) values: such a slot stops at the first one it has to send.
CREATE FUNCTION compressx.check_logical()
RETURNS TABLE (slot_name name, plugin name, problem text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH path AS (
        SELECT pg_catalog.string_to_array(pg_catalog.current_setting('dynamic_library_path'), ':') AS p
    )
    SELECT s.slot_name, s.plugin,
           pg_catalog.format('plugin %s cannot decode compressx''s zstd values, so the slot stops at the first one it must send; '
                  'use a slot with plugin compressx (pgoutput''s protocol) or compressx_test_decoding, '
                  'or put $libdir/compressx_decoders before $libdir on dynamic_library_path', s.plugin)
    FROM pg_catalog.pg_replication_slots s, path
    WHERE s.slot_type OPERATOR(pg_catalog.=) 'logical'::pg_catalog.text
      AND s.database OPERATOR(pg_catalog.=) pg_catalog.current_database()
      AND NOT s.plugin OPERATOR(pg_catalog.=) ANY ('{compressx,compressx_test_decoding}'::pg_catalog.name[])
      AND NOT (s.plugin OPERATOR(pg_catalog.=) ANY ('{pgoutput,test_decoding}'::pg_catalog.name[])
               AND COALESCE(pg_catalog.array_position(path.p, '$libdir/compressx_decoders'), 2147483647)
                   OPERATOR(pg_catalog.<) COALESCE(pg_catalog.array_position(path.p, '$libdir'), 2147483647))
    ORDER BY 1
$$;

COMMENT ON FUNCTION compressx.check_logical() IS
'logical replication slots of this database whose output plugin cannot decode compressx values';
