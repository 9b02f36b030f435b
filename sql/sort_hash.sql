-- Sorts, hashes, aggregates, windows and materializations over compressx
-- values give what they give over heap, in memory and spilled to disk.
-- (Since PostgreSQL 17 tuplesort keeps tuples in a bump memory context,
-- where decoding a value failed: "pfree called with invalid pointer".)
CREATE TABLE sh_heap (id integer, k integer, small text, big text, b bytea, j jsonb);
INSERT INTO sh_heap
SELECT g, g % 37,
       'small ' || (g * 7919) % 1000,
       (SELECT string_agg(md5((g * 1000 + i)::text), ' ') FROM generate_series(1, 200) i),
       convert_to(repeat('bytes ' || g % 50, 40), 'UTF8'),
       jsonb_build_object('id', g, 'tag', 'tag' || g % 11, 'note', repeat('n', g % 300))
FROM generate_series(1, 400) g;
-- the same rows in compressx tables: zstd (big goes out of line), with a
-- dictionary, lz4 and pglz
CREATE TABLE sh_zstd (LIKE sh_heap) USING compressx;
INSERT INTO sh_zstd SELECT * FROM sh_heap;
CREATE TABLE sh_lz4 (LIKE sh_heap) USING compressx;
SELECT compressx.set_column_codec('sh_lz4', c, 'lz4', 9, 16)
FROM unnest('{small,big,b,j}'::name[]) c;
INSERT INTO sh_lz4 SELECT * FROM sh_heap;
CREATE TABLE sh_pglz (LIKE sh_heap) USING compressx;
SELECT compressx.set_column_codec('sh_pglz', c, 'pglz', NULL, 16)
FROM unnest('{small,big,b,j}'::name[]) c;
INSERT INTO sh_pglz SELECT * FROM sh_heap;
CREATE TABLE sh_dict (LIKE sh_heap) USING compressx;
INSERT INTO sh_dict SELECT * FROM sh_heap;
SELECT compressx.set_column_codec('sh_dict', 'j', 'zstd', 3, 16);
SELECT compressx.train_dictionary('sh_dict', 'j', 2048) > 0 AS trained;
VACUUM FULL sh_dict;
-- every kind of stored value is there
SELECT t, jsonb_object_keys(methods) AS method
FROM (SELECT 'sh_zstd' AS t UNION ALL SELECT 'sh_lz4' UNION ALL SELECT 'sh_pglz') x,
     compressx.column_stats(t::regclass) s WHERE s.column_name = 'big' ORDER BY 1, 2;
SELECT sum(external_values) > 0 AS zstd_out_of_line FROM compressx.column_stats('sh_zstd');
SELECT (SELECT count(*) FROM sh_dict t, compressx.value_storage('sh_dict', t.ctid, 'j') v
        WHERE v.method = 'zstd') > 0 AS dictionary_values;

-- Each query below runs over every table; a row says whether the compressx
-- table's result equals heap's.
CREATE FUNCTION pg_temp.same(query text) RETURNS TABLE (tbl text, same boolean)
LANGUAGE plpgsql AS $$
DECLARE
    expected text;
    got text;
    t text;
BEGIN
    EXECUTE format(query, 'sh_heap') INTO expected;
    FOREACH t IN ARRAY ARRAY['sh_zstd', 'sh_lz4', 'sh_pglz', 'sh_dict'] LOOP
        EXECUTE format(query, t) INTO got;
        tbl := t;
        same := got IS NOT DISTINCT FROM expected AND got IS NOT NULL;
        RETURN NEXT;
    END LOOP;
