-- compressx 0.2.0 -> 0.3.0: tables distributed with Citus.
\echo Use "ALTER EXTENSION compressx UPDATE" to load this file. \quit

-- Settings and dictionaries are kept per node, for each node's copy of a
-- Citus table; a shard follows its table's rows (catalog/citus.c).

CREATE FUNCTION compressx.citus_shell(rel regclass)
RETURNS regclass
AS 'MODULE_PATHNAME', 'compressx_citus_shell'
LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION compressx.citus_shell(regclass) IS
'the Citus table whose compression settings shard rel follows on this node, or NULL when rel is no shard';

CREATE FUNCTION compressx.citus_apply(rel regclass, state jsonb, version text)
RETURNS void
AS 'MODULE_PATHNAME', 'compressx_citus_apply'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.citus_apply(regclass, jsonb, text) IS
'used by the coordinator: make the compression settings and dictionaries of a Citus table on this node those given; owner only';

CREATE FUNCTION compressx.citus_push(rel regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'compressx_citus_push'
LANGUAGE C VOLATILE STRICT;

COMMENT ON FUNCTION compressx.citus_push(regclass) IS
'on the coordinator: send the compression settings and dictionaries of a Citus table to every other node again (after citus_add_node); owner only';

CREATE FUNCTION compressx.value_bytes(value anyelement)
RETURNS bytea
AS 'MODULE_PATHNAME', 'compressx_value_bytes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION compressx.value_bytes(anyelement) IS
'the bytes of a variable-length value as compressx compresses them (what train_dictionary samples)';

CREATE FUNCTION compressx.citus_in_fan_out()
RETURNS boolean
AS 'MODULE_PATHNAME', 'compressx_citus_in_fan_out'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.citus_in_fan_out() IS
'whether one of compressx''s functions is acting on every shard of a Citus table in this session (the citus_* functions below run only then)';

-- The fan-out of compressx's functions called on the coordinator for a
-- Citus table (sql/citus_fanout.c calls them, with the caller's
-- arguments).  Each shard placement runs the function in a transaction of
-- its own, in parallel; a failure names the shard and node.

-- The wrappers below run only inside compressx's fan-out.
CREATE FUNCTION compressx.citus_fan_out_only(fn text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT compressx.citus_in_fan_out() THEN
        RAISE EXCEPTION 'compressx.%() is called by compressx''s functions on a Citus table', fn
            USING HINT = 'Call the function without citus_ in its name.';
    END IF;
END
$$;

-- call (a set-returning call whose %L is the shard) on one placement of
-- each shard of rel: its rows, all shards together, as a jsonb array.
-- sample_rows, when given, is shared out among the shards (%s in call).
CREATE FUNCTION compressx.citus_on_shards(rel regclass, call text, sample_rows integer)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    per_shard integer;
    results jsonb := '[]';
    p record;
BEGIN
    IF sample_rows IS NOT NULL THEN
        SELECT GREATEST(1, ceil(sample_rows::numeric / GREATEST(1, count(*))))::integer INTO per_shard
        FROM pg_dist_shard WHERE logicalrelid = rel;
    END IF;
    FOR p IN SELECT * FROM run_command_on_shards(rel, format(
            'SELECT COALESCE(pg_catalog.json_agg(s), ''[]'') FROM ' || call || ' s',
            '%L', coalesce(per_shard::text, 'NULL')))
    LOOP
        IF NOT p.success THEN
            RAISE EXCEPTION 'could not read shard % of "%"', p.shardid, rel
                USING DETAIL = p.result;
        END IF;
        results := results || p.result::jsonb;
    END LOOP;
    RETURN results;
END
$$;

-- Every placement: replicas of a reference table may differ.
CREATE FUNCTION compressx.citus_verify(rel regclass)
RETURNS TABLE (relation regclass, ctid tid, column_name name, problem text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    p record;
    v record;
    n integer := 0;
BEGIN
    PERFORM compressx.citus_fan_out_only('citus_verify');
    FOR p IN SELECT * FROM run_command_on_placements(rel,
            'SELECT COALESCE(pg_catalog.json_agg(v), ''[]'') FROM compressx.verify(%L) v')
    LOOP
        IF NOT p.success THEN
            RAISE EXCEPTION 'could not verify shard % of "%" on node %:%',
                p.shardid, rel, p.nodename, p.nodeport
                USING DETAIL = p.result;
        END IF;
        n := n + 1;
        FOR v IN SELECT * FROM json_to_recordset(p.result::json)
                AS x(ctid tid, column_name name, problem text)
        LOOP
            relation := rel;
            ctid := v.ctid;
            column_name := v.column_name;
            problem := format('shard %s on node %s:%s: %s', p.shardid, p.nodename, p.nodeport, v.problem);
            RETURN NEXT;
        END LOOP;
    END LOOP;
    RAISE NOTICE 'compressx.verify checked % shard placements of "%"', n, rel;
END
$$;

-- One placement of each shard; sampled rows shared out among the shards.
CREATE FUNCTION compressx.citus_stored_summary(rel regclass, sample_rows integer)
RETURNS TABLE (column_name name, method text, "values" bigint,
               external_values bigint, raw_bytes bigint, stored_bytes bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    results jsonb;
BEGIN
    PERFORM compressx.citus_fan_out_only('citus_stored_summary');
    results := compressx.citus_on_shards(rel, 'compressx.stored_summary(%s, %s)', sample_rows);
    RETURN QUERY
    SELECT x.column_name, x.method, sum(x."values")::bigint, sum(x.external_values)::bigint,
           sum(x.raw_bytes)::bigint, sum(x.stored_bytes)::bigint
    FROM jsonb_to_recordset(results) AS x(column_name name, method text, "values" bigint,
                                          external_values bigint, raw_bytes bigint,
                                          stored_bytes bigint)
    LEFT JOIN pg_attribute a ON a.attrelid = rel AND a.attname = x.column_name
    GROUP BY x.column_name, x.method, a.attnum
    ORDER BY a.attnum, x.method NULLS FIRST;
END
$$;

-- One placement of each shard: the mean of the shards' figures, and the
-- recommendation made again on them.
CREATE FUNCTION compressx.citus_advise(rel regclass, sample_rows integer,
                                       min_compress_mb_s double precision)
RETURNS TABLE (column_name name, codec text, level integer, dictionary boolean,
               ratio numeric, compress_mb_s numeric, decompress_mb_s numeric,
               recommended boolean)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    results jsonb;
BEGIN
    PERFORM compressx.citus_fan_out_only('citus_advise');
    results := compressx.citus_on_shards(rel, format('compressx.advise(%%s, %%s, %L)', min_compress_mb_s), sample_rows);
    RETURN QUERY
    WITH m AS (
        SELECT x.column_name, x.codec, x.level, x.dictionary,
               round(avg(x.ratio), 2) AS ratio,
               round(avg(x.compress_mb_s), 1) AS compress_mb_s,
               round(avg(x.decompress_mb_s), 1) AS decompress_mb_s,
               a.attnum
        FROM jsonb_to_recordset(results) AS x(column_name name, codec text, level integer,
                                              dictionary boolean, ratio numeric,
                                              compress_mb_s numeric, decompress_mb_s numeric)
        LEFT JOIN pg_attribute a ON a.attrelid = rel AND a.attname = x.column_name
        GROUP BY x.column_name, x.codec, x.level, x.dictionary, a.attnum),
    best AS (
        SELECT DISTINCT ON (m.column_name) m.column_name, m.codec, m.level, m.dictionary
        FROM m WHERE m.compress_mb_s >= min_compress_mb_s
        ORDER BY m.column_name, m.ratio DESC, m.compress_mb_s DESC)
    SELECT m.column_name, m.codec, m.level, m.dictionary, m.ratio, m.compress_mb_s,
           m.decompress_mb_s,
           EXISTS (SELECT FROM best b WHERE b.column_name = m.column_name AND b.codec = m.codec
                   AND b.level IS NOT DISTINCT FROM m.level AND b.dictionary = m.dictionary)
    FROM m
    ORDER BY m.attnum, m.codec, m.level, m.dictionary;
END
$$;

-- Every placement, each rewritten under its own ACCESS EXCLUSIVE lock and
-- committed on its own; then the table on the coordinator, which stores
-- the settings (compressx tables) that the caller then sends to the other
-- nodes.  A failed placement stops the call after the others finished:
-- calling it again rewrites what is left.
CREATE FUNCTION compressx.citus_recompress_table(rel regclass, codec text, level integer,
                                                 columns name[])
RETURNS TABLE (column_name name, values_rewritten bigint, bytes_before bigint,
               bytes_after bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    results jsonb := '[]';
    failures text := '';
    p record;
BEGIN
    PERFORM compressx.citus_fan_out_only('citus_recompress_table');
    -- run_command_on_placements formats the command again: a % in the
    -- arguments must reach it doubled
    FOR p IN SELECT * FROM run_command_on_placements(rel, format(
            'SELECT COALESCE(pg_catalog.json_agg(r), ''[]'') FROM compressx.recompress_table(%%L, %s) r',
            replace(format('%L, %L, %L', codec, level, columns), '%', '%%')))
    LOOP
        IF p.success THEN
            results := results || p.result::jsonb;
        ELSE
            failures := failures || format(E'\nshard %s on node %s:%s: %s',
                                           p.shardid, p.nodename, p.nodeport, p.result);
        END IF;
    END LOOP;
    IF failures <> '' THEN
        RAISE EXCEPTION 'could not recompress every shard of "%"', rel
            USING DETAIL = 'The other shards are rewritten; call recompress_table again to finish.' || failures;
    END IF;
    PERFORM compressx.recompress_table(rel, codec, level, columns);
    RETURN QUERY
    SELECT x.column_name, sum(x.values_rewritten)::bigint, sum(x.bytes_before)::bigint,
           sum(x.bytes_after)::bigint
    FROM jsonb_to_recordset(results) AS x(column_name name, values_rewritten bigint,
                                          bytes_before bigint, bytes_after bigint)
    LEFT JOIN pg_attribute a ON a.attrelid = rel AND a.attname = x.column_name
    GROUP BY x.column_name, a.attnum
    ORDER BY a.attnum;
END
$$;

-- The publication guard also stops Citus's logical shard moves and splits
-- of compressx tables early when they cannot work: Citus decodes them with
-- plugin pgoutput (by that name), which stops at the first zstd value
-- written during the move unless compressx's decoders come first on
-- dynamic_library_path.  Its publications are named
-- citus_shard_move_publication_* and citus_shard_split_publication_*.
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

    SELECT p.pubname, c.oid::regclass INTO pub, tbl
    FROM pg_event_trigger_ddl_commands() d
    JOIN pg_publication p ON d.classid = 'pg_publication'::regclass AND p.oid = d.objid
    JOIN pg_publication_rel pr ON pr.prpubid = p.oid
    JOIN pg_class c ON c.oid = pr.prrelid
    JOIN pg_am am ON am.oid = c.relam AND am.amname = 'compressx'
    WHERE p.pubname LIKE 'citus\_shard\_move\_publication\_%'
       OR p.pubname LIKE 'citus\_shard\_split\_publication\_%'
    ORDER BY c.relname
    LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- dynamic_library_path only now: only superusers may read it, and
    -- Citus creates these publications as one
    IF NOT (SELECT coalesce(array_position(p, '$libdir/compressx_decoders'), 2147483647)
                   < coalesce(array_position(p, '$libdir'), 2147483647)
            FROM string_to_array(current_setting('dynamic_library_path'), ':') AS p) THEN
        RAISE EXCEPTION 'Citus cannot move or split shard % of a compressx table logically here', tbl
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Citus decodes the changes made during the move with plugin pgoutput, which stops at the first zstd value it meets.',
                  HINT = 'Pass shard_transfer_mode => ''block_writes'', or put $libdir/compressx_decoders before $libdir on dynamic_library_path on every node (see README, "Scaling out with Citus").';
    END IF;
END
$$;

-- A dictionary goes with its table, except a shared one: a Citus table's,
-- which the table's shards on the node use too (Citus drops and makes again
-- a worker's copy of a table without its shards).
ALTER TABLE compressx.dictionaries ADD COLUMN shared boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN compressx.dictionaries.shared IS
'kept when its table is dropped: a Citus table''s dictionary, used by the table''s shards on this node';
