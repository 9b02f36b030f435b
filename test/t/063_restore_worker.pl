# Issue 33 A1: after a restore, the automatic-dictionary worker re-encodes
# the values loaded before their dictionary arrived (src/dictionaries/
# restored.c).  Who can make it wait: a role holding a row of the restored
# table keeps it waiting one naptime at most, then it gives the column up
# (logged) and goes on; once the row is free, recompress_online finishes
# the job.  The values stay readable all along.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('restore_worker');
$node->init;
$node->append_conf('postgresql.conf', "compressx.auto_dictionary_naptime = 2");
$node->start;
my $tmp = PostgreSQL::Test::Utils::tempdir;

# eve's table, in a schema whose rows a serial restore loads before
# compressx's data (the dictionaries)
$node->safe_psql('postgres', q{
    CREATE ROLE eve LOGIN;
    CREATE EXTENSION compressx;
    CREATE SCHEMA app AUTHORIZATION eve;
    SET ROLE eve;
    CREATE TABLE app.t (id integer PRIMARY KEY, doc text) USING compressx;
    SELECT compressx.set_column_codec('app.t', 'doc', 'zstd', 3);
    INSERT INTO app.t SELECT i, json_build_object('id', i, 'kind', 'kind ' || i % 7,
                                                  'note', 'a restored row ' || i)::text
    FROM generate_series(1, 3000) i;
    SELECT compressx.train_dictionary('app.t', 'doc', 4096);
    VACUUM FULL app.t;
});
my $methods_sql = q{SELECT methods FROM compressx.column_stats('app.t')};
my $src_methods = $node->safe_psql('postgres', $methods_sql);
like($src_methods, qr/"zstd": 2001/, 'source: values stored with the dictionary');
my $data_sql = cx_state_sql('app.t');
my $src_data = $node->safe_psql('postgres', $data_sql);
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/dump", '-d', $node->connstr('postgres') ], 'pg_dump');

# restored with no worker (its writes start none), so that eve can take a
# row before the worker comes
$node->safe_psql('postgres', 'CREATE DATABASE r');
{
	local $ENV{PGOPTIONS} = '-c compressx.auto_dictionary_worker=off';
	$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('r'), "$tmp/dump" ], 'pg_restore');
}
is($node->safe_psql('r', q{SELECT count(*) FROM compressx.column_settings
                          WHERE restored_at IS NOT NULL AND dict_id IS NOT NULL}),
	'1', 'the dictionary arrived after the rows: values to re-encode');
isnt($node->safe_psql('r', $methods_sql), $src_methods, 'the rows loaded first are stored without it');
is($node->safe_psql('r', $data_sql), $src_data, 'data as in the source meanwhile');

# eve holds a row; a write starts the worker
my $eve = $node->background_psql('r', on_error_stop => 0);
$eve->query_safe('SET ROLE eve');
$eve->query_safe('BEGIN');
# a row whose value the worker must rewrite
$eve->query_safe('SELECT id FROM app.t WHERE id = 3000 FOR UPDATE');
my $log_offset = -s $node->logfile;
$node->safe_psql('r', q{INSERT INTO app.t VALUES (3001, '{"id": 3001}')});
my $t0 = time();
my $left = '1';
while (time() - $t0 < 60)
{
	$left = $node->safe_psql('r', 'SELECT count(*) FROM compressx.column_settings WHERE restored_at IS NOT NULL');
	last if $left eq '0';
	select(undef, undef, undef, 0.2);
}
my $waited = time() - $t0;
is($left, '0', "the worker gave the column up after ${waited} s while eve held a row");
ok($waited < 30, 'within a few naptimes, not as long as eve holds the row');
like(slurp_file($node->logfile, $log_offset), qr/gave up waiting for other sessions/,
	'the log says why');
is($node->safe_psql('r', "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'compressx auto dictionary'
                           AND state = 'active' AND query LIKE 'CALL%'"),
	'0', 'the worker is not waiting on eve');
$eve->query_safe('COMMIT');
$eve->quit;

# the user finishes the job; the dictionary the label named is the column's
$node->safe_psql('r', q{CALL compressx.recompress_online('app.t', columns => '{doc}')});
my $want = $src_methods;
$want =~ s/"none": 999/"none": 1000/;
is($node->safe_psql('r', $methods_sql), $want, 'recompress_online applies the restored dictionary');
is($node->safe_psql('r', q{SELECT md5(d.dict) FROM compressx.column_settings s JOIN compressx.dictionaries d USING (dict_id)}),
	$node->safe_psql('postgres', q{SELECT md5(d.dict) FROM compressx.column_settings s JOIN compressx.dictionaries d USING (dict_id)}),
	'the source\'s dictionary');

$node->stop;
done_testing();
