# The compression settings a coordinator sends to the workers follow its
# transaction (issue 27, item 11), on a coordinator and two workers:
#  - citus_apply's lock_timeout holds for its own lock wait only: the
#    rest of the transaction that called it keeps its own;
#  - a change rolled back to a savepoint reaches no worker, sent inside the
#    coordinator's transaction or at its commit (the way of Citus builds for
#    16 and later, chosen here on 15 with
#    compressx.citus_send_in_transaction);
#  - a failure after the settings went out at commit (an ON COMMIT DELETE
#    ROWS temporary table referenced by another's foreign key fails after
#    the pre-commit callbacks): a warning says so, citus_settings_check
#    names the workers that differ and citus_settings_repair sends the
#    coordinator's settings again; inside the transaction the workers keep
#    theirs;
#  - citus_settings_check reports a worker changed on its own and one that
#    is down.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my %node;
for my $name (qw(coord w1 w2))
{
	my $n = PostgreSQL::Test::Cluster->new($name);
	$n->init;
	$n->append_conf('postgresql.conf', q{
listen_addresses = '127.0.0.1'
citus.local_hostname = '127.0.0.1'
citus.shard_count = 4
citus.shard_replication_factor = 1
max_prepared_transactions = 100
});
	# CX_PRELOAD_FIRST: libraries to load before Citus (test/citus_suite.sh 17)
	$n->append_conf('postgresql.conf', "shared_preload_libraries = '"
		. ($ENV{CX_PRELOAD_FIRST} ? "$ENV{CX_PRELOAD_FIRST}, " : '') . "citus, compressx'\n");
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION citus');
	$node{$name} = $n;
}
my $coord = $node{coord};
my ($w1, $w2) = @node{qw(w1 w2)};
sub cq { $coord->safe_psql('postgres', $_[0]) }

cq(sprintf("SELECT citus_set_coordinator_host('127.0.0.1', %d)", $coord->port));
cq(sprintf("SELECT citus_add_node('127.0.0.1', %d)", $_->port)) for ($w1, $w2);
cq('CREATE EXTENSION compressx');
my $version = cq("SELECT extversion FROM pg_extension WHERE extname = 'compressx'");

cq("CREATE TABLE docs (id int PRIMARY KEY, body text, note text) USING compressx");
cq("SELECT create_distributed_table('docs', 'id')");
cq(q{INSERT INTO docs SELECT i, repeat('{"user": "u' || (i % 97) || '", "tags": ["a", "b"]} ', 1 + i % 9), 'n' || i FROM generate_series(1, 2000) i});
cq("SELECT compressx.set_column_codec('docs', 'body', 'zstd', 5)");
cq("SELECT compressx.set_column_codec('docs', 'note', 'zstd', 3)");
cq("SELECT compressx.train_dictionary('docs', 'body', 4096, 2000)");

