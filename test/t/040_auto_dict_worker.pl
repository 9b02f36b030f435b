# The background worker of automatic dictionaries against other sessions
# (issue 27, items 3 and 12):
#  1. its one-per-database lock is a tag no SQL function can make: a
#     session holding pg_advisory_lock(1129857348, 0), the key the lock
#     had, no longer keeps the database's worker away;
#  2. while it waits for a table's writers before pruning, it leaves as
#     soon as DROP DATABASE wants its database (DROP DATABASE waits only
#     5 s for the other sessions), and the drop succeeds once the client
#     sessions are gone.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('autodictworker');
$node->init;
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
my $worker = q{application_name = 'compressx auto dictionary'};

# Write with $insert (each time from a new session, whose commit starts a
# worker unless one runs) until $cond holds, at most 60 times 0.5 s: a
# worker that saw no change for two passes (the statistics counters of a
# write can reach it late) leaves, and the next write starts another.
sub write_until
{
	my ($db, $insert, $cond) = @_;
	for (my $i = 0; $i < 60; $i++)
	{
		$node->safe_psql($db, $insert);
		usleep(500_000);
		return 1 if $node->safe_psql($db, $cond) eq 't';
	}
	return 0;
}

# ---------------------------------------------------------------------
# 1. an advisory lock on the old key does not keep the worker away
# ---------------------------------------------------------------------
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(1129857348, 0)');
$node->safe_psql('postgres', qq{
    CREATE TABLE t_auto (id integer, doc text) USING compressx;
    SET client_min_messages = warning;
    SELECT compressx.set_column_codec('t_auto', 'doc', 'zstd', dictionary => 'auto');
});
$node->safe_psql('postgres', "INSERT INTO t_auto SELECT i, $json FROM generate_series(1, 1500) i");
ok(write_until('postgres', "INSERT INTO t_auto SELECT i, $json FROM generate_series(100001, 100010) i",
		"SELECT dictionary IS NOT NULL FROM compressx.auto_dictionaries WHERE table_name = 't_auto'"),
	'the worker trains while a session holds pg_advisory_lock(1129857348, 0)');
ok($node->log_contains(qr/\] compressx auto dictionary: LOG:  compressx automatic dictionaries: trained column "doc" of table "t_auto"/),
	'the background worker trained it');
$holder->quit;

# ---------------------------------------------------------------------
# 2. DROP DATABASE while the worker waits for a writer
# ---------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE dropme');
$node->safe_psql('dropme', q{
    CREATE EXTENSION compressx;
    CREATE TABLE d (id integer, doc text) USING compressx;
    SET client_min_messages = warning;
    SELECT compressx.set_column_codec('d', 'doc', 'zstd', dictionary => 'auto');
});
# a first dictionary, then a second one: the first is a candidate for
# pruning, so every pass waits for the table's writers
$node->safe_psql('dropme', qq{
    SET compressx.auto_dictionary_worker = off;
    INSERT INTO d SELECT i, $json FROM generate_series(1, 1500) i;
    SELECT action FROM compressx.auto_dictionary_run('d');
    INSERT INTO d SELECT i, $log FROM generate_series(10001, 16000) i;
    SELECT action FROM compressx.auto_dictionary_run('d');
});
is($node->safe_psql('dropme', q{
    SELECT count(*) FILTER (WHERE auto) FROM compressx.dictionaries}),
	'2', 'two automatic dictionaries, one retired');

# a client holds a writer's lock; a write makes the table due again
my $writer = $node->background_psql('dropme');
my $writer_pid = $writer->query_safe('SELECT pg_backend_pid()');
$writer->query_safe('BEGIN');
$writer->query_safe('LOCK TABLE d IN ROW EXCLUSIVE MODE');
ok(write_until('dropme', "INSERT INTO d SELECT i, $log FROM generate_series(20001, 20010) i", qq{
    SELECT EXISTS (SELECT FROM pg_stat_activity
                   WHERE datname = 'dropme' AND $worker AND query LIKE '%pruning d'
                     AND wait_event IS NOT NULL)}),
	'the worker waits for the writer before pruning');
my $worker_pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE datname = 'dropme' AND $worker");

# DROP DATABASE waits (up to 5 s) for the other sessions to leave
my $dropper = $node->background_psql('postgres', on_error_stop => 0);
$dropper->{stderr} = '';
$dropper->query_until(qr/started/, "\\echo started\nDROP DATABASE dropme;\n");
my $left = 0;
for (my $i = 0; $i < 30 && !$left; $i++)
{
	usleep(100_000);
	$left = $node->safe_psql('postgres',
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $worker_pid)") eq 't';
}
ok($left, 'the worker leaves within 3 s of DROP DATABASE, while it waited for a writer');

# the client goes too, within the 5 s: the drop succeeds
$node->safe_psql('postgres', "SELECT pg_terminate_backend($writer_pid)");
$dropper->query('SELECT 1');
is($dropper->{stderr}, '', 'DROP DATABASE succeeds');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_database WHERE datname = 'dropme'"),
	'0', 'the database is gone');
$dropper->quit;
eval { $writer->quit; };

$node->stop;
my $log_text = slurp_file($node->logfile);
unlike($log_text, qr/TRAP:|terminated by signal/, 'no assertion failure or crash');
done_testing();
