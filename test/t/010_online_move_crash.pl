# recompress_online() moving tables between heap and compressx, and
# crashes and standbys: an immediate shutdown in the middle of each move
# (compressx zstd -> heap mid-pass; heap pglz -> compressx zstd mid-pass,
# after its relam change; compressx -> heap while waiting for a writer,
# and while retrying its last ACCESS EXCLUSIVE lock)
# leaves every row whole and readable under the table's access method of
# the moment; a second CALL completes the move; a streaming standby that
# followed it all reads the same rows under the same access methods.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "default_toast_compression = pglz\n");
$primary->start;
cx_install_helpers($primary);

# every 10th value out of line, the others inline
my $body = q{CASE WHEN i % 10 = 0
                 THEN (SELECT string_agg(repeat(md5(k::text || i), 40), '') FROM generate_series(1, 60) k)
                 ELSE repeat('online move ' || i || ' words ', 150 + i % 150) END};
$primary->safe_psql('postgres', qq{
    CREATE TABLE m2h (id integer PRIMARY KEY, small text, body text) USING compressx;
    SELECT compressx.set_column_codec('m2h', 'body', 'zstd');
    INSERT INTO m2h SELECT i, 'row ' || i, $body FROM generate_series(1, 2000) i;
    CREATE INDEX m2h_small ON m2h (small);
    CREATE TABLE h2c (id integer PRIMARY KEY, small text, body text);
    INSERT INTO h2c SELECT i, 'row ' || i, $body FROM generate_series(1, 2000) i;
    CREATE INDEX h2c_small ON h2c (small);
    CREATE TABLE w2h (id integer PRIMARY KEY, body text) USING compressx;
    SELECT compressx.set_column_codec('w2h', 'body', 'zstd');
    INSERT INTO w2h SELECT i, $body FROM generate_series(1, 300) i;
    CREATE TABLE lk (id integer PRIMARY KEY, body text) USING compressx;
    SELECT compressx.set_column_codec('lk', 'body', 'zstd');
    INSERT INTO lk SELECT i, $body FROM generate_series(1, 300) i;
});

my @tables = qw(m2h h2c w2h lk);
my %state = map { $_ => cx_state_sql($_) } @tables;
my %before = map { $_ => $primary->safe_psql('postgres', $state{$_}) } @tables;
my $am = q{SELECT string_agg(c.relname || '=' || a.amname, ',' ORDER BY c.relname)
           FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname IN ('m2h', 'h2c', 'w2h', 'lk')};
sub mix
{
	my ($node, $t) = @_;
	return $node->safe_psql('postgres',
		qq{SELECT methods::text FROM compressx.column_stats('$t') WHERE column_name = 'body'});
}

is($primary->safe_psql('postgres', $am), 'h2c=heap,lk=compressx,m2h=compressx,w2h=compressx', 'access methods at start');
is(mix($primary, 'm2h'), '{"zstd": 2000}', 'm2h starts as zstd');
is(mix($primary, 'h2c'), '{"pglz": 2000}', 'h2c starts as pglz');

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# w2h: a writer that began before the run holds it in "waiting for writers"
my $writer = $primary->background_psql('postgres', on_error_stop => 0);
$writer->query_safe(q{BEGIN; UPDATE w2h SET id = id WHERE id = 1;});
# lk: a reader holding ACCESS SHARE keeps the final ACCESS EXCLUSIVE away;
# the run queues for it at most max_lock_wait (200 ms), naps and retries
my $reader = $primary->background_psql('postgres', on_error_stop => 0);
$reader->query_safe(q{BEGIN; SELECT count(*) FROM lk;});
my %bg;
my %call = (
	m2h => q{CALL compressx.recompress_online('m2h', access_method => 'heap', batch_rows => 50);},
	h2c => q{CALL compressx.recompress_online('h2c', 'zstd', access_method => 'compressx', batch_rows => 50);},
	w2h => q{CALL compressx.recompress_online('w2h', access_method => 'heap', batch_rows => 50);},
	lk => q{CALL compressx.recompress_online('lk', access_method => 'heap', batch_rows => 50, max_lock_wait => '200ms');});
