# The background worker of automatic dictionaries against plain roles
# (issue 33, items A3 and C13):
#  1. a plain role's session named 'pg_restore' (application_name is
#     anybody's to set) no longer stops the worker: it trains within its
#     naptime (0.5.0 deferred all work while such a session was connected);
#  2. the worker does not stay resident polling: once nothing is left to
#     do it exits, whatever sessions are connected (0.5.0 polled every
#     second, holding a max_worker_processes slot), and a role holding the
#     lock of its own due table does not keep it either;
#  3. a table that its owner may no longer read in full (privilege
#     revoked, row-level security forced, as a restore's last pass does
#     after the rows are in) loses its automatic dictionary: the REVOKE or
#     ALTER TABLE starts the worker, the column no longer names the
#     dictionary, and the worker prunes it;
#  4. the non-superuser owner of a database can DROP DATABASE .. WITH
#     (FORCE) while the worker is connected to it (it advertised no role,
#     and a non-superuser may not terminate such a process).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('autodictroles');
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
my $workers_sql = q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'compressx auto dictionary'};

$node->safe_psql('postgres', q{
    CREATE ROLE alice NOLOGIN;
    CREATE ROLE eve LOGIN;
    GRANT CREATE ON SCHEMA public TO alice;
});

# ---------------------------------------------------------------------
# 1. a plain role's session named pg_restore does not stop the worker
# ---------------------------------------------------------------------
my $eve = $node->background_psql('postgres', extra_params => [ '-U', 'eve' ]);
$eve->query_safe(q{SET application_name = 'pg_restore'});
is($node->safe_psql('postgres',
		q{SELECT usename FROM pg_stat_activity WHERE application_name = 'pg_restore'}),
	'eve', 'eve\'s session is named pg_restore');

$node->safe_psql('postgres', q{
    SET ROLE alice;
    CREATE TABLE t_auto (id integer, doc text) USING compressx;
    SET client_min_messages = warning;
    SELECT compressx.set_column_codec('t_auto', 'doc', 'zstd', dictionary => 'auto');
});
my $t0 = time;
$node->safe_psql('postgres', "INSERT INTO t_auto SELECT i, $json FROM generate_series(1, 1500) i");
my $trained = 0;
while (!$trained && time - $t0 < 20)
{
	usleep(200_000);
	$trained = $node->safe_psql('postgres',
		"SELECT dictionary IS NOT NULL FROM compressx.auto_dictionaries WHERE table_name = 't_auto'") eq 't';
}
ok($trained, 'the worker trains while a plain role\'s session is named pg_restore');
note sprintf('trained %.1f s after the write (naptime 1 s)', time - $t0);

# ---------------------------------------------------------------------
# 2. the worker exits once there is nothing to do; it does not poll
# ---------------------------------------------------------------------
# no more writes: the worker makes its quiet passes (a naptime apart) and
# exits; sampled every 0.5 s for 15 s, it is gone and stays gone
my @counts;
for (my $i = 0; $i < 30; $i++)
{
	push @counts, $node->safe_psql('postgres', $workers_sql);
	usleep(500_000);
}
note 'workers over 15 s: ' . join(' ', @counts);
is(join('', @counts[20 .. 29]), '0' x 10,
	'no worker stays resident once nothing is due (10 s after the last write)');
$eve->quit;

# nor does a table whose lock its owner holds: eve locks her own table,
# which is due (it changed), so every check of it is skipped; the worker
# counts such passes as quiet and exits
$node->safe_psql('postgres', q{
    GRANT CREATE ON SCHEMA public TO eve;
    SET ROLE eve;
    CREATE TABLE eve_t (id integer, doc text) USING compressx;
    SET client_min_messages = warning;
    SELECT compressx.set_column_codec('eve_t', 'doc', 'zstd', dictionary => 'auto');
});
my $locker = $node->background_psql('postgres', extra_params => [ '-U', 'eve' ]);
$locker->query_safe('BEGIN');
$locker->query_safe('LOCK TABLE eve_t IN SHARE UPDATE EXCLUSIVE MODE');
# eve writes (from new sessions) until a worker runs
my $seen = 0;
for (my $i = 0; $i < 20 && !$seen; $i++)
{
	$node->safe_psql('postgres', "INSERT INTO eve_t SELECT i, $json FROM generate_series(1, 100) i",
		extra_params => [ '-U', 'eve' ]);
	for (my $j = 0; $j < 5 && !$seen; $j++)
	{
		usleep(100_000);
		$seen = $node->safe_psql('postgres', $workers_sql) > 0;
	}
}
ok($seen, 'eve\'s writes started a worker');
@counts = ();
for (my $i = 0; $i < 24; $i++)
{
	push @counts, $node->safe_psql('postgres', $workers_sql);
	usleep(500_000);
}
note 'workers over 12 s while eve holds her table\'s lock: ' . join(' ', @counts);
is(join('', @counts[16 .. 23]), '0' x 8,
	'a lock held on a due table does not keep the worker resident');
