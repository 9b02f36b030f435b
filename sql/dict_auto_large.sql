-- Automatic dictionaries for large values (issue 34, item 3): documents of
-- 5-15 kB sharing their boilerplate, as PostgreSQL's HTML documentation
-- does, never reach compressx.auto_dictionary_min_values in a sample of
-- 8 MB; the first dictionary is decided by its measured gain on values
-- held out of training once the sample holds
-- compressx.auto_dictionary_min_bytes in enough values.  A small table
-- still trains nothing.  And compressx.auto_dictionaries shows no refusal
-- once the column has a dictionary.
SET compressx.auto_dictionary_worker = off;
-- deterministic HTML-like documents: shared head, navigation and footer,
-- a body of 5-15 kB drawn from a vocabulary by md5
CREATE FUNCTION adl_doc(i integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT '<!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><head>'
        || '<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />'
        || '<title>F.' || i || '. module ' || i || '</title>'
        || '<link rel="stylesheet" type="text/css" href="stylesheet.css" />'
        || '<meta name="generator" content="DocBook XSL Stylesheets Vsnapshot" />'
        || '<link rel="prev" href="page-' || (i - 1) || '.html" title="previous" />'
        || '<link rel="next" href="page-' || (i + 1) || '.html" title="next" /></head>'
        || '<body id="docContent" class="container-fluid col-10"><div class="navheader">'
        || '<table width="100%" summary="Navigation header"><tr><th colspan="5" align="center">'
        || 'Appendix F. Additional Supplied Modules and Extensions</th></tr><tr>'
        || '<td width="10%" align="left"><a accesskey="p" href="page-' || (i - 1) || '.html">Prev</a></td>'
        || '<td width="10%" align="left"><a accesskey="u" href="contrib.html">Up</a></td>'
        || '<th width="60%" align="center">Appendix F. Additional Supplied Modules and Extensions</th>'
        || '<td width="20%" align="right"><div class="actions"><a class="issue" title="Report an issue with this page" href="https://www.postgresql.org/docs/current/page.html">Report an issue</a></div></td>'
        || '<td width="10%" align="right"><a accesskey="n" href="page-' || (i + 1) || '.html">Next</a></td>'
        || '</tr></table><hr /></div><div class="sect1" id="F' || i || '"><div class="titlepage"><div><div>'
        || '<h2 class="title" style="clear: both">F.' || i || '. module ' || i || '</h2></div></div></div>'
        || (SELECT string_agg('<p>' || (SELECT string_agg(
                (ARRAY['the','table','column','value','index','query','function','returns','row',
                       'server','option','parameter','setting','default','type','access','method',
                       'transaction','lock','page','tuple','vacuum','statistics','planner','<code class="literal">NULL</code>',
                       '<code class="function">pg_stat_activity</code>','<a class="xref" href="sql-createtable.html">CREATE TABLE</a>',
                       'is','are','a','an','of','to','in','for','with','when','which','this','that','can','be',
                       'not','each','all','its','by','on','as','if','or','and','from','only','one','new','old',
                       'must','may','will'])[1 + get_byte(decode(md5(i || ':' || p || ':' || w), 'hex'), 0) % 64],
                ' ') FROM generate_series(1, 40) w) || '.</p>', E'\n')
            FROM generate_series(1, 12 + (i * 7919) % 33) p)
        || '</div><div class="navfooter"><hr /><table width="100%" summary="Navigation footer"><tr>'
        || '<td width="40%" align="left"><a accesskey="p" href="page-' || (i - 1) || '.html">Prev</a> </td>'
        || '<td width="20%" align="center"><a accesskey="u" href="contrib.html">Up</a></td>'
        || '<td width="40%" align="right"> <a accesskey="n" href="page-' || (i + 1) || '.html">Next</a></td>'
        || '</tr><tr><td width="40%" align="left" valign="top">F.' || (i - 1) || '. previous module </td>'
        || '<td width="20%" align="center"><a accesskey="h" href="index.html">Home</a></td>'
        || '<td width="40%" align="right" valign="top"> F.' || (i + 1) || '. next module</td></tr></table></div></body></html>' $$;

-- a small table of such documents: too little to train on
CREATE TABLE adl_small (id integer PRIMARY KEY, body text) USING compressx;
INSERT INTO adl_small SELECT i, adl_doc(i) FROM generate_series(1, 40) i;
SELECT min(length(body)) >= 5000 AS at_least_5kb, max(length(body)) <= 15500 AS at_most_15kb
FROM adl_small;
SET client_min_messages = warning;
SELECT compressx.set_column_codec('adl_small', 'body', 'zstd', dictionary => 'auto');
RESET client_min_messages;
SELECT dictionary, state, values_seen, last_action, last_message LIKE 'Not enough values%' AS refusal
FROM compressx.auto_dictionaries WHERE table_name = 'adl_small';

-- 400 documents (about 4 MB): fewer values than
-- compressx.auto_dictionary_min_values (1000), yet a dictionary pays
CREATE TABLE adl (id integer PRIMARY KEY, body text) USING compressx;
INSERT INTO adl SELECT i, adl_doc(i) FROM generate_series(1, 400) i;
SELECT count(*) < current_setting('compressx.auto_dictionary_min_values')::int AS fewer_than_min_values
FROM adl;
SET client_min_messages = warning;   -- the notice names ratios: checked below
SELECT compressx.set_column_codec('adl', 'body', 'zstd', dictionary => 'auto');
RESET client_min_messages;
SELECT dictionary IS NOT NULL AS has_dictionary, state, last_action,
       ratio_at_training > 1.0 AS ratio_known
FROM compressx.auto_dictionaries WHERE table_name = 'adl';
-- trained because it measured better by the margin on held-out values
SELECT m[1]::numeric > m[2]::numeric * (1 + current_setting('compressx.auto_dictionary_margin')::numeric / 100)
       AS gain_passes_margin
FROM compressx.auto_dictionaries,
     regexp_match(last_message, '([0-9.]+)x with it, ([0-9.]+)x without') m
WHERE table_name = 'adl';
-- and new values are stored with it
INSERT INTO adl SELECT i, adl_doc(i) FROM generate_series(401, 440) i;
SELECT sum(v.raw_bytes) FILTER (WHERE id > 400)::float8 / sum(v.stored_bytes) FILTER (WHERE id > 400)
       > 1.1 * sum(v.raw_bytes) FILTER (WHERE id <= 400)::float8 / sum(v.stored_bytes) FILTER (WHERE id <= 400)
       AS new_values_smaller
FROM adl, compressx.value_storage('adl', adl.ctid, 'body') v;

-- the small table's column gets a dictionary by hand: its row stops
-- showing the old refusal
SELECT compressx.train_dictionary('adl_small', 'body', 4096, 1000) > 0 AS trained;
SELECT dictionary IS NOT NULL AS has_dictionary, state, last_action,
       last_message LIKE 'Not enough values%' AS refusal
FROM compressx.auto_dictionaries WHERE table_name = 'adl_small';

DROP TABLE adl, adl_small;
DROP FUNCTION adl_doc(integer);
