# recompress_online() returns the room it frees (issue 28, item A8).
#
# The online rewrite writes each row's new version while the old one is
# still visible, so the first batches' new versions and TOAST chunks go to
# new pages at the end, and the room of the old ones ends up in the middle,
# where a plain VACUUM cannot truncate it.  Reported: 3 507 HTML documents
# moved from heap (pglz) to compressx (zstd) took TOAST from 17 to 24 MB,
# VACUUM did not shrink it, VACUUM FULL gave 14 MB.
#
# On a quiet table (autovacuum off, no other client), for out-of-line
# documents and for small rows stored inline: after the procedure and a
# plain VACUUM, the table and its TOAST relation together take at most 1.1
# times the pages the offline rewrite gives (VACUUM FULL of the same table,
# which re-encodes with the same settings), the rows are those of before,
# and every value is in the target codec; and a call with nothing to
# rewrite compacts a table whose rows were deleted in the middle.  Before
# the compaction (src/online/compact.c) the documents ended at 2.3 times
# (1 981 pages against 869) and the small rows at 4.1 (3 637 against 889).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', qq{
default_toast_compression = pglz
autovacuum = off
});
$node->start;
cx_install_helpers($node);

# pages of the table and of its TOAST relation
sub pages
{
	my ($table) = @_;
	return $node->safe_psql('postgres', qq{
	    SELECT pg_relation_size('$table') / current_setting('block_size')::int
	           + coalesce(pg_relation_size(nullif(reltoastrelid, 0)), 0) / current_setting('block_size')::int
	    FROM pg_class WHERE oid = '$table'::regclass});
}

sub state
{
	my ($table) = @_;
	return $node->safe_psql('postgres', cx_state_sql($table));
}

# Run the procedure, VACUUM, and compare with VACUUM FULL.
sub check_table
{
	my ($table, $label) = @_;
	my $before = state($table);
	my $start = pages($table);

	$node->safe_psql('postgres',
		"CALL compressx.recompress_online('$table', 'zstd', access_method => 'compressx')");
	$node->safe_psql('postgres', "VACUUM $table");
	my $online = pages($table);

	is(state($table), $before, "$label: rows unchanged");
	is($node->safe_psql('postgres', "SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = '$table'::regclass"),
		'compressx', "$label: the table is a compressx table");
	is($node->safe_psql('postgres', qq{
	    SELECT methods::text FROM compressx.column_stats('$table') WHERE column_name = 'doc'}),
		'{"zstd": ' . $node->safe_psql('postgres', "SELECT count(*) FROM $table") . '}',
		"$label: every value in zstd");
	cx_toast_referenced_ok($node, $table, $label);

	$node->safe_psql('postgres', "VACUUM FULL $table");
	my $offline = pages($table);
	note("$label: $start pages before, $online after the procedure and VACUUM, $offline after VACUUM FULL");
	cmp_ok($online, '<=', 1.1 * $offline,
		"$label: after the procedure and VACUUM at most 1.1 times the pages of the offline rewrite ($online vs $offline)");
	cmp_ok($offline, '<', $start, "$label: the offline rewrite is smaller than the table was (the comparison means something)");
	return;
}

# 3 000 HTML-like documents of 3-16 kB, out of line with pglz and zstd
$node->safe_psql('postgres', q{
    CREATE TABLE docs (id int PRIMARY KEY, name text, doc text);
    INSERT INTO docs
    SELECT i, 'page-' || i || '.html',
           '<html><head><title>Page ' || i || '</title></head><body>' ||
           (SELECT string_agg(format('<div class="c%s"><a href="/doc/%s.html">%s</a> %s</div>',
                                     hashint4(i * 1000 + j) & 15, hashint4(i * 7 + j) & 1023,
                                     md5((i * 131 + j)::text),
                                     repeat('the quick brown fox jumps ', 1 + (hashint4(j * 3 + i) & 3))), E'\n')
            FROM generate_series(1, 40 + (hashint4(i) & 63)) j) || '</body></html>'
    FROM generate_series(1, 3000) i;
    VACUUM ANALYZE docs;
});
check_table('docs', 'out-of-line documents');

# 40 000 JSON rows of about 700 bytes: inline, uncompressed in heap
$node->safe_psql('postgres', q{
    CREATE TABLE small (id int PRIMARY KEY, doc text);
    INSERT INTO small
    SELECT i, json_build_object('id', i, 'kind', 'kind ' || i % 7,
                                'tags', json_build_array('a' || i % 13, 'b' || i % 17),
                                'note', repeat('small document about row ' || (i % 100) || ' ', 20),
                                'h', md5(i::text))::text
    FROM generate_series(1, 40000) i;
    VACUUM ANALYZE small;
});
check_table('small', 'inline rows');

# A call with nothing to rewrite compacts too: the online way to give back
# room freed in the middle of a table (here by a DELETE of every other
# row, which VACUUM cannot truncate).
my $full = pages('small');
$node->safe_psql('postgres', 'DELETE FROM small WHERE id % 2 = 0; VACUUM small');
my $holey = pages('small');
my $before = state('small');
cmp_ok($holey, '>', 0.9 * $full, "rows deleted in the middle: VACUUM alone leaves $holey of $full pages");
$node->safe_psql('postgres', "CALL compressx.recompress_online('small')");
$node->safe_psql('postgres', 'VACUUM small');
my $compacted = pages('small');
is(state('small'), $before, 'a call with nothing to rewrite: rows unchanged');
cmp_ok($compacted, '<=', 0.65 * $full,
	"a call with nothing to rewrite compacts: $compacted of $full pages after VACUUM");

$node->stop;
done_testing();
