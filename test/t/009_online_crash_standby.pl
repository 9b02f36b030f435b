# recompress_online() and crashes and standbys: an immediate shutdown in the
# middle of a run (a heap table pglz -> lz4 and a compressx table zstd ->
# lz4, each with inline and out-of-line values and an index; on a server
# built without lz4 only the compressx table, zstd -> pglz) leaves every
# row whole, part in the old method and part in the new, verify() clean; a
# second CALL completes; a streaming standby that followed it all reads the
# same rows and the same method mix.
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
# without lz4 a heap table has one compression method (pglz), so there is
# nothing to recompress online: the heap table's checks need lz4
my $new = cx_other_codec($primary);
my @tables = $new eq 'lz4' ? qw(h c) : qw(c);

# body: every 10th value 77 kB of 60 md5s each repeated 40 times (stored
# out of line, compressed), the others 3-6 kB of repeated words (inline,
# compressed).
my $body = q{CASE WHEN i % 10 = 0
                 THEN (SELECT string_agg(repeat(md5(k::text || i), 40), '') FROM generate_series(1, 60) k)
                 ELSE repeat('online body ' || i || ' words ', 150 + i % 150) END};
$primary->safe_psql('postgres', qq{
    CREATE TABLE h (id integer PRIMARY KEY, small text, body text);
    INSERT INTO h SELECT i, 'row ' || i, $body FROM generate_series(1, 2000) i;
    CREATE INDEX h_small ON h (small);
    CREATE TABLE c (id integer PRIMARY KEY, small text, body text) USING compressx;
    INSERT INTO c SELECT i, 'row ' || i, $body FROM generate_series(1, 2000) i;
    CREATE INDEX c_small ON c (small);
});

my %state = (h => cx_state_sql('h'), c => cx_state_sql('c'));
my %before = map { $_ => $primary->safe_psql('postgres', $state{$_}) } qw(h c);
# stored method of body, per method: heap through core, compressx from the stored forms
my %mix = (
	h => q{SELECT string_agg(coalesce(m, 'none') || '=' || n, ',' ORDER BY m)
	       FROM (SELECT pg_column_compression(body) m, count(*) n FROM h GROUP BY 1) x},
	c => q{SELECT methods::text FROM compressx.column_stats('c') WHERE column_name = 'body'});
# after a crash mid-run: old method in some rows, new in at least a batch, nothing else
my %partial = (
	h => q{SELECT (count(*) FILTER (WHERE m = 'pglz') > 0)::text || ','
	           || (count(*) FILTER (WHERE m = 'lz4') >= 50)::text || ','
	           || count(*) FILTER (WHERE m IS DISTINCT FROM 'pglz' AND m IS DISTINCT FROM 'lz4')
	       FROM (SELECT pg_column_compression(body) m FROM h) x},
	c => qq{SELECT (coalesce((methods->>'zstd')::int, 0) > 0)::text || ','
	           || (coalesce((methods->>'$new')::int, 0) >= 50)::text || ','
	           || ("values" - coalesce((methods->>'zstd')::int, 0) - coalesce((methods->>'$new')::int, 0))
	       FROM compressx.column_stats('c') WHERE column_name = 'body'});
my %old = (h => 'pglz', c => 'zstd');

is($primary->safe_psql('postgres', $mix{h}), 'pglz=2000', 'heap starts as pglz');
is($primary->safe_psql('postgres', $mix{c}), '{"zstd": 2000}', 'compressx starts as zstd');
for my $t (qw(h c))
{
	is($primary->safe_psql('postgres',
		qq{SELECT external_values = 200 AND "values" = 2000 FROM compressx.column_stats('$t') WHERE column_name = 'body'}),
		't', "$t: 200 values out of line, 1800 inline");
}

# A standby follows from here on, through the crash.
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# One run per table, each batch of 50 rows held 100 ms before its commit;
# crash once both have committed some batches.
my %bg;
for my $t (@tables)
{
	$bg{$t} = $primary->background_psql('postgres', on_error_stop => 0);
	$bg{$t}->query_until(qr/started/, qq{
	    SET compressx.debug_rewrite_delay = '100ms';
	    \\echo started
	    CALL compressx.recompress_online('$t', '$new', batch_rows => 50);
	});
}
ok( $primary->poll_query_until('postgres', qq{
        SELECT count(*) = @{[ scalar @tables ]} AND bool_and(rows_rewritten >= 150 AND phase = 'rewriting')
        FROM compressx.recompress_online_progress}),
    'both runs are rewriting');
is($primary->safe_psql('postgres', q{
        SELECT string_agg(relation::text, ',' ORDER BY relation::text) FROM compressx.recompress_online_progress
        WHERE rows_rewritten < 2000 AND pass = 1}),
    join(',', sort @tables), 'both runs are mid-table in their first pass');

$primary->stop('immediate');
$bg{$_}->{run}->kill_kill for @tables;
$primary->start;

for my $t (@tables)
{
	is($primary->safe_psql('postgres', $state{$t}), $before{$t}, "$t: every row unchanged after crash mid-run");
	is($primary->safe_psql('postgres', "SELECT count(*) FROM compressx.verify('$t')"), '0',
		"$t: verify finds nothing after crash");
	is($primary->safe_psql('postgres', $partial{$t}), 'true,true,0',
		"$t: after crash part $old{$t}, part $new, nothing else");
	is($primary->safe_psql('postgres',
		qq{SET enable_seqscan = off; SELECT count(*) FROM $t WHERE small = 'row 1777'}),
		'1', "$t: index usable after crash");
	is($primary->safe_psql('postgres', 'SELECT count(*) FROM compressx.recompress_online_progress'),
		'0', 'no run left in progress');

	# a second run completes
	$primary->safe_psql('postgres', "CALL compressx.recompress_online('$t', '$new', batch_rows => 50)");
	is($primary->safe_psql('postgres', $state{$t}), $before{$t}, "$t: every row unchanged after second run");
	is($primary->safe_psql('postgres', "SELECT count(*) FROM compressx.verify('$t')"), '0',
		"$t: verify finds nothing after second run");
	cx_toast_referenced_ok($primary, $t, $t);
}
SKIP:
{
	skip 'the server was built without lz4: a heap table has nothing to recompress', 1 if $new ne 'lz4';
	is($primary->safe_psql('postgres', $mix{h}), 'lz4=2000', 'heap: every value lz4 after second run');
}
is($primary->safe_psql('postgres', $mix{c}), qq/{"$new": 2000}/, "compressx: every value $new after second run");

# The standby followed the crash and the runs.
$primary->wait_for_catchup($standby);
for my $t (@tables)
{
	is($standby->safe_psql('postgres', $state{$t}), $before{$t}, "$t: standby reads the same rows");
	is($standby->safe_psql('postgres', $mix{$t}), $primary->safe_psql('postgres', $mix{$t}),
		"$t: standby has the same method mix");
	is($standby->safe_psql('postgres',
		qq{SET enable_seqscan = off; SELECT count(*) FROM $t WHERE small = 'row 1777'}),
		'1', "$t: index scan on the standby");
}

$standby->stop;
$primary->stop;
done_testing();
