# The background worker of automatic dictionaries (dictionary => 'auto')
# really runs: writes to a table start it, it trains the column's first
# dictionary as the table's owner (a role that cannot log in), new values
# use it, a change of the values' character makes it train a new one, and
# once VACUUM FULL rewrote the old values it prunes the old dictionary.
# Tables whose owner may not read all rows get no dictionary.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('autodict');
$node->init;
# %b: the backend type, a background worker's bgw_type
$node->append_conf('postgresql.conf', qq{
log_line_prefix = '%m [%p] %b: '
compressx.auto_dictionary_naptime = 1
compressx.auto_dictionary_min_values = 200
compressx.auto_dictionary_size = 4096
});
$node->start;
cx_install_helpers($node);

my $json = q{json_build_object('id', i, 'name', 'customer ' || i,
                                'city', (ARRAY['Paris', 'Lyon', 'Nantes', 'Lille'])[1 + i % 4],
                                'status', 'active', 'note', 'regular customer since ' || (2000 + i % 20))::text};
my $log = q{format('2026-11-%sT12:%s:00Z ERROR [worker-%s] connection to 10.0.%s.%s:5432 reset by peer after %s ms',
                   10 + i % 20, 10 + i % 50, i % 8, i % 256, (i * 7) % 256, i % 997)};

$node->safe_psql('postgres', q{
    CREATE ROLE alice NOLOGIN;
    GRANT CREATE ON SCHEMA public TO alice;
    SET ROLE alice;
    CREATE TABLE t_auto (id integer PRIMARY KEY, doc text) USING compressx;
    CREATE TABLE t_noread (id integer PRIMARY KEY, doc text) USING compressx;
    CREATE TABLE t_rls (id integer PRIMARY KEY, doc text) USING compressx;
    -- the owner gave up reading one table, and row-level security
    -- applies to it on another
    REVOKE SELECT ON t_noread FROM alice;
    ALTER TABLE t_rls ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
    CREATE POLICY mine ON t_rls USING (id % 2 = 0);
    SET client_min_messages = error;
    SELECT compressx.set_column_codec(t, 'doc', 'zstd', dictionary => 'auto')
    FROM unnest('{t_auto,t_noread,t_rls}'::regclass[]) t;
    RESET ROLE;
    CREATE TABLE t_plain (id integer PRIMARY KEY, doc text) USING compressx;
    SELECT compressx.set_column_codec('t_plain', 'doc', 'zstd');
    CREATE TABLE t_heap (id integer PRIMARY KEY, doc text);
});
is($node->safe_psql('postgres',
		"SELECT string_agg(table_name || '=' || state, ',' ORDER BY table_name) FROM compressx.auto_dictionaries"),
	't_auto=waiting,t_noread=skipped,t_rls=skipped', 'no dictionary before the table has values');

# writes start the worker when they commit
my $t0 = $node->safe_psql('postgres', 'SELECT now()');
foreach my $t ('t_auto', 't_noread', 't_rls', 't_heap')
{
	$node->safe_psql('postgres', "INSERT INTO $t SELECT i, $json FROM generate_series(1, 1500) i");
}
ok($node->poll_query_until('postgres',
		"SELECT dictionary IS NOT NULL FROM compressx.auto_dictionaries WHERE table_name = 't_auto'"),
	'the worker trained a dictionary');
my ($d1, $action) = split /\|/, $node->safe_psql('postgres',
	"SELECT dictionary, last_action FROM compressx.auto_dictionaries WHERE table_name = 't_auto'");
is($action, 'trained', 'its last action: trained');
ok($node->log_contains(qr/\] compressx auto dictionary: LOG:  compressx automatic dictionaries: trained column "doc" of table "t_auto" as role "alice"/),
	'the background worker trained it as the table\'s owner');
is($node->safe_psql('postgres', "SELECT auto AND NOT shared FROM compressx.dictionaries WHERE dict_id = $d1"),
	't', 'an automatic dictionary');

# new values use it: stored much smaller than zstd alone stores them
$node->safe_psql('postgres', qq{
    INSERT INTO t_auto SELECT i, $json FROM generate_series(1501, 1600) i;
    INSERT INTO t_plain SELECT i, $json FROM generate_series(1501, 1600) i;
    INSERT INTO t_heap SELECT i, $json FROM generate_series(1501, 1600) i;
});
is($node->safe_psql('postgres', q{
    SELECT (SELECT sum(v.stored_bytes) FROM t_auto, compressx.value_storage('t_auto', t_auto.ctid, 'doc') v
            WHERE id > 1500)
           < 0.7 * (SELECT sum(v.stored_bytes) FROM t_plain, compressx.value_storage('t_plain', t_plain.ctid, 'doc') v)}),
	't', 'new values are compressed with the dictionary');

# tables the owner may not read in full get none, and the view says why
ok($node->poll_query_until('postgres', qq{
    SELECT count(*) = 2 FROM compressx.auto_dictionaries
    WHERE table_name IN ('t_noread', 't_rls') AND last_check > '$t0' AND state = 'skipped'
      AND dictionary IS NULL}),
	'the worker looked at the tables its owner may not read');
