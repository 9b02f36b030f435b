# Corrupt stored bytes on disk (server stopped) in inline and out-of-line
# zstd values of a compressx table.  Reading a damaged row raises
# ERRCODE_DATA_CORRUPTED naming the relation and column; every other row
# stays readable; compressx.verify() reports exactly the damaged rows; the
# server keeps running.  Where the server has lz4, also a damaged byte of an
# lz4 value with a dictionary (its checksum).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = cx_disk_edit_node('corrupt');
# the lz4 checks need lz4 values: not on a server built without lz4
my $lz4 = cx_has_lz4($node);
my $no_lz4 = 'the server was built without lz4: no lz4 value with a dictionary';
$node->safe_psql('postgres', q{
    CREATE EXTENSION compressx;
    CREATE TABLE cxc (id integer PRIMARY KEY, body text) USING compressx;
    INSERT INTO cxc SELECT i, repeat('an inline zstd document ' || i || ' ', 60) FROM generate_series(1, 200) i;
    INSERT INTO cxc SELECT i, (SELECT string_agg(md5(k::text || i), '') FROM generate_series(1, 400) k)
    FROM generate_series(1001, 1010) i;
    CHECKPOINT;
});
$node->safe_psql('postgres', q{
    -- lz4 with a dictionary (format version 2, checksummed)
    CREATE TABLE cxl (id integer PRIMARY KEY, body text) USING compressx;
    SELECT compressx.set_column_codec('cxl', 'body', 'lz4');
    INSERT INTO cxl SELECT i, json_build_object('id', i, 'name', 'item ' || i, 'kind', 'kind ' || (i % 7),
                                                'note', 'a small json document of the catalogue, number ' || i)::text
    FROM generate_series(1, 2000) i;
    SELECT compressx.train_dictionary('cxl', 'body', 4096);
    VACUUM FULL cxl;
    CHECKPOINT;
}) if $lz4;
$node->safe_psql('postgres', cx_readable_sql('cxc'));
SKIP:
{
	skip $no_lz4, 1 unless $lz4;
	is($node->safe_psql('postgres', q{SELECT methods::text FROM compressx.column_stats('cxl') WHERE column_name = 'body'}),
		'{"lz4+dict": 2000}', 'lz4 values with a dictionary');
}
is($node->safe_psql('postgres', q{SELECT methods::text || '/' || external_values FROM compressx.column_stats('cxc') WHERE column_name = 'body'}),
    '{"zstd": 210}/10', 'inline and out-of-line zstd values');
is($node->safe_psql('postgres', q{SELECT count(*) FROM compressx.verify('cxc')}), '0', 'verify finds nothing before');

my $pgdata = $node->data_dir;
my $heapfile = $pgdata . '/' . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('cxc')});
my $toastfile = $pgdata . '/' . $node->safe_psql('postgres',
    q{SELECT pg_relation_filepath(reltoastrelid) FROM pg_class WHERE relname = 'cxc'});
my %ctid;
foreach my $id (5, 6)
{
    my $c = $node->safe_psql('postgres', "SELECT ctid FROM cxc WHERE id = $id");
    $c =~ /\((\d+),(\d+)\)/ or die "bad ctid $c";
    $ctid{$id} = [ $1, $2 ];
}
my ($lz4file, @lz4ctid);
if ($lz4)
{
	$lz4file = $pgdata . '/' . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('cxl')});
	my $lz4ctid = $node->safe_psql('postgres', "SELECT ctid FROM cxl WHERE id = 5");
	$lz4ctid =~ /\((\d+),(\d+)\)/ or die "bad ctid $lz4ctid";
	@lz4ctid = ($1, $2);
}
$node->stop;

sub flip_bytes
{
    my ($fh, $pos, $n) = @_;
    cx_write_at($fh, $pos, cx_read_at($fh, $pos, $n) ^ ("\xFF" x $n));
}

open(my $fh, '+<', $heapfile) or die "open $heapfile: $!";
binmode $fh;
# id 5: bytes inside the zstd frame (int4 id, then the 4-byte-header value:
# header 4, va_tcinfo 4, version/codec/flags 3, frame)
flip_bytes($fh, cx_tuple_data_offset($fh, @{ $ctid{5} }) + 4 + 11 + 12, 3);
# id 6: the format version byte
flip_bytes($fh, cx_tuple_data_offset($fh, @{ $ctid{6} }) + 4 + 8, 1);
close $fh;

# an out-of-line value: the middle of the first TOAST chunk on page 0
open($fh, '+<', $toastfile) or die "open $toastfile: $!";
binmode $fh;
flip_bytes($fh, cx_tuple_data_offset($fh, 0, 1) + 8 + 4 + 500, 4);
close $fh;

# lz4 with a dictionary, id 5: one byte of the lz4 block (int4 id, header 4,
# va_tcinfo 4, version/codec/flags/dictionary id/checksum 11, block)
if ($lz4)
{
	open($fh, '+<', $lz4file) or die "open $lz4file: $!";
	binmode $fh;
	flip_bytes($fh, cx_tuple_data_offset($fh, @lz4ctid) + 4 + 8 + 11 + 5, 1);
	close $fh;
}

$node->start;

my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT body FROM cxc WHERE id = 5");
like($err, qr/XX001: compressed value of column "body" of relation "cxc" is corrupt/,
    'inline damage: data_corrupted naming column and relation');
($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT body FROM cxc WHERE id = 6");
like($err, qr/XX001: .*column "body" of relation "cxc".*\n.*version/,
    'damaged header: data_corrupted naming column and relation');

# (aggregates read id through a subquery: an aggregate keeps a decoded copy
# of its first input row, which must not be a damaged one)
my $damaged = $node->safe_psql('postgres',
    q{SELECT string_agg(id::text, ',' ORDER BY id) FROM (SELECT id FROM cxc OFFSET 0) s WHERE NOT readable(id)});
like($damaged, qr/^5,6,10\d\d$/, 'exactly the two inline rows and one out-of-line row are unreadable');
my ($outid) = $damaged =~ /(10\d\d)$/;
($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT body FROM cxc WHERE id = $outid");
like($err, qr/XX001: .*column "body" of relation "cxc"/, 'out-of-line damage: data_corrupted naming column and relation');

is($node->safe_psql('postgres', q{SELECT count(md5(body)) FROM cxc WHERE id NOT IN (5, 6) AND readable(id)}),
    '207', 'every other row is readable');
is($node->safe_psql('postgres',
    q{SELECT string_agg(c.id::text, ',' ORDER BY c.id)
      FROM compressx.verify('cxc') v JOIN (SELECT ctid, id FROM cxc OFFSET 0) c ON c.ctid = v.ctid}),
    $damaged, 'verify reports exactly the damaged rows');
like($node->safe_psql('postgres', q{SELECT string_agg(DISTINCT column_name, ',') FROM compressx.verify('cxc')}),
    qr/^body$/, 'verify names the column');
SKIP:
{
	skip $no_lz4, 3 unless $lz4;
	($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT body FROM cxl WHERE id = 5");
	like($err, qr/XX001: .*column "body" of relation "cxl".*\n.*checksum/,
		'lz4 with a dictionary: the checksum catches a damaged byte, naming column and relation');
	is($node->safe_psql('postgres', q{SELECT count(md5(body)) FROM cxl WHERE id <> 5}), '1999',
		'the other lz4 values read');
	is($node->safe_psql('postgres', q{SELECT count(*) FROM compressx.verify('cxl')}), '1',
		'verify reports the damaged lz4 value');
}
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server keeps running');
ok(!$node->log_contains('terminated by signal'), 'no backend crashed');

$node->stop;
done_testing();
