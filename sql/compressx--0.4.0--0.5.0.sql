/* compressx 0.4.0 -> 0.5.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.5.0'" to load this file. \quit

-- Review round 3 (issue 27): privileges, lock order and resources.
-- Every operator and function this script binds is schema-qualified
-- (pg_catalog. or compressx.): a role with CREATE on public must not be
-- able to plant an object that this script picks up.

-- Item 11 (Citus): where Citus cannot send the compression settings of a
-- Citus table inside the coordinator's transaction, they go at commit, each
-- worker in a transaction of its own, and a failure after that leaves the
-- workers with settings the coordinator did not commit.  A check that
-- compares every worker with the coordinator, and a repair.

CREATE FUNCTION compressx.citus_settings_digest(rel regclass)
RETURNS text
AS 'MODULE_PATHNAME', 'compressx_citus_settings_digest'
LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION compressx.citus_settings_digest(regclass) IS
'used by citus_settings_check: a digest of the compression settings of rel on this node and of their dictionaries'' contents; owner only';

CREATE FUNCTION compressx.citus_settings_check()
RETURNS TABLE (relation regclass, node_name text, node_port integer, problem text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[];
    digests text[];
    w record;
    theirs jsonb;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RAISE EXCEPTION 'compressx.citus_settings_check() runs only in a database with Citus'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_dist_local_group g
                   WHERE g.groupid OPERATOR(pg_catalog.=) 0) THEN
        RAISE EXCEPTION 'compressx.citus_settings_check() runs on the coordinator'
            USING ERRCODE = 'feature_not_supported';
    END IF;
    -- the Citus tables of the caller's roles, as this transaction sees them
    SELECT pg_catalog.array_agg(pg_catalog.format('%I.%I', n.nspname, c.relname) ORDER BY c.oid),
           pg_catalog.array_agg(compressx.citus_settings_digest(c.oid::pg_catalog.regclass) ORDER BY c.oid)
      INTO names, digests
      FROM pg_catalog.pg_dist_partition p
      JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) p.logicalrelid
      JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
     WHERE pg_catalog.pg_has_role(c.relowner, 'USAGE');
    IF names IS NULL THEN
        RETURN;
    END IF;
    FOR w IN SELECT * FROM pg_catalog.run_command_on_workers(pg_catalog.format(
            'SELECT pg_catalog.jsonb_object_agg(n, CASE WHEN pg_catalog.to_regclass(n) IS NOT NULL '
            'THEN compressx.citus_settings_digest(n::pg_catalog.regclass) END) '
            'FROM pg_catalog.unnest(%L::pg_catalog.text[]) n', names))
    LOOP
        IF NOT w.success THEN
            RETURN QUERY SELECT NULL::pg_catalog.regclass, w.nodename, w.nodeport,
                'could not be checked: ' OPERATOR(pg_catalog.||) w.result;
            CONTINUE;
        END IF;
        theirs := w.result::jsonb;
        RETURN QUERY SELECT x.name::pg_catalog.regclass, w.nodename, w.nodeport,
                CASE WHEN (theirs OPERATOR(pg_catalog.->>) x.name) IS NULL
                     THEN 'the table is missing on this node'
                     ELSE 'the compression settings differ from the coordinator''s' END
            FROM ROWS FROM (pg_catalog.unnest(names), pg_catalog.unnest(digests)) AS x(name, digest)
           WHERE (theirs OPERATOR(pg_catalog.->>) x.name) IS DISTINCT FROM x.digest;
    END LOOP;
END
$$;

COMMENT ON FUNCTION compressx.citus_settings_check() IS
'on the coordinator: the workers whose compression settings or dictionaries of a Citus table (of the caller''s roles) differ from the coordinator''s, and the workers that could not be checked';

CREATE FUNCTION compressx.citus_settings_repair()
RETURNS SETOF regclass
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r pg_catalog.regclass;
BEGIN
    FOR r IN SELECT DISTINCT c.relation FROM compressx.citus_settings_check() c
             WHERE c.relation IS NOT NULL ORDER BY 1
    LOOP
        PERFORM compressx.citus_push(r);
        RETURN NEXT r;
    END LOOP;
END
$$;

COMMENT ON FUNCTION compressx.citus_settings_repair() IS
'on the coordinator: send the compression settings and dictionaries of every Citus table citus_settings_check reports to the other nodes again (citus_push); returns those tables';