$locker->query_safe('COMMIT');
$locker->quit;

# ---------------------------------------------------------------------
# 3. the owner may no longer read the table: the dictionary is withdrawn
# ---------------------------------------------------------------------
# as in a restore: rows in, a dictionary trained while the owner could
# read them all, then the last pass revokes (or forces row-level security)
foreach my $t ('t_revoked', 't_forced')
{
	$node->safe_psql('postgres', qq{
        SET ROLE alice;
        CREATE TABLE $t (id integer, doc text) USING compressx;
        SET client_min_messages = warning;
        SELECT compressx.set_column_codec('$t', 'doc', 'zstd', dictionary => 'auto');
    });
	$node->safe_psql('postgres', "INSERT INTO $t SELECT i, $json FROM generate_series(1, 1500) i");
}
ok($node->poll_query_until('postgres', q{
    SELECT count(*) = 2 FROM compressx.auto_dictionaries
    WHERE table_name IN ('t_revoked', 't_forced') AND dictionary IS NOT NULL}),
	'dictionaries trained while the owner could read the tables');
# the worker that trained them has left: the revoke itself starts one
ok($node->poll_query_until('postgres', "SELECT ($workers_sql) = 0"), 'no worker runs');
$node->safe_psql('postgres', q{
    SET ROLE alice;
    REVOKE SELECT ON t_revoked FROM alice;
    ALTER TABLE t_forced ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
    CREATE POLICY mine ON t_forced USING (id % 2 = 0);
});
my $t1 = time;
ok($node->poll_query_until('postgres', q{
    SELECT count(*) = 0 FROM compressx.column_settings
    WHERE relid IN ('t_revoked'::regclass, 't_forced'::regclass) AND dict_id IS NOT NULL}),
	'the columns no longer name their dictionaries');
note sprintf('withdrawn %.1f s after the revoke', time - $t1);
ok($node->poll_query_until('postgres', q{
    SELECT count(*) = 0 FROM compressx.dictionaries
    WHERE relid IN ('t_revoked'::regclass, 't_forced'::regclass)}),
	'the withdrawn dictionaries are pruned (no stored value names them)');
like($node->safe_psql('postgres',
		"SELECT last_message FROM compressx.auto_dictionaries WHERE table_name = 't_revoked'"),
	qr/Role "alice" may not read table "t_revoked"/, 'the view says why');
is($node->safe_psql('postgres',
		"SELECT string_agg(state, ',' ORDER BY table_name) FROM compressx.auto_dictionaries WHERE table_name IN ('t_revoked', 't_forced')"),
	'skipped,skipped', 'both skipped');
# new values are stored without it (it is gone), and every value reads back
$node->safe_psql('postgres', "INSERT INTO t_revoked SELECT i, $json FROM generate_series(2001, 2100) i");
is($node->safe_psql('postgres', qq{
    SELECT count(*) FROM t_revoked r, LATERAL (SELECT $json AS doc FROM (SELECT r.id AS i) x) w
    WHERE r.doc = w.doc}),
	'1600', 'every value reads back as written');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.verify('t_revoked')"), '0',
	'verify finds nothing');

# ---------------------------------------------------------------------
# 4. DROP DATABASE .. WITH (FORCE) by the non-superuser database owner
# ---------------------------------------------------------------------
$node->safe_psql('postgres', q{
    CREATE ROLE dbowner LOGIN;
    CREATE DATABASE owned OWNER dbowner;
    ALTER SYSTEM SET compressx.auto_dictionary_naptime = 300;
    SELECT pg_reload_conf();
});
$node->safe_psql('owned', q{
    CREATE EXTENSION compressx;
    CREATE TABLE d (id integer, doc text) USING compressx;
    ALTER TABLE d OWNER TO dbowner;
    SET client_min_messages = warning;
    SELECT compressx.set_column_codec('d', 'doc', 'zstd', dictionary => 'auto');
});
$node->safe_psql('owned', "INSERT INTO d SELECT i, 'row ' || i FROM generate_series(1, 10) i");
ok($node->poll_query_until('postgres', q{
    SELECT count(*) = 1 FROM pg_stat_activity
    WHERE datname = 'owned' AND backend_type = 'compressx auto dictionary'}),
	'a worker stays in the database (naptime 300 s)');
my ($rc, $out, $err) = $node->psql('postgres', 'DROP DATABASE owned WITH (FORCE)',
	extra_params => [ '-U', 'dbowner' ]);
is($rc, 0, 'the non-superuser owner drops the database WITH (FORCE) while the worker is connected')
  or diag $err;
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_database WHERE datname = 'owned'"),
	'0', 'the database is gone');

$node->stop;
my $log_text = slurp_file($node->logfile);
unlike($log_text, qr/TRAP:|terminated by signal/, 'no assertion failure or crash');
done_testing();
