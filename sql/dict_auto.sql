-- Automatic zstd dictionaries: set_column_codec(.., dictionary => 'auto'),
-- compressx.auto_dictionary_run() and the view compressx.auto_dictionaries.
-- The background worker is off in this session (TAP test 013 runs it);
-- every step here is the synchronous function the worker also calls.
SET compressx.auto_dictionary_worker = off;
SET compressx.auto_dictionary_min_values = 200;
SET compressx.auto_dictionary_size = 4096;
-- ratios and ids depend on the zstd library and on earlier tests: shown as N
CREATE FUNCTION ad_text(t text) RETURNS text LANGUAGE sql IMMUTABLE
    AS $$ SELECT regexp_replace(t, '[0-9]+(\.[0-9]+)?', 'N', 'g') $$;
CREATE FUNCTION ad_json(i integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT json_build_object('id', i, 'name', 'customer ' || i,
                             'city', (ARRAY['Paris', 'Lyon', 'Nantes', 'Lille'])[1 + i % 4],
                             'status', 'active',
                             'note', 'regular customer since ' || (2000 + i % 20))::text $$;
CREATE FUNCTION ad_log(i integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT format('2026-11-%sT12:%s:00Z ERROR [worker-%s] connection to 10.0.%s.%s:5432 reset by peer after %s ms; retrying (attempt %s of 5) in pool "%s"',
                  10 + i % 20, 10 + i % 50, i % 8, i % 256, (i * 7) % 256, i % 997, 1 + i % 5,
                  (ARRAY['orders', 'billing', 'search'])[1 + i % 3]) $$;
CREATE TABLE ad (id integer PRIMARY KEY, doc text, n integer) USING compressx;
CREATE TABLE ad_heap (id integer PRIMARY KEY, doc text, n integer);   -- its twin

-- bad input: each a clear error, before anything is changed
SELECT compressx.set_column_codec('ad', 'doc', 'zstd', dictionary => 'sometimes');
SELECT compressx.set_column_codec('ad', 'doc', 'lz4', dictionary => 'auto');
SELECT compressx.set_column_codec('ad', 'n', 'zstd', dictionary => 'auto');
SELECT compressx.set_column_codec('ad', 'nosuch', 'zstd', dictionary => 'auto');
CREATE TEMP TABLE ad_temp (doc text) USING compressx;
SELECT compressx.set_column_codec('ad_temp', 'doc', 'zstd', dictionary => 'auto');
CREATE ROLE ad_other;
GRANT SELECT, INSERT ON ad TO ad_other;
SET ROLE ad_other;
SELECT compressx.set_column_codec('ad', 'doc', 'zstd', dictionary => 'auto');
SELECT * FROM compressx.auto_dictionary_run('ad');
RESET ROLE;
SELECT count(*) AS settings FROM compressx.column_settings WHERE relid = 'ad'::regclass;
-- no automatic column: a notice, no rows
SELECT * FROM compressx.auto_dictionary_run('ad');

-- too few values: the first check runs at once and says why there is no
-- dictionary yet, rather than failing
INSERT INTO ad SELECT i, ad_json(i), i FROM generate_series(1, 37) i;
INSERT INTO ad_heap SELECT i, ad_json(i), i FROM generate_series(1, 37) i;
SELECT compressx.set_column_codec('ad', 'doc', 'zstd', dictionary => 'auto');
SELECT column_name, dictionary, state, values_seen, values_needed, last_action,
       last_message
FROM compressx.auto_dictionaries WHERE table_name = 'ad';
SELECT column_name, codec, dictionary FROM compressx.column_codec_settings('ad')
WHERE column_name = 'doc';

-- too uniform values: zstd alone does as well, so no dictionary
CREATE TABLE ad_uniform (id integer, doc text) USING compressx;
INSERT INTO ad_uniform SELECT i, repeat('a', 300) FROM generate_series(1, 500) i;
SET client_min_messages = warning;   -- the notice names ratios: shown below
SELECT compressx.set_column_codec('ad_uniform', 'doc', 'zstd', dictionary => 'auto');
RESET client_min_messages;
SELECT action, dictionary, ad_text(message) AS message
FROM compressx.auto_dictionary_run('ad_uniform');
-- values too short to train on: explained too
CREATE TABLE ad_short (id integer, doc text) USING compressx;
INSERT INTO ad_short SELECT i, 'x' || i % 10 FROM generate_series(1, 500) i;
SELECT compressx.set_column_codec('ad_short', 'doc', 'zstd', dictionary => 'auto');
SELECT table_name, state, dictionary, ad_text(last_message) AS message
FROM compressx.auto_dictionaries WHERE table_name IN ('ad_uniform', 'ad_short')
ORDER BY 1;
-- train: enough values that a dictionary helps
INSERT INTO ad SELECT i, ad_json(i), i FROM generate_series(38, 2000) i;
INSERT INTO ad_heap SELECT i, ad_json(i), i FROM generate_series(38, 2000) i;
SELECT action, column_name, ad_text(message) AS message FROM compressx.auto_dictionary_run('ad');
SELECT dictionary AS d1 FROM compressx.auto_dictionaries WHERE table_name = 'ad' \gset
SELECT state, values_seen, last_action, trained_at IS NOT NULL AS trained,
       ratio_at_training > 1.5 AS ratio_ok, ratio_now = ratio_at_training AS same
FROM compressx.auto_dictionaries WHERE table_name = 'ad';
SELECT auto, shared, trained_ratio > 1.5 AS ratio_ok FROM compressx.dictionaries WHERE dict_id = :d1;
-- new values use it; those written before keep their form until rewritten
INSERT INTO ad SELECT i, ad_json(i), i FROM generate_series(2001, 2100) i;
INSERT INTO ad_heap SELECT i, ad_json(i), i FROM generate_series(2001, 2100) i;
SELECT sum(v.stored_bytes) < 0.6 * sum(v.raw_bytes) AS new_values_smaller
FROM ad, compressx.value_storage('ad', ad.ctid, 'doc') v WHERE id > 2000;
SELECT sum(v.stored_bytes) > 0.9 * sum(v.raw_bytes) AS old_values_as_before
FROM ad, compressx.value_storage('ad', ad.ctid, 'doc') v WHERE id <= 2000;
-- checking again keeps it
SELECT action, dictionary = :d1 AS same, ad_text(message) AS message
FROM compressx.auto_dictionary_run('ad');
-- the five-argument form (dictionary NULL) keeps the policy and the dictionary
SELECT compressx.set_column_codec('ad', 'doc', 'zstd', 5);
SELECT compressx.set_column_codec('ad', 'doc', 'zstd', level => 5, min_size => 64);
SELECT column_name, dictionary = :d1 AS same, state FROM compressx.auto_dictionaries
WHERE table_name = 'ad';

-- retrain: the column's values change character (log lines); the
-- dictionary's ratio falls more than the margin and a new one does better
INSERT INTO ad SELECT i, ad_log(i), i FROM generate_series(10001, 16000) i;
INSERT INTO ad_heap SELECT i, ad_log(i), i FROM generate_series(10001, 16000) i;
SELECT action, dictionary > :d1 AS newer, ad_text(message) AS message
FROM compressx.auto_dictionary_run('ad');
SELECT dictionary AS d2 FROM compressx.auto_dictionaries WHERE table_name = 'ad' \gset
SELECT last_action, ratio_now = ratio_at_training AS same, dictionaries_pruned
FROM compressx.auto_dictionaries WHERE table_name = 'ad';
INSERT INTO ad SELECT i, ad_log(i), i FROM generate_series(16001, 16100) i;
INSERT INTO ad_heap SELECT i, ad_log(i), i FROM generate_series(16001, 16100) i;

-- prune: the old dictionary stays while any stored value names it ...
SELECT action, dictionary = :d1 AS old, ad_text(message) AS message
FROM compressx.auto_dictionary_run('ad') ORDER BY action DESC;
-- ... old row versions included: UPDATE rewrites the values it changes,
-- and the versions it replaced still name the old dictionary
UPDATE ad SET doc = doc || ' ' WHERE id > 2000;
UPDATE ad_heap SET doc = doc || ' ' WHERE id > 2000;
SELECT action, ad_text(message) AS message
FROM compressx.auto_dictionary_run('ad') WHERE dictionary = :d1;
-- VACUUM removes those versions; no value names the old dictionary now
VACUUM ad;
SELECT action, dictionary = :d1 AS old, ad_text(message) AS message
FROM compressx.auto_dictionary_run('ad') ORDER BY action DESC;
SELECT count(*) AS old_dictionary_rows FROM compressx.dictionaries WHERE dict_id = :d1;
SELECT dictionary = :d2 AS current, dictionaries_pruned FROM compressx.auto_dictionaries
WHERE table_name = 'ad';
-- a rewrite re-encodes everything with the current dictionary
VACUUM FULL ad;
SELECT sum(v.stored_bytes) < 0.6 * sum(v.raw_bytes) AS all_values_smaller
FROM ad, compressx.value_storage('ad', ad.ctid, 'doc') v;
-- every value still reads back as written
SELECT count(*) AS differing
FROM ad FULL JOIN ad_heap h USING (id) WHERE ad.doc IS DISTINCT FROM h.doc;
SELECT count(*) AS damaged FROM compressx.verify('ad');

-- dictionaries of train_dictionary() are never pruned
CREATE TABLE ad_manual (id integer, doc text) USING compressx;
INSERT INTO ad_manual SELECT i, ad_json(i) FROM generate_series(1, 1000) i;
SELECT compressx.set_column_codec('ad_manual', 'doc', 'zstd');
SELECT compressx.train_dictionary('ad_manual', 'doc', 4096) AS m1 \gset
SET client_min_messages = warning;
SELECT compressx.set_column_codec('ad_manual', 'doc', 'zstd', dictionary => 'auto');
RESET client_min_messages;
SELECT compressx.train_dictionary('ad_manual', 'doc', 4096) AS m2 \gset
VACUUM FULL ad_manual;
SELECT action, dictionary = :m2 AS current FROM compressx.auto_dictionary_run('ad_manual');
SELECT count(*) AS manual_dictionaries FROM compressx.dictionaries
WHERE dict_id IN (:m1, :m2) AND NOT auto;

-- partitions: each has a dictionary of its own, a partition attached later
-- follows its parent's policy
CREATE TABLE ad_parts (id integer, doc text) PARTITION BY RANGE (id);
CREATE TABLE ad_p1 PARTITION OF ad_parts FOR VALUES FROM (0) TO (10000) USING compressx;
CREATE TABLE ad_p2 PARTITION OF ad_parts FOR VALUES FROM (10000) TO (20000) USING compressx;
INSERT INTO ad_parts SELECT i, ad_json(i) FROM generate_series(1, 500) i;
INSERT INTO ad_parts SELECT i, ad_log(i) FROM generate_series(10001, 10500) i;
SET client_min_messages = warning;
SELECT compressx.set_column_codec('ad_parts', 'doc', 'zstd', dictionary => 'auto');
RESET client_min_messages;
SELECT table_name, last_action FROM compressx.auto_dictionaries
WHERE table_name LIKE 'ad_p_' ORDER BY 1;
CREATE TABLE ad_p3 PARTITION OF ad_parts FOR VALUES FROM (20000) TO (30000) USING compressx;
INSERT INTO ad_parts SELECT i, ad_json(i) FROM generate_series(20001, 20500) i;
SELECT relation, action FROM compressx.auto_dictionary_run('ad_parts') ORDER BY 1;
SELECT table_name, state, dictionary IS NOT NULL AS has_dictionary
FROM compressx.auto_dictionaries WHERE table_name LIKE 'ad_p_' ORDER BY 1;
SELECT count(DISTINCT d.dict_id) AS dictionaries, count(DISTINCT d.relid) AS tables
FROM compressx.dictionaries d WHERE d.relid::text LIKE 'ad_p_';

-- 'none' stops using a dictionary; another codec leaves the policy
SELECT compressx.set_column_codec('ad_p1', 'doc', 'zstd', dictionary => 'none');
SELECT compressx.set_column_codec('ad_p2', 'doc', 'lz4');
SELECT compressx.set_column_codec('ad_p2', 'doc', 'zstd');
SELECT relid, codec, dict_id IS NOT NULL AS has_dictionary, auto_dictionary
FROM compressx.column_settings WHERE relid::text LIKE 'ad_p_' ORDER BY 1;
SELECT relation, action FROM compressx.auto_dictionary_run('ad_parts') ORDER BY 1;
SELECT table_name FROM compressx.auto_dictionaries WHERE table_name LIKE 'ad_p_' ORDER BY 1;

-- recompress_online_cleanup() restores the policy and the inline limit with the
-- other settings
-- a run changed (here: the row a run records, and the setting it makes)
CREATE TABLE ad_online (id integer, doc text) USING compressx;
SELECT compressx.set_column_codec('ad_online', 'doc', 'zstd', dictionary => 'auto');
SELECT compressx.set_column_inline('ad_online', 'doc', 300);
INSERT INTO compressx.online_runs (relid, started_at, codec, settings_before)
SELECT 'ad_online', now(), 'lz4', jsonb_agg(to_jsonb(s) - 'relid')
FROM compressx.column_settings s WHERE s.relid = 'ad_online'::regclass;
SELECT compressx.set_column_codec('ad_online', 'doc', 'lz4');
SELECT compressx.set_column_inline('ad_online', 'doc', NULL);
SELECT codec, auto_dictionary, inline_max FROM compressx.column_settings WHERE relid = 'ad_online'::regclass;
SELECT compressx.recompress_online_cleanup('ad_online');
SELECT codec, auto_dictionary, inline_max FROM compressx.column_settings WHERE relid = 'ad_online'::regclass;

-- the view shows only tables the caller may read
SET ROLE ad_other;
SELECT table_name FROM compressx.auto_dictionaries ORDER BY 1;
RESET ROLE;
-- dropping a table drops its state with its settings and dictionaries
SELECT count(*) > 0 AS state_rows FROM compressx.auto_dictionary_state
WHERE relid = 'ad'::regclass;
DROP TABLE ad;
SELECT count(*) AS ran FROM compressx.auto_dictionary_run('ad_uniform');
SELECT count(*) AS state_rows FROM compressx.auto_dictionary_state s
WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = s.relid);

DROP TABLE ad_heap, ad_uniform, ad_short, ad_manual, ad_parts, ad_online;
DROP FUNCTION ad_text(text), ad_json(integer), ad_log(integer);
DROP ROLE ad_other;
