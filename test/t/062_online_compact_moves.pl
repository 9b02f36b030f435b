# recompress_online's compaction moves each row at most once, never grows
# the table, and survives the table shrinking between its transactions
# (issue 33, items B9, B10, B11).
#
# B9: on a sparse tail a row's copy stays on its own page (heap keeps a new
#     version on its page when it fits); the compaction copied such a row
#     again and again until a copy left the page: 52 170 UPDATEs for 7 785
#     rows, up to 185 UPDATE events for one row in logical decoding, from a
#     call with nothing to rewrite.  Counted here from test_decoding: each
#     row has at most one UPDATE event per call (the statistics' n_tup_upd
#     also counts the copies of a rolled back subtransaction that fill a
#     page's room: printed, not asserted), and the table still shrinks.
# B10: front pages with about 188 bytes free each (rows of 1.1 kB) counted
#     as room by the byte: the copies found no page, the table grew by a
#     page per round (340 -> 343 -> 346 ... after VACUUM).  Here: repeated
#     calls, each followed by VACUUM, never grow the table.
# B11: a VACUUM that truncates the table between two of the compaction's
#     transactions made the next one read a block past the end ("could not
#     read block N"), and recompress_online_cleanup then restored the old
#     settings over the rewritten rows.  Here the compaction is paused
#     between its transactions (compressx.debug_rewrite_delay), the rows of
#     the table's last pages are deleted and VACUUM truncates them: the call
#     completes, the rows are those left, every value in the target codec,
#     and no interrupted run is left for cleanup.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', qq{
autovacuum = off
default_toast_compression = pglz
});
$node->start;
cx_install_helpers($node);

sub pages
{
	my ($table) = @_;
	return $node->safe_psql('postgres',
		"SELECT pg_relation_size('$table') / current_setting('block_size')::int");
}

# UPDATE events per row of $table decoded from slot s since the last call:
# (rows with any, total events, the most for one row)
sub update_events
{
	my ($table) = @_;
	my $out = $node->safe_psql('postgres', qq{
	    SELECT count(*), coalesce(sum(n), 0), coalesce(max(n), 0) FROM (
	        SELECT substring(data FROM 'id\\[integer\\]:([0-9]+)') AS id, count(*) AS n
	        FROM pg_logical_slot_get_changes('s', NULL, NULL, 'include-xids', '0')
	        WHERE data LIKE 'table public.$table: UPDATE:%'
	        GROUP BY 1) e});
	return split /\|/, $out;
}

# ---------------------------------------------------------------------
# B9: a sparse tail (every other row deleted), a call with nothing to do
# ---------------------------------------------------------------------
$node->safe_psql('postgres', q{
    CREATE TABLE sparse (id integer PRIMARY KEY, doc text);
    INSERT INTO sparse
    SELECT i, json_build_object('id', i, 'note', repeat('sparse row ' || (i % 100) || ' ', 40),
                                'h', md5(i::text))::text
    FROM generate_series(1, 20000) i;
    DELETE FROM sparse WHERE id % 2 = 0;
    VACUUM sparse;
    SELECT pg_create_logical_replication_slot('s', 'test_decoding');
});
my $state = $node->safe_psql('postgres', cx_state_sql('sparse'));
my $sparse_pages = pages('sparse');
my $upd0 = $node->safe_psql('postgres',
	"SELECT pg_stat_force_next_flush(); SELECT n_tup_upd FROM pg_stat_user_tables WHERE relid = 'sparse'::regclass");
$node->safe_psql('postgres', "CALL compressx.recompress_online('sparse')");
my ($rows, $events, $most) = update_events('sparse');
my $upd = $node->safe_psql('postgres',
	"SELECT pg_stat_force_next_flush(); SELECT n_tup_upd FROM pg_stat_user_tables WHERE relid = 'sparse'::regclass")
	- $upd0;
note("sparse tail: $events UPDATE events for $rows rows, at most $most for one row; n_tup_upd +$upd");
cmp_ok($most, '<=', 1, "sparse tail: at most one UPDATE event per row ($most)");
cmp_ok($events, '<=', $rows, "sparse tail: no more UPDATE events ($events) than rows moved ($rows)");
cmp_ok($rows, '>', 1000, "sparse tail: the call moved rows ($rows)");
cmp_ok($node->safe_psql('postgres', "VACUUM sparse; SELECT pg_relation_size('sparse') / 8192"), '<', $sparse_pages,
	'sparse tail: VACUUM truncates the table after the call');
is($node->safe_psql('postgres', cx_state_sql('sparse')), $state, 'sparse tail: rows unchanged');

