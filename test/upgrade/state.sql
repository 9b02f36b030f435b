-- What must be identical before and after pg_upgrade: run by
-- test/upgrade_check.sh on the old cluster before and on the new one after;
-- the outputs are compared line by line.
\set ON_ERROR_STOP on
\pset format unaligned
\pset tuples_only on
SELECT 'extension compressx ' || extversion FROM pg_extension WHERE extname = 'compressx';
SELECT 'database settings ' || array_to_string(s.setconfig, ',')
FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
WHERE d.datname = current_database() AND s.setrole = 0;
SELECT 'table ' || c.relname || ' ' || a.amname || ' attributes=' || c.relnatts
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam
WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.relname;
-- every row, through a sort over the decoded values
SELECT pg_catalog.format('SELECT %L || '' rows='' || count(*) || '' md5='' || '
                         'coalesce(md5(string_agg(md5(t::text), '','' ORDER BY t::text)), ''-'') FROM %s t',
                         c.relname, c.oid::regclass)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname \gexec
-- how values are stored (files are copied, not re-encoded), and verify
SELECT pg_catalog.format('SELECT %L || '' '' || column_name || '' values='' || "values" || '
                         ''' stored='' || stored_bytes || '' external='' || external_values || '' '' || methods '
                         'FROM compressx.column_stats(%L) ORDER BY column_name', c.relname, c.oid::regclass)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.relname \gexec
SELECT pg_catalog.format('SELECT %L || '' verify problems='' || count(*) FROM compressx.verify(%L)',
                         c.relname, c.oid::regclass)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.relname \gexec
-- settings and dictionaries
-- (the columns of 0.1.0: 0.4.0 adds auto_dictionary, shown below)
SELECT 'setting ' || relid::text || ' ' || pg_catalog.format('(%s,%s,%s,%s,%s,%s,%s)',
       s.relid, s.attname, s.attnum, s.codec, s.level, s.min_size, s.dict_id)
FROM compressx.column_settings s ORDER BY 1;
SELECT 'codec ' || table_name || '.' || column_name || ' ' || c::text
FROM compressx.column_codecs c ORDER BY table_name, column_name;
SELECT 'dictionary ' || dict_id || ' ' || relid::text || '.' || attname || ' ' || md5(dict) || ' ' || sample_values
FROM compressx.dictionaries ORDER BY dict_id;
-- the columns' security labels (0.5.0: the settings as dumps carry them)
SELECT 'label ' || l.objoid::regclass::text || '.' || a.attname || ' ' ||
       regexp_replace(l.label, 'dict=[A-Za-z0-9+/=]+$', 'dict=') || ' ' || md5(l.label)
FROM pg_seclabel l JOIN pg_attribute a ON a.attrelid = l.objoid AND a.attnum = l.objsubid
WHERE l.provider = 'compressx' ORDER BY 1;
-- automatic dictionaries (0.4.0)
SELECT pg_catalog.to_regclass('compressx.auto_dictionaries') IS NOT NULL AS has_auto \gset
\if :has_auto
SELECT 'auto dictionary ' || table_name || '.' || column_name || ' ' || dictionary || ' '
       || state || ' ' || last_action || ' ' || values_seen || ' ' || ratio_at_training
FROM compressx.auto_dictionaries ORDER BY table_name, column_name;
\endif
-- an index scan over the expression index
SELECT pg_catalog.to_regclass('public.mixed') IS NOT NULL AS has_mixed \gset
\if :has_mixed
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT 'index scan ' || count(*) FROM public.mixed WHERE md5(z) = md5(repeat('zstd row 77 ', 20));
SELECT 'index scan out of line ' || count(*) FROM public.mixed
WHERE md5(z) = (SELECT md5(string_agg(md5((1517 * 1000 + k)::text) || ' is part ' || k || ' of a large value; ', ''))
                FROM generate_series(1, 300) k);
\endif
