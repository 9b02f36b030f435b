-- Issue 27, item 17: the planner sees compressx columns as heap's ANALYZE
-- would measure them.  ANALYZE counts a value's width before detoasting it,
-- so heap's out-of-line values count as their TOAST pointer; compressx's
-- count as a pointer too (not as their decoded bytes), while statistics
-- still come from the decoded values.  Plans of the same query then have
-- the same shape on both.
SET compressx.default_codec = 'zstd';
CREATE TABLE plan_h (id int PRIMARY KEY, small text, mid text, big text);
CREATE TABLE plan_x (id int PRIMARY KEY, small text, mid text, big text) USING compressx;
-- mid: values of ~330 bytes, out of line in compressx (inline_max 25)
SELECT compressx.set_column_inline('plan_x', 'mid', 25);
-- and in heap (no compression: the width of a TOAST pointer)
ALTER TABLE plan_h ALTER COLUMN mid SET STORAGE EXTERNAL;
INSERT INTO plan_h
SELECT i,
       json_build_object('id', i, 'kind', 'kind ' || i % 7, 'note', 'a small document ' || i)::text,
       'mid ' || (i % 40) || ' ' || (SELECT string_agg(md5((i % 40)::text || k), ' ') FROM generate_series(1, 10) k),
       (SELECT string_agg(md5(i::text || k), '') FROM generate_series(1, 300) k)
FROM generate_series(1, 2000) i;
INSERT INTO plan_x SELECT * FROM plan_h;
VACUUM ANALYZE plan_h;
VACUUM ANALYZE plan_x;

-- the data is the same, and compressx stored mid and big out of line
SELECT (SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM plan_h t) =
       (SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM plan_x t) AS same_rows;
SELECT column_name, external_values > 0 AS out_of_line
FROM compressx.column_stats('plan_x') WHERE column_name IN ('mid', 'big') ORDER BY 1;

-- widths: as heap's (a pointer for out-of-line values, the value for
-- inline ones), not the decoded size of every value (9 600 bytes for big)
SELECT h.attname,
       x.avg_width <= greatest(h.avg_width, 18) AS at_most_heaps,
       x.avg_width >= least(h.avg_width, 10) AS at_least_a_pointer
FROM pg_stats h JOIN pg_stats x USING (attname)
WHERE h.tablename = 'plan_h' AND x.tablename = 'plan_x' ORDER BY 1;
SELECT x.avg_width = h.avg_width AS small_same_width
FROM pg_stats h JOIN pg_stats x USING (attname)
WHERE h.tablename = 'plan_h' AND x.tablename = 'plan_x' AND attname = 'small';

-- statistics come from decoded values: out-of-line mid has heap's MCVs,
-- histogram and distinct count
SELECT attname,
       x.most_common_vals::text = h.most_common_vals::text AS same_mcv,
       x.most_common_vals::text LIKE '{"mid %' AS decoded_mcv,
       x.histogram_bounds::text IS NOT DISTINCT FROM h.histogram_bounds::text AS same_histogram,
       x.n_distinct = h.n_distinct AS same_n_distinct
FROM pg_stats h JOIN pg_stats x USING (attname)
WHERE h.tablename = 'plan_h' AND x.tablename = 'plan_x' AND attname IN ('mid', 'small')
ORDER BY 1;

-- plan shapes (node types, join types, index use; no costs or names)
CREATE FUNCTION plan_shape(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    p json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON, COSTS OFF) ' || q INTO p;
    RETURN plan_shape_node(p -> 0 -> 'Plan');
END $$;
CREATE FUNCTION plan_shape_node(n json) RETURNS text LANGUAGE sql AS $$
    SELECT (n ->> 'Node Type')
           || coalesce(' ' || (n ->> 'Join Type'), '')
           || coalesce(' ' || (n ->> 'Strategy'), '')
           || coalesce('(' || (SELECT string_agg(plan_shape_node(c), ', ')
                               FROM json_array_elements(n -> 'Plans') c) || ')', '')
$$;
CREATE FUNCTION planned_width(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    p json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO p;
    RETURN (p -> 0 -> 'Plan' ->> 'Plan Width')::int;
END $$;

-- same_shape: heap's plan and compressx's have the same nodes (the shapes
-- themselves differ between PostgreSQL versions: not shown)
CREATE FUNCTION same_shape(q text) RETURNS boolean LANGUAGE sql AS $$
    SELECT plan_shape(format(q, 'plan_h')) = plan_shape(format(q, 'plan_x')) $$;
SET enable_seqscan = off;
-- the issue's query: a whole-row reference, 500 keys of an IN list
SELECT same_shape($q$SELECT sum(length(t::text)) FROM %s t
    WHERE id IN (SELECT (g * 37) %% 2000 + 1 FROM generate_series(1, 500) g)$q$) AS whole_row_in;
SELECT (SELECT sum(length(t::text)) FROM plan_h t
        WHERE id IN (SELECT (g * 37) % 2000 + 1 FROM generate_series(1, 500) g)) =
       (SELECT sum(length(t::text)) FROM plan_x t
        WHERE id IN (SELECT (g * 37) % 2000 + 1 FROM generate_series(1, 500) g)) AS same_result;
-- the rewrite that decodes only the rows it keeps: index lookups, no join
SELECT s LIKE '%Index Scan%' AND s NOT LIKE '%Join%' AS any_looks_up
FROM plan_shape($q$SELECT sum(length(t::text)) FROM plan_x t
    WHERE id = ANY (ARRAY(SELECT (g * 37) % 2000 + 1 FROM generate_series(1, 500) g))$q$) s;
RESET enable_seqscan;
-- a self-join carrying the wide column, a sort of it, a grouping
SELECT same_shape($q$SELECT a.id, b.big FROM %1$s a JOIN %1$s b ON b.id = a.id + 1
    WHERE a.small LIKE '%%kind 3%%'$q$) AS self_join;
SELECT same_shape('SELECT id, big, mid FROM %s ORDER BY small') AS sort;
SELECT same_shape('SELECT mid, count(*), max(big) FROM %s GROUP BY mid') AS group_by;
-- the planned width of whole rows is heap's order of magnitude
SELECT planned_width('SELECT t FROM plan_x t') <= 2 * planned_width('SELECT t FROM plan_h t') AS whole_row_width;

DROP TABLE plan_h, plan_x;
DROP FUNCTION same_shape(text), plan_shape(text), plan_shape_node(json), planned_width(text);
RESET compressx.default_codec;