for my $t (@tables)
{
	$bg{$t} = $primary->background_psql('postgres', on_error_stop => 0);
	$bg{$t}->query_until(qr/started/, qq{
	    SET compressx.debug_rewrite_delay = '100ms';
	    \\echo started
	    $call{$t}
	});
}
ok( $primary->poll_query_until('postgres', q{
        SELECT string_agg(relation::text || ':' || phase, ',' ORDER BY relation::text)
               = 'h2c:rewriting,lk:changing access method,m2h:rewriting,w2h:waiting for writers'
           AND bool_and(rows_rewritten >= 150 OR relation = 'w2h'::regclass)
           AND bool_and(retries >= 3 OR relation <> 'lk'::regclass)
           AND bool_and(current_table = relation AND tables_done = 0 AND tables_total = 1)
        FROM compressx.recompress_online_progress}),
    'm2h and h2c are rewriting, w2h waits for the writer, lk retries its last lock')
  or diag($primary->safe_psql('postgres',
	q{SELECT relation, phase, pass, rows_rewritten, retries FROM compressx.recompress_online_progress}));
# meanwhile other clients read and write lk: the run never queues for long
is($primary->safe_psql('postgres', q{
        SET lock_timeout = '5s';
        UPDATE lk SET id = id WHERE id = 2;
        SELECT count(*) FROM lk}),
   '300', 'lk: a client reads and writes while the run retries its ACCESS EXCLUSIVE');

$primary->stop('immediate');
$bg{$_}->{run}->kill_kill for @tables;
$writer->{run}->kill_kill;
$reader->{run}->kill_kill;
$primary->start;

# h2c moved first (relam), then was mid-pass; m2h and w2h are still compressx
is($primary->safe_psql('postgres', $am), 'h2c=compressx,lk=compressx,m2h=compressx,w2h=compressx',
	'after the crash: h2c moved, lk, m2h and w2h not yet');
for my $t (@tables)
{
	is($primary->safe_psql('postgres', $state{$t}), $before{$t}, "$t: every row unchanged after the crash");
	is($primary->safe_psql('postgres', "SELECT count(*) FROM compressx.verify('$t')"), '0',
		"$t: verify finds nothing after the crash");
}
like(mix($primary, 'm2h'), qr/^\{"pglz": \d+, "zstd": \d+\}$/, 'm2h: part pglz, part zstd');
like(mix($primary, 'h2c'), qr/^\{"pglz": \d+, "zstd": \d+\}$/, 'h2c: part pglz, part zstd');
is(mix($primary, 'w2h'), '{"zstd": 300}', 'w2h: nothing rewritten while waiting');
is(mix($primary, 'lk'), '{"pglz": 300}', 'lk: every value rewritten before its last lock');
is($primary->safe_psql('postgres',
	q{SELECT string_agg(relid::regclass || '.' || attname || '=' || codec, ',' ORDER BY relid::regclass::text, attnum)
	  FROM compressx.column_settings WHERE relid IN ('m2h'::regclass, 'w2h'::regclass, 'lk'::regclass)}),
	'lk.body=pglz,m2h.small=pglz,m2h.body=pglz,w2h.body=pglz',
	'the settings heap can read stay committed');

# a second run completes each move
for my $t (@tables)
{
	$primary->safe_psql('postgres', $call{$t});
	is($primary->safe_psql('postgres', $state{$t}), $before{$t}, "$t: every row unchanged after the second run");
}
is($primary->safe_psql('postgres', $am), 'h2c=compressx,lk=heap,m2h=heap,w2h=heap', 'every move done');
is(mix($primary, 'm2h'), '{"pglz": 2000}', 'm2h: every value pglz, read by heap');
is(mix($primary, 'h2c'), '{"zstd": 2000}', 'h2c: every value zstd');
is($primary->safe_psql('postgres', "SELECT count(*) FROM compressx.verify('h2c')"), '0', 'h2c: verify clean');
cx_toast_referenced_ok($primary, 'h2c', 'h2c');
for my $t (qw(m2h h2c))
{
	is($primary->safe_psql('postgres',
		qq{SET enable_seqscan = off; SELECT count(*) FROM $t WHERE small = 'row 1777'}),
		'1', "$t: index scan after the move");
}

$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $am), 'h2c=compressx,lk=heap,m2h=heap,w2h=heap', 'standby: same access methods');
for my $t (@tables)
{
	is($standby->safe_psql('postgres', $state{$t}), $before{$t}, "$t: standby reads the same rows");
	is(mix($standby, $t), mix($primary, $t), "$t: standby has the same method mix");
}

$standby->stop;
$primary->stop;
done_testing();