END
$$;
CREATE TEMP TABLE queries (name text, q text);
INSERT INTO queries VALUES
 ('ordered string_agg', $q$SELECT md5(string_agg(md5(big), ',' ORDER BY id)) FROM %I$q$),
 ('sort on compressed column', $q$SELECT md5(string_agg(s.big, ',')) FROM (SELECT big FROM %I ORDER BY big) s$q$),
 ('sort whole rows', $q$SELECT md5(string_agg(s::text, ',')) FROM (SELECT * FROM %I ORDER BY small, id) s$q$),
 ('aggregate ordered by value', $q$SELECT md5(string_agg(big, ',' ORDER BY big)) FROM %I$q$),
 ('array_agg of jsonb', $q$SELECT md5(array_agg(j ORDER BY id)::text) FROM %I$q$),
 ('distinct', $q$SELECT md5(string_agg(d, ',' ORDER BY d)) FROM (SELECT DISTINCT small AS d FROM %I) s$q$),
 ('group by value', $q$SELECT md5(string_agg(g.small || ':' || g.n, ',' ORDER BY g.small)) FROM (SELECT small, count(*) AS n, max(big) AS m FROM %I GROUP BY small) g$q$),
 ('group by jsonb', $q$SELECT md5(string_agg(g.t || g.n, ',' ORDER BY g.t)) FROM (SELECT j->>'tag' AS t, count(DISTINCT b) AS n FROM %I GROUP BY 1) g$q$),
 ('self join on value', $q$SELECT count(*) || md5(string_agg(a.id || '-' || b.id, ',' ORDER BY a.id, b.id)) FROM %1$I a JOIN %1$I b ON a.big = b.big$q$),
 ('join on small value', $q$SELECT count(*) FROM %1$I a JOIN %1$I b ON a.small = b.small$q$),
 ('window', $q$SELECT md5(string_agg(w, ',' ORDER BY id)) FROM (SELECT id, md5(coalesce(lag(big) OVER (PARTITION BY k ORDER BY id), '') || first_value(small) OVER (PARTITION BY k ORDER BY big)) AS w FROM %I) s$q$),
 ('materialized CTE', $q$WITH m AS MATERIALIZED (SELECT id, big, j FROM %I) SELECT md5(string_agg(x.big || y.j::text, ',' ORDER BY x.id)) FROM m x JOIN m y ON y.id = x.id$q$),
 ('set-returning subquery', $q$SELECT md5(string_agg(v, ',' ORDER BY v)) FROM (SELECT unnest(ARRAY[small, big]) AS v FROM %I) s$q$),
 ('incremental sort', $q$SELECT md5(string_agg(s.id || s.big, ',')) FROM (SELECT * FROM (SELECT * FROM %I ORDER BY k) o ORDER BY k, big LIMIT 150) s$q$),
 ('sort by bytea', $q$SELECT md5(string_agg(md5(b), ',' ORDER BY b, id)) FROM %I$q$),
 ('union', $q$SELECT count(*) FROM (SELECT big FROM %1$I UNION SELECT small FROM %1$I) u$q$);

-- in memory, with hashes and with sorts
SELECT q.name, s.tbl, s.same FROM queries q, pg_temp.same(q.q) s WHERE NOT s.same;
SET enable_hashagg = off;
SET enable_hashjoin = off;
SELECT q.name, s.tbl, s.same FROM queries q, pg_temp.same(q.q) s WHERE NOT s.same;
RESET enable_hashagg;
RESET enable_hashjoin;
SET enable_sort = off;
SET enable_mergejoin = off;
SELECT q.name, s.tbl, s.same FROM queries q, pg_temp.same(q.q) s WHERE NOT s.same;
RESET enable_sort;
RESET enable_mergejoin;
-- spilled to disk
SET work_mem = '64kB';
SELECT q.name, s.tbl, s.same FROM queries q, pg_temp.same(q.q) s WHERE NOT s.same;
SET enable_hashagg = off;
SET enable_hashjoin = off;
SELECT q.name, s.tbl, s.same FROM queries q, pg_temp.same(q.q) s WHERE NOT s.same;
RESET ALL;
-- every query ran over every table
SELECT count(*) AS comparisons FROM queries q, pg_temp.same(q.q) s;

DROP TABLE sh_heap, sh_zstd, sh_lz4, sh_pglz, sh_dict;
