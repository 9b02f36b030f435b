/* compressx 0.4.0 -> 0.5.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.5.0'" to load this file. \quit

-- Review round 3 (issue 27): privileges, lock order and resources.
-- Every operator and function this script binds is schema-qualified
-- (pg_catalog. or compressx.): a role with CREATE on public must not be
-- able to plant an object that this script picks up.

-- Item 14: a DROP TABLE must not stop a lagging logical slot.  A dictionary
-- of a dropped table (or a retired automatic one) that a replication slot
-- may still need for decoding is kept, with relid 0 and the dropping
-- transaction in "dropped", until every slot's catalog_xmin has passed that
-- transaction (src/catalog/dict_dropped.c); such rows are not dumped.
ALTER TABLE compressx.dictionaries ADD COLUMN dropped pg_catalog.xid8;
COMMENT ON COLUMN compressx.dictionaries.dropped IS
'the transaction that dropped the dictionary''s table, or retired the automatic dictionary (relid is then 0): kept while a replication slot may still decode values that use it, then deleted by the next DROP TABLE, automatic-dictionary check or compressx.purge_dropped_dictionaries()';
SELECT pg_catalog.pg_extension_config_dump('compressx.dictionaries', 'WHERE dropped IS NULL');

CREATE FUNCTION compressx.purge_dropped_dictionaries()
RETURNS integer
AS 'MODULE_PATHNAME', 'compressx_purge_dropped_dictionaries'
LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION compressx.purge_dropped_dictionaries() FROM PUBLIC;
COMMENT ON FUNCTION compressx.purge_dropped_dictionaries() IS
'delete the dictionaries of dropped tables that no replication slot may still need; returns how many (DROP TABLE does this too)';