like($node->safe_psql('postgres',
		"SELECT last_message FROM compressx.auto_dictionaries WHERE table_name = 't_noread'"),
	qr/Role "alice" may not read table "t_noread" \(no SELECT privilege\)/, 'no SELECT privilege: no dictionary');
like($node->safe_psql('postgres',
		"SELECT last_message FROM compressx.auto_dictionaries WHERE table_name = 't_rls'"),
	qr/Row-level security applies to role "alice" on table "t_rls"/, 'row-level security: no dictionary');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM compressx.dictionaries WHERE relid IN ('t_noread'::regclass, 't_rls'::regclass)"),
	'0', 'no dictionary for them');

# the values change character: the worker trains a new dictionary
foreach my $t ('t_auto', 't_heap')
{
	$node->safe_psql('postgres', "INSERT INTO $t SELECT i, $log FROM generate_series(10001, 16000) i");
}
ok($node->poll_query_until('postgres',
		"SELECT dictionary > $d1 FROM compressx.auto_dictionaries WHERE table_name = 't_auto'"),
	'the worker trained a new dictionary');
is($node->safe_psql('postgres', "SELECT last_action FROM compressx.auto_dictionaries WHERE table_name = 't_auto'"),
	'retrained', 'its last action: retrained');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.dictionaries WHERE dict_id = $d1"),
	'1', 'the old dictionary stays while values name it');

# VACUUM FULL re-encodes every value with the new dictionary; the worker
# it starts prunes the old one
$node->safe_psql('postgres', 'VACUUM FULL t_auto');
ok($node->poll_query_until('postgres',
		"SELECT dictionaries_pruned = 1 FROM compressx.auto_dictionaries WHERE table_name = 't_auto'"),
	'the worker pruned the old dictionary');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.dictionaries WHERE dict_id = $d1"),
	'0', 'the old dictionary is gone');
ok($node->log_contains(qr/\] compressx auto dictionary: LOG:  compressx automatic dictionaries: pruned column "doc" of table "t_auto" as role "alice"/),
	'pruned as the table\'s owner');

is($node->safe_psql('postgres', q{
    SELECT count(*) FROM t_auto a FULL JOIN t_heap h USING (id) WHERE a.doc IS DISTINCT FROM h.doc}),
	'0', 'every value reads back as written');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.verify('t_auto')"), '0', 'verify finds nothing');

# pg_dump keeps the policy (a column of compressx.column_settings) and the
# dictionaries; the restored database's state starts afresh
my $tmp = PostgreSQL::Test::Utils::tempdir;
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/dump", '-d', $node->connstr('postgres') ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
{
	# as pg_restore names itself when PGAPPNAME is not set (the test modules
	# set it).  The worker no longer looks for restores (any role can name
	# its session pg_restore): it may train a dictionary for t_noread or
	# t_rls once their rows are in, before the restore's last pass revokes
	# and enables row-level security; that pass's REVOKE and ALTER TABLE
	# start the worker, whose check withdraws and prunes it.
	delete local $ENV{PGAPPNAME};
	$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), "$tmp/dump" ], 'pg_restore');
}
# the end state: no column of a table its owner may not read in full names
# a dictionary, and no dictionary of such a table is left
ok($node->poll_query_until('restored', q{
    SELECT count(*) = 0 FROM compressx.dictionaries
    WHERE relid IN ('t_noread'::regclass, 't_rls'::regclass)}),
	'no dictionary for the tables their owner may not read in full, once the restore ended');
is($node->safe_psql('restored', q{
    SELECT string_agg(s.relid::text || '=' || s.auto_dictionary || '/' || (d.dict_id IS NOT NULL) || '/' || coalesce(d.auto::text, '-'),
                      ',' ORDER BY s.relid::text)
    FROM compressx.column_settings s LEFT JOIN compressx.dictionaries d ON d.dict_id = s.dict_id}),
	't_auto=true/true/true,t_noread=true/false/-,t_plain=false/false/-,t_rls=true/false/-',
	'the restored database has the policies and the dictionary');
is($node->safe_psql('restored', q{
    SELECT count(*) FROM t_auto a JOIN t_heap h USING (id) WHERE a.doc IS DISTINCT FROM h.doc}),
	'0', 'the restored rows read back');

# the restored database's worker, whose state starts empty, takes every
# column as due at once (an unchecked column's '-infinity' failed the
# worker on 15 with "cannot subtract infinite timestamps")
ok($node->poll_query_until('restored',
		"SELECT count(*) > 0 FROM compressx.auto_dictionary_state WHERE last_check IS NOT NULL"),
	'the restored database\'s worker checked its tables');
ok(!$node->log_contains(qr/cannot subtract infinite timestamps/),
	'no worker failed on a column never checked');

# at most one worker per database at a time (the restore started one in
# its database)
my $workers = $node->safe_psql('postgres', q{
    SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM pg_stat_activity
                                     WHERE application_name = 'compressx auto dictionary'
                                     GROUP BY datid) w});