# ---------------------------------------------------------------------
# B10: front pages with ~188 bytes free, rows of 1.1 kB, a sparse tail
# ---------------------------------------------------------------------
$node->safe_psql('postgres', q{
    CREATE TABLE grows (id integer PRIMARY KEY, doc text);
    ALTER TABLE grows ALTER COLUMN doc SET STORAGE external;
    INSERT INTO grows SELECT i, repeat(chr(65 + i % 26), 1100) FROM generate_series(1, 2380) i;
    -- the last 40 pages keep one row each
    DELETE FROM grows WHERE id > 2100 AND id % 7 <> 0;
    VACUUM grows;
});
my $free = $node->safe_psql('postgres', q{
    SELECT min(8192 - 24 - 7 * (1136 + 4)) FROM pg_class WHERE relname = 'grows'});
note("grows: about $free bytes free on each front page");
$state = $node->safe_psql('postgres', cx_state_sql('grows'));
my @sizes = (pages('grows'));
for my $call (1 .. 4)
{
	$node->safe_psql('postgres', "CALL compressx.recompress_online('grows')");
	$node->safe_psql('postgres', 'VACUUM grows');
	push @sizes, pages('grows');
}
update_events('grows');
note('grows: pages after each call and VACUUM: ' . join(' -> ', @sizes));
my $grew = grep { $sizes[$_] > $sizes[$_ - 1] } 1 .. $#sizes;
is($grew, 0, 'repeated calls never grow the table: ' . join(' -> ', @sizes));
is($node->safe_psql('postgres', cx_state_sql('grows')), $state, 'grows: rows unchanged');

# ---------------------------------------------------------------------
# B11: VACUUM truncates the table between two compaction transactions
# ---------------------------------------------------------------------
$node->safe_psql('postgres', q{
    SELECT pg_drop_replication_slot('s');
    CREATE TABLE shrinks (id integer PRIMARY KEY, doc text) USING compressx;
    SELECT compressx.set_column_codec('shrinks', 'doc', 'pglz');
    INSERT INTO shrinks
    SELECT i, json_build_object('id', i, 'note', repeat('shrinking row ' || (i % 50) || ' ', 10),
                                'h', (SELECT string_agg(md5((i * 10 + j)::text), '') FROM generate_series(1, 8) j))::text
    FROM generate_series(1, 3000) i;
    VACUUM shrinks;
});
my $s = $node->background_psql('postgres', on_error_stop => 0);
$s->query_safe("LOAD 'compressx'");
$s->query_safe('SET compressx.debug_rewrite_delay = 500');
$s->query_safe('SET client_min_messages = warning');
$s->{stderr} = '';
$s->query_until(qr/started/,
	"\\echo started\nCALL compressx.recompress_online('shrinks', 'zstd', batch_rows => 200, max_lock_wait => '10s');\n");
# between two transactions of the compaction, after a first move: napping,
# no lock on the table, some row version written by the compaction
ok( $node->poll_query_until('postgres', q{
        SELECT EXISTS (
            SELECT FROM compressx.recompress_online_progress p
            JOIN pg_stat_activity a ON a.pid = p.pid
            WHERE p.relid = 'shrinks'::regclass AND p.phase = 'compacting'
              AND a.wait_event_type = 'Extension'
              AND NOT EXISTS (SELECT FROM pg_locks l WHERE l.pid = p.pid
                              AND l.locktype = 'relation' AND l.relation = 'shrinks'::regclass))}),
	'the compaction is between two of its transactions');
my $before_cut = pages('shrinks');
$node->safe_psql('postgres', qq{
    DELETE FROM shrinks WHERE (ctid::text::point)[0] >= $before_cut - 20;
});
$node->safe_psql('postgres', 'VACUUM shrinks');
my $after_cut = pages('shrinks');
note("shrinks: $before_cut pages, $after_cut after the DELETE and VACUUM mid-compaction");
cmp_ok($after_cut, '<', $before_cut, 'VACUUM truncated the table mid-compaction');
my $left = $node->safe_psql('postgres', cx_state_sql('shrinks'));
$s->query('SELECT 1');
is($s->{stderr}, '', 'the call completes after the table shrank');
$s->quit;
is($node->safe_psql('postgres', cx_state_sql('shrinks')), $left, 'shrinks: the rows left are unchanged');
is($node->safe_psql('postgres', q{
    SELECT methods::text FROM compressx.column_stats('shrinks') WHERE column_name = 'doc'}),
	'{"zstd": ' . $node->safe_psql('postgres', 'SELECT count(*) FROM shrinks') . '}',
	'shrinks: every value in zstd');
is($node->safe_psql('postgres', "SELECT compressx.recompress_online_cleanup('shrinks')"),
	'no interrupted recompress_online run on "shrinks"', 'shrinks: no interrupted run left');
is($node->safe_psql('postgres', "SELECT codec FROM compressx.column_settings WHERE relid = 'shrinks'::regclass"),
	'zstd', 'shrinks: the setting is the target');

$node->stop;
done_testing();