my $note = q{SELECT codec || coalesce(level::text, '') FROM compressx.column_codec_settings('docs') WHERE column_name = 'note'};
# the codec of note on the coordinator, w1 and w2
sub notes { join(',', map { $_->safe_psql('postgres', $note) } ($coord, $w1, $w2)) }
my $check = q{SELECT coalesce(string_agg(coalesce(relation::text, '-') || '@' || node_port || ': ' || problem, '; ' ORDER BY node_port, relation::text), 'none') FROM compressx.citus_settings_check()};
my %name = ($w1->port => 'w1', $w2->port => 'w2');
# citus_settings_check with the ports replaced by w1 and w2
sub check
{
	my $r = cq($check);
	$r =~ s{\@(\d+)}{'@' . ($name{$1} // $1)}ge;
	return $r;
}

is(notes(), 'zstd3,zstd3,zstd3', 'the settings reached both workers');
is(check(), 'none', 'citus_settings_check: every worker has the settings and the dictionary');

# lock_timeout: set by citus_apply for its own lock wait only
my $state = q{'{"columns": []}'};
is($w1->safe_psql('postgres', "BEGIN; SELECT compressx.citus_apply('docs', $state, '$version'); SHOW lock_timeout; ROLLBACK"),
	"\n0", 'citus_apply leaves lock_timeout as it was (0) for the rest of the transaction');
is($w1->safe_psql('postgres', "BEGIN; SET LOCAL lock_timeout = '7s'; SELECT compressx.citus_apply('docs', $state, '$version'); SHOW lock_timeout; ROLLBACK"),
	"\n7s", 'citus_apply keeps a lock_timeout set before it in the transaction');
is($w1->safe_psql('postgres', "SHOW lock_timeout"), '0', 'and nothing is left in the session');

# Citus built for 16 and later hides the function compressx sends settings
# with in the coordinator's transaction: there they always go at commit
my $twopc = cq('SHOW server_version_num') < 160000;
for my $in_xact ($twopc ? ('on', 'off') : ('off'))
{
	my $how = $in_xact eq 'on' ? 'sent in the transaction' : 'sent at commit';
	my $set = "SET compressx.citus_send_in_transaction = $in_xact;";

	# a change rolled back to a savepoint reaches no worker
	$w1->safe_psql('postgres', "SELECT compressx.set_column_codec('docs', 'note', 'pglz')");
	is(notes(), 'zstd3,pglz,zstd3', "($how) w1 changed on its own");
	is(check(), 'docs@w1: the compression settings differ from the coordinator\'s',
		"($how) citus_settings_check names w1");
	my ($rc, $out, $err) = $coord->psql('postgres', qq{$set
BEGIN;
SAVEPOINT s;
SELECT compressx.set_column_codec('docs', 'note', 'lz4');
ROLLBACK TO SAVEPOINT s;
COMMIT;});
	is($rc, 0, "($how) a change rolled back to a savepoint commits") or diag $err;
	is(notes(), 'zstd3,pglz,zstd3', "($how) the change rolled back to a savepoint reached no worker");
	is(check(), 'docs@w1: the compression settings differ from the coordinator\'s',
		"($how) w1 still differs");
	is(cq("$set SELECT string_agg(r::text, ',') FROM compressx.citus_settings_repair() r"), 'docs',
		"($how) citus_settings_repair sends docs again");
	is(notes(), 'zstd3,zstd3,zstd3', "($how) citus_settings_repair: w1 has the coordinator's settings again");
	is(check(), 'none', "($how) citus_settings_check after the repair");

	# what a savepoint kept is sent
	($rc, $out, $err) = $coord->psql('postgres', qq{$set
BEGIN;
SAVEPOINT s;
SELECT compressx.set_column_codec('docs', 'note', 'lz4');
RELEASE SAVEPOINT s;
SAVEPOINT t;
SELECT compressx.set_column_codec('docs', 'body', 'pglz');
ROLLBACK TO SAVEPOINT t;
COMMIT;});
	is($rc, 0, "($how) a change kept by a released savepoint commits") or diag $err;
	is(notes(), 'lz41,lz41,lz41', "($how) the change kept by a released savepoint reached both workers");
	is(check(), 'none', "($how) and every worker has the coordinator's settings");

	# a failure after the pre-commit callbacks
	($rc, $out, $err) = $coord->psql('postgres', qq{$set
BEGIN;
CREATE TEMP TABLE p (id int PRIMARY KEY) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE c (id int REFERENCES p);
SELECT compressx.set_column_codec('docs', 'note', 'zstd', 3);
COMMIT;});
	like($err, qr/unsupported ON COMMIT and foreign key combination/,
		"($how) the commit fails after the pre-commit callbacks") or diag $err;
	is($coord->safe_psql('postgres', $note), 'lz41', "($how) the coordinator kept its settings");
	if ($in_xact eq 'on')
	{
		unlike($err, qr/WARNING/, '(sent in the transaction) no warning') or diag $err;
		is(notes(), 'lz41,lz41,lz41', '(sent in the transaction) the workers kept theirs: they were sent in the coordinator\'s transaction');
		is(check(), 'none', '(sent in the transaction) citus_settings_check finds nothing');
	}
	else
	{
		like($err, qr/WARNING:  the other nodes kept compression settings that this transaction did not commit.*public\.docs.*citus_settings_repair/s,
			'(sent at commit) a warning names the table and the repair') or diag $err;
		is(notes(), 'lz41,zstd3,zstd3', '(sent at commit) the workers committed the settings the coordinator did not');
		is(check(), 'docs@w1: the compression settings differ from the coordinator\'s; docs@w2: the compression settings differ from the coordinator\'s',
			'(sent at commit) citus_settings_check names both workers');
		is(cq("$set SELECT string_agg(r::text, ',') FROM compressx.citus_settings_repair() r"), 'docs',
			'(sent at commit) citus_settings_repair sends docs again');
		is(notes(), 'lz41,lz41,lz41', '(sent at commit) the workers have the coordinator\'s settings again');
		is(check(), 'none', '(sent at commit) citus_settings_check after the repair');
	}
	cq("SELECT compressx.set_column_codec('docs', 'note', 'zstd', 3)");
	is(notes(), 'zstd3,zstd3,zstd3', "($how) back to zstd 3");
}

# a dictionary that differs in content only: w2's settings name a copy
# with one more byte
$w2->safe_psql('postgres', q{
WITH d AS (INSERT INTO compressx.dictionaries (relid, attname, dict, sample_values, sample_bytes, shared)
           SELECT d.relid, d.attname, d.dict || '\x00'::bytea, d.sample_values, d.sample_bytes, true
           FROM compressx.dictionaries d JOIN compressx.column_settings s ON d.dict_id = s.dict_id
           WHERE s.relid = 'docs'::regclass AND s.attname = 'body' RETURNING dict_id)
UPDATE compressx.column_settings s SET dict_id = d.dict_id FROM d WHERE s.relid = 'docs'::regclass AND s.attname = 'body'});
is(check(), 'docs@w2: the compression settings differ from the coordinator\'s',
	'citus_settings_check compares the dictionaries\' contents');
cq("SELECT compressx.citus_settings_repair()");
is(check(), 'none', 'citus_settings_repair sends the dictionary again');

# a worker down is reported, not skipped
$w2->stop;
like(check(), qr/^-\@w2: could not be checked: /, 'a worker that is down is reported');
$w2->start;
is(check(), 'none', 'and checked again once it is back');

# the check runs on the coordinator
my ($rc, $out, $err) = $w1->psql('postgres', 'SELECT * FROM compressx.citus_settings_check()');
like($err, qr/runs on the coordinator/, 'citus_settings_check runs on the coordinator only');
done_testing();