ok($workers <= 1, "at most one worker runs per database ($workers)");

# Large values (issue 34, item 3): 150 HTML-like documents of 5-15 kB
# sharing their boilerplate are fewer than compressx.auto_dictionary_min_values
# (200 here), yet hold 1.5 MB: the worker tries a dictionary and keeps it
# for its measured gain.
$node->safe_psql('postgres', q{
    CREATE FUNCTION big_doc(i integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT '<!DOCTYPE html><html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />'
            || '<title>Chapter ' || i || '</title><link rel="stylesheet" type="text/css" href="stylesheet.css" /></head>'
            || '<body id="docContent" class="container-fluid col-10"><div class="navheader">'
            || '<table width="100%" summary="Navigation header"><tr><th colspan="5" align="center">Appendix F. Additional Supplied Modules and Extensions</th></tr>'
            || '<tr><td width="10%" align="left"><a accesskey="p" href="prev.html">Prev</a></td><td width="10%" align="left"><a accesskey="u" href="contrib.html">Up</a></td></tr></table><hr /></div>'
            || (SELECT string_agg('<p>' || (SELECT string_agg(
                   (ARRAY['the','table','column','value','index','query','function','returns','row','server',
                          'option','parameter','setting','default','type','access','method','transaction','lock',
                          'page','tuple','vacuum','statistics','planner','is','are','of','to','in','for','with','when'])
                   [1 + get_byte(decode(md5(i || ':' || p || ':' || w), 'hex'), 0) % 32], ' ')
                   FROM generate_series(1, 40) w) || '.</p>', E'\n')
                FROM generate_series(1, 17 + (i * 7919) % 33) p)
            || '<div class="navfooter"><hr /><table width="100%" summary="Navigation footer"><tr><td width="40%" align="left"><a accesskey="p" href="prev.html">Prev</a></td>'
            || '<td width="20%" align="center"><a accesskey="h" href="index.html">Home</a></td></tr></table></div></body></html>' $$;
    CREATE TABLE t_docs (id integer PRIMARY KEY, body text) USING compressx;
    SET client_min_messages = error;
    SELECT compressx.set_column_codec('t_docs', 'body', 'zstd', dictionary => 'auto');
});
$node->safe_psql('postgres', 'INSERT INTO t_docs SELECT i, big_doc(i) FROM generate_series(1, 150) i');
is($node->safe_psql('postgres', q{
    SELECT min(length(body)) >= 5000 AND max(length(body)) <= 15500 AND sum(length(body)) > 1100000 FROM t_docs}),
   't', '150 documents of 5-15 kB, more than 1 MB');
# a worker already running sees a table's writes through the statistics
# counters, which can reach it late: write again (without adding values)
# until it has checked
my $trained = 0;
for (my $i = 151; $i < 211 && !$trained; $i++)
{
	for (my $w = 0; $w < 4 && !$trained; $w++)
	{
		$trained = $node->safe_psql('postgres',
			"SELECT dictionary IS NOT NULL AND last_action = 'trained' FROM compressx.auto_dictionaries WHERE table_name = 't_docs'") eq 't';
		usleep(500_000) unless $trained;
	}
	# a write that adds no value: the sample stays at 150
	$node->safe_psql('postgres', "UPDATE t_docs SET id = id WHERE id = 1") unless $trained;
}
ok($trained, 'the worker trained a dictionary for 150 large documents');
like($node->safe_psql('postgres', "SELECT last_message FROM compressx.auto_dictionaries WHERE table_name = 't_docs'"),
	qr/^Trained dictionary \d+ on \d+ values: [0-9.]+x with it, [0-9.]+x without\.$/,
	'its gain was measured');

# A worker stays a naptime after the writes that started it, but leaves as
# soon as its database is dropped (DROP DATABASE waits only 5 s for other
# sessions).
$node->safe_psql('postgres', 'ALTER SYSTEM SET compressx.auto_dictionary_naptime = 300');
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
$node->safe_psql('postgres', 'CREATE DATABASE dropme');
$node->safe_psql('dropme', q{
    CREATE EXTENSION compressx;
    CREATE TABLE d (id integer, doc text) USING compressx;
    SET client_min_messages = warning;
    SELECT compressx.set_column_codec('d', 'doc', 'zstd', dictionary => 'auto');
});
$node->safe_psql('dropme', "INSERT INTO d SELECT i, 'row ' || i FROM generate_series(1, 10) i");
ok($node->poll_query_until('postgres', q{
    SELECT count(*) = 1 FROM pg_stat_activity
    WHERE datname = 'dropme' AND application_name = 'compressx auto dictionary'}),
	'a worker stays in the database');
my ($drop_rc, $drop_out, $drop_err) = $node->psql('postgres', 'DROP DATABASE dropme');
is($drop_rc, 0, 'DROP DATABASE works: the worker leaves') or diag $drop_err;

$node->stop;
my $log_text = slurp_file($node->logfile);
unlike($log_text, qr/TRAP:|terminated by signal/, 'no assertion failure or crash');
done_testing();
