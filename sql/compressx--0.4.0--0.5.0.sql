/* compressx 0.4.0 -> 0.5.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.5.0'" to load this file. \quit

-- Review round 3 (issue 27): privileges, lock order and resources.
-- Every operator and function this script binds is schema-qualified
-- (pg_catalog. or compressx.): a role with CREATE on public must not be
-- able to plant an object that this script picks up.
