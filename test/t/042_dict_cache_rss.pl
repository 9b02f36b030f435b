# The dictionary cache's bound in resident size (issue 33, item A6): one
# query reads one row of each of 40 dictionaries of 1 MB.  The reviewer saw
# the backend's VmRSS and VmHWM grow by 58 MB with
# compressx.dictionary_cache_memory = 1MB and by 97 MB with 64MB, and stay.
# /proc/<pid>/status splits that: RssAnon, the backend's own memory (the
# cache), grows by about the bound and falls back when the cache shrinks;
# RssShmem, pages of shared_buffers the backend mapped while reading the
# dictionaries' TOAST data, grows by their size (40 MB) and stays mapped
# for the backend's life, exactly as for any query that reads those bytes
# (the control below reads the same dictionaries with md5(); no
# dictionary cache is involved there).  Those pages are shared_buffers,
# allocated once for the server, not memory of the backend.  What the
# backend kept after evictions (a 16 MB cache shrunk to 1 MB left 9.8 MB)
# was glibc's: freed blocks in the heap, now returned with malloc_trim().
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('dictcacherss');
$node->init;
$node->append_conf('postgresql.conf', "shared_buffers = 128MB\n");
$node->start;
cx_install_helpers($node);

# 40 dictionaries of 1 MB (raw content: zstd takes any bytes as a
# dictionary), each the column's while one row is written
$node->safe_psql('postgres', q{
    CREATE TABLE t (id integer, doc text) USING compressx;
    SELECT compressx.set_column_codec('t', 'doc', 'zstd', 3);
    INSERT INTO t SELECT i, json_build_object('id', i, 'pad', md5(i::text))::text
    FROM generate_series(1, 200) i;
    SELECT compressx.train_dictionary('t', 'doc', 16384, 200);
    DO $$
    DECLARE d integer;
    BEGIN
        FOR k IN 1..40 LOOP
            INSERT INTO compressx.dictionaries (relid, attname, dict, sample_values, sample_bytes)
            SELECT relid, attname,
                   (SELECT decode(string_agg(md5((k * 100000 + j)::text), ''), 'hex')
                    FROM generate_series(1, 65536) j),
                   sample_values, sample_bytes
            FROM compressx.dictionaries WHERE relid = 't'::regclass ORDER BY dict_id LIMIT 1
            RETURNING dict_id INTO d;
            UPDATE compressx.column_settings SET dict_id = d WHERE relid = 't'::regclass;
            INSERT INTO t SELECT 1000 + k, repeat(doc, 5) FROM t WHERE id = k;
        END LOOP;
    END $$;
});
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM t, compressx.value_storage('t', t.ctid, 'doc') v
    WHERE id > 1000 AND v.method = 'zstd'}), '40', 'the 40 values are zstd');
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM compressx.dictionaries WHERE octet_length(dict) = 1048576}),
	'40', '40 dictionaries of 1 MB');

my $status = q{regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
                            '%s:\s+(\d+) kB')};
sub kb { my $f = shift; return sprintf("(%s)[1]::bigint", sprintf($status, $f)); }
my $fields = join(', ', map { kb($_) . " AS \"$_\"" } qw(VmRSS VmHWM RssAnon RssShmem));

# one session: figures before, after the query, and after the cache shrank
sub measure
{
	my ($bound, $query) = @_;
	my $out = $node->safe_psql('postgres', qq{
	    SET compressx.dictionary_cache_memory = '$bound';
	    \\o /dev/null
	    SELECT count(*) FROM t WHERE id < 3;   -- warm the catalog caches
	    \\o
	    SELECT $fields;
	    \\o /dev/null
	    $query;
	    \\o
	    SELECT $fields;
	    SET compressx.dictionary_cache_memory = '1MB';
	    \\o /dev/null
	    SELECT length(doc) FROM t WHERE id = 1001;   -- the cache shrinks
	    \\o
	    SELECT $fields;
	});
	my @rows = map { [ split /\|/ ] } split /\n/, $out;
	my %d;
	@d{qw(rss hwm anon shmem)} = map { $rows[1][$_] - $rows[0][$_] } 0 .. 3;
	$d{anon_shrunk} = $rows[2][2] - $rows[0][2];
	$d{rss_shrunk} = $rows[2][0] - $rows[0][0];
	return \%d;
}

my $read_all = 'SELECT sum(length(doc)) FROM t WHERE id > 1000';
my $control = measure('1MB', 'SELECT count(md5(dict)) FROM compressx.dictionaries WHERE octet_length(dict) = 1048576');
diag(sprintf('control (md5 of the 40 dictionaries, no cache): VmRSS +%d kB, VmHWM +%d kB, RssAnon +%d kB, RssShmem +%d kB',
	@$control{qw(rss hwm anon shmem)}));
ok($control->{shmem} > 30 * 1024, 'reading the dictionaries maps their shared buffers');

for my $case ([ '1MB', 1024 ], [ '16MB', 16 * 1024 ], [ '64MB', 64 * 1024 ])
{
	my ($bound, $bound_kb) = @$case;
	my $m = measure($bound, $read_all);
	diag(sprintf('dictionary_cache_memory = %s: VmRSS +%d kB, VmHWM +%d kB (RssAnon +%d kB, RssShmem +%d kB); after the cache shrank to 1MB: RssAnon +%d kB, VmRSS +%d kB',
		$bound, @$m{qw(rss hwm anon shmem anon_shrunk rss_shrunk)}));
	ok($m->{anon} <= $bound_kb + 16 * 1024,
		"$bound: the backend's own memory grows by at most the bound + 16 MB ($m->{anon} kB)");
	# (before malloc_trim: 4.2 MB, 9.8 MB and 2.3 MB for the three bounds)
	ok($m->{anon_shrunk} <= 1024 + 3 * 1024,
		"$bound: and returns when the cache shrinks to 1 MB: at most 1 MB + 3 MB ($m->{anon_shrunk} kB)");
	ok($m->{hwm} <= $control->{hwm} + $bound_kb + 16 * 1024,
		"$bound: peak resident growth is that of reading the dictionaries plus at most the bound + 16 MB ($m->{hwm} kB, control $control->{hwm} kB)");
	ok($m->{rss} - $m->{shmem} <= $bound_kb + 16 * 1024,
		"$bound: resident growth other than shared buffers within the bound + 16 MB");
}

$node->stop;
done_testing();
