/* compressx 0.4.0 -> 0.5.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.5.0'" to load this file. \quit

-- Review round 3 (issue 27): privileges, lock order and resources.
-- Every operator and function this script binds is schema-qualified
-- (pg_catalog. or compressx.): a role with CREATE on public must not be
-- able to plant an object that this script picks up.

-- Items 2, 3, 10, 12 (dictionary cache bound, worker lock, snapshots,
-- worker leaving a dropped database): each session's cache of digested
-- dictionaries is bounded by compressx.dictionary_cache_memory; this
-- reports it.
CREATE FUNCTION compressx.dictionary_cache(OUT entries bigint, OUT bytes bigint,
                                           OUT max_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'compressx_dictionary_cache'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION compressx.dictionary_cache() IS
'this session''s cache of digested dictionaries: dictionaries held, the bytes they take (zstd and lz4 digests included), and its bound (compressx.dictionary_cache_memory)';
