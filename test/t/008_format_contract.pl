# The stored format as an on-disk contract (src/storage/format.h).
#
# 1. What compressx writes follows the attribution rule: every method-2
#    value in the row is compressx's inline form (version 1, codec zstd,
#    known flags, the zstd frame magic at its fixed offset) or a 24-byte
#    reference naming the table's TOAST relation, and every TOAST body a
#    reference names starts with that header and the magic; with and
#    without a dictionary, values compressed in one call and streamed.
# 2. Method-2 values compressx did not write, put on disk with the server
#    stopped: a plain zstd frame right after va_tcinfo (one way core might
#    use method bits 2), a "long" header (method-id byte 2, then a frame),
#    a format version this compressx does not know (as a newer compressx
#    would write), a reference whose TOAST body is not compressx's, and a
#    reference naming another table's TOAST value.  Reading one raises
#    data_corrupted naming table and column and saying it was not written
#    by compressx (not core's "invalid compression method"); verify() lists
#    them as unattributable, apart from a corrupt value of compressx's own;
#    every other row stays readable; VACUUM FULL refuses them instead of
#    copying them; deleting a row never deletes through a reference
#    compressx cannot attribute (it deleted another table's TOAST value).
# 3. A value of compressx's own whose va_tcinfo declares a raw size its
#    stored bytes cannot produce (about 1 GB): reading it is data_corrupted
#    before anything allocates that size (it was "invalid memory alloc
#    request size" from the allocation of the declared size).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = cx_disk_edit_node('format');
$node->safe_psql('postgres', q{
    CREATE EXTENSION compressx;
    CREATE TABLE cxf (id integer PRIMARY KEY, body text) USING compressx;
    SELECT compressx.set_column_codec('cxf', 'body', 'zstd');
    INSERT INTO cxf SELECT i, repeat('an inline zstd document ' || i || ' ', 60) FROM generate_series(1, 100) i;
    INSERT INTO cxf SELECT i, (SELECT string_agg(md5(k::text || i), '') FROM generate_series(1, 400) k)
    FROM generate_series(1001, 1004) i;
    -- above 128 kB: compressed in streamed chunks
    INSERT INTO cxf SELECT 2001, (SELECT string_agg(md5(k::text), '') FROM generate_series(1, 6000) k);
    -- a heap table with a TOAST value of its own
    CREATE TABLE other (id integer, t text);
    ALTER TABLE other ALTER COLUMN t SET STORAGE EXTERNAL;
    INSERT INTO other SELECT 1, (SELECT string_agg(md5(k::text), '') FROM generate_series(1, 300) k);
});
$node->safe_psql('postgres', cx_readable_sql('cxf'));
$node->safe_psql('postgres', cx_dict_table_sql('cxd'));
# a value compressed with the dictionary that goes out of line
$node->safe_psql('postgres', q{
    INSERT INTO cxd SELECT 5000, (SELECT string_agg(json_build_object('id', k, 'note', md5(k::text))::text, ',')
                                  FROM generate_series(1, 300) k);
    CHECKPOINT;
});
is($node->safe_psql('postgres', q{SELECT methods::text || '/' || external_values FROM compressx.column_stats('cxf') WHERE column_name = 'body'}),
    '{"zstd": 105}/5', 'cxf: inline and out-of-line zstd values');
is($node->safe_psql('postgres', q{SELECT count(*) FROM compressx.dictionaries d JOIN pg_class c ON c.oid = d.relid WHERE c.relname = 'cxd'}),
    '1', 'cxd has a dictionary');
is($node->safe_psql('postgres', q{SELECT external_values FROM compressx.column_stats('cxd') WHERE column_name = 'doc'}),
    '1', 'cxd: one out-of-line value');
is($node->safe_psql('postgres', q{SELECT count(*) FROM compressx.verify('cxf')}), '0', 'verify finds nothing before');
my $other_md5 = $node->safe_psql('postgres', 'SELECT md5(t) FROM other');

my $pgdata = $node->data_dir;
my %file;
my %toastoid;
foreach my $rel ('cxf', 'cxd', 'other')
{
    $file{$rel} = $pgdata . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$rel')");
    $file{"$rel toast"} = $pgdata . '/' . $node->safe_psql('postgres',
        "SELECT pg_relation_filepath(reltoastrelid) FROM pg_class WHERE relname = '$rel'");
    $toastoid{$rel} = $node->safe_psql('postgres', "SELECT reltoastrelid FROM pg_class WHERE relname = '$rel'");
}
my ($other_valueid) = $node->safe_psql('postgres',
    "SELECT DISTINCT chunk_id FROM pg_toast.pg_toast_" . $node->safe_psql('postgres', q{SELECT 'other'::regclass::oid}));
$node->stop;

my $zstd_magic = "\x28\xB5\x2F\xFD";

# 1. The rule holds for everything compressx wrote.  Rows are (integer,
# text): the text value starts 4 bytes into the tuple's data.
foreach my $rel ('cxf', 'cxd')
{
    my ($inline, $dict, $refs, $bad) = (0, 0, 0, 0);
    my %refd;
    foreach my $t (cx_file_tuples($file{$rel}))
    {
        my $v = substr($t->[3], 4);
        my $hdr = unpack('V', $v);
        next unless ($hdr & 3) == 2;    # 4-byte header, compressed
        my $size = $hdr >> 2;
        next unless (unpack('V', substr($v, 4, 4)) >> 30) == 2;    # method bits 2
        my ($ver, $codec, $flags) = unpack('CCC', substr($v, 8, 3));
        if ($flags == 1)
        {
            my ($pad, $len, $valueid, $toastrelid) = unpack('CVVV', substr($v, 11, 13));
            $refs++;
            $refd{$valueid} = 1;
            $bad++ unless $size == 24 && $ver == 1 && $codec == 3 && $pad == 0 && $toastrelid == $toastoid{$rel};
        }
        else
        {
            my $at = $flags == 2 ? 15 : 11;
            $inline++;
            $dict++ if $flags == 2;
            $bad++ unless $ver == 1 && $codec == 3 && ($flags == 0 || $flags == 2)
                && substr($v, $at, 4) eq $zstd_magic;
        }
    }
    # the TOAST bodies: chunk 0 of every referenced value
    my $bodies = 0;
    foreach my $t (cx_file_tuples($file{"$rel toast"}))
    {
        my ($valueid, $seq) = unpack('VV', $t->[3]);
        next unless $seq == 0 && $refd{$valueid};
        my $b0 = unpack('C', substr($t->[3], 8, 1));
        my $body = substr($t->[3], ($b0 & 1) ? 9 : 12);
        my ($ver, $codec, $flags) = unpack('CCC', $body);
        $bodies++;
        $bad++ unless $ver == 1 && $codec == 3 && ($flags == 0 || $flags == 2)
            && substr($body, $flags == 2 ? 7 : 3, 4) eq $zstd_magic;
    }
    ok($inline > 0 && $refs > 0 && $bodies == $refs && ($rel ne 'cxd' || $dict > 0),
        "$rel: inline values ($inline, $dict with a dictionary), references ($refs) and bodies ($bodies) seen");
    is($bad, 0, "$rel: every stored value follows the attribution rule");
}

# 2. Values compressx did not write.
my %valpos;
# the rows by their id (the first 4 bytes of their data); %valpos: where their
# text value starts in the heap file
foreach my $t (cx_file_tuples($file{cxf}))
{
    my $id = unpack('l', $t->[3]);
    $valpos{$id} = $t->[2] + 4 if grep { $_ == $id } (5, 6, 7, 8, 9, 1001, 1002, 1003);
}
is(scalar(keys %valpos), 8, 'the rows to rewrite are found');

open(my $fh, '+<', $file{cxf}) or die "open $file{cxf}: $!";
binmode $fh;

# rewrite the value at $pos as header | va_tcinfo | $body (no longer than
# before: the value is the row's last attribute)
sub rewrite_value
{
    my ($pos, $body) = @_;
    my $old = cx_read_at($fh, $pos, 8);
    my $oldsize = unpack('V', $old) >> 2;
    die "longer than before" if 8 + length($body) > $oldsize;
    cx_write_at($fh, $pos, pack('V', ((8 + length($body)) << 2) | 2) . substr($old, 4, 4) . $body);
}

sub stored_value
{
    my ($pos) = @_;
    return cx_read_at($fh, $pos, unpack('V', cx_read_at($fh, $pos, 4)) >> 2);
}

# (a) core's plain zstd layout: the frame right after va_tcinfo
my $v = stored_value($valpos{5});
rewrite_value($valpos{5}, substr($v, 11));
# (b) a "long" header: method-id byte 2 (zstd), then the frame
$v = stored_value($valpos{6});
rewrite_value($valpos{6}, "\x02" . substr($v, 11));
# (c) format version 3, which this compressx does not know
$v = stored_value($valpos{7});
rewrite_value($valpos{7}, "\x03" . substr($v, 9));
# a corrupt value of compressx's own: bytes inside its frame
$v = stored_value($valpos{8});
rewrite_value($valpos{8}, substr($v, 8, 20) . (substr($v, 28, 3) ^ "\xFF\xFF\xFF") . substr($v, 31));
# (e) a reference naming the TOAST value of another table
$v = stored_value($valpos{1002});
my $ref1001_valueid = unpack('V', substr(stored_value($valpos{1001}), 16, 4));
rewrite_value($valpos{1002}, substr($v, 8, 8) . pack('VV', $other_valueid, $toastoid{other}));
# 3. raw size bits all ones (method bits 2 kept): inline 9, reference 1003
cx_write_at($fh, $valpos{$_} + 4, pack('V', 0xBFFFFFFF)) foreach (9, 1003);
close $fh;

# (d) a reference whose TOAST body does not start with compressx's header:
# version byte 3 in the body of 1001
my ($chunk) = grep { my ($id, $seq) = unpack('VV', $_->[3]); $id == $ref1001_valueid && $seq == 0 }
  cx_file_tuples($file{'cxf toast'});
ok(defined $chunk, 'the TOAST body of 1001 is found');
open($fh, '+<', $file{'cxf toast'}) or die "open: $!";
binmode $fh;
my $b0 = unpack('C', substr($chunk->[3], 8, 1));
cx_write_at($fh, $chunk->[2] + (($b0 & 1) ? 9 : 12), "\x03");
close $fh;

$node->start;

my %label = (5 => 'plain zstd frame after va_tcinfo', 6 => 'long header, method id 2',
    7 => 'unknown format version', 1001 => 'reference to a foreign body',
    1002 => 'reference to another table');
foreach my $id (5, 6, 7, 1001, 1002)
{
    my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT body FROM cxf WHERE id = $id");
    like($err, qr/XX001: compressed value of column "body" of relation "cxf" was not written by compressx/,
        "$label{$id}: data_corrupted naming column and relation, not written by compressx");
    unlike($err, qr/invalid compression method/, "$label{$id}: not core's error");
}
my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT body FROM cxf WHERE id = 7");
like($err, qr/DETAIL: .*version 3.*newer compressx/, 'an unknown version: the detail says a newer compressx may have written it');
($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT body FROM cxf WHERE id = 8");
like($err, qr/XX001: compressed value of column "body" of relation "cxf" is corrupt/, 'damage inside a frame is corruption');
foreach my $id (9, 1003)
{
    my $what = $id == 9 ? 'inline' : 'reference';
    foreach my $q ("SELECT md5(body) FROM cxf WHERE id = $id", "SELECT id FROM cxf WHERE id = $id ORDER BY body")
    {
        ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$q");
        like($err, qr/XX001: compressed value of column "body" of relation "cxf" is corrupt.*\n.*declares 1073741823 bytes, implausible/,
            "$what declaring 1 GB ($q): data_corrupted before allocating it");
        unlike($err, qr/invalid memory alloc request size/, "$what declaring 1 GB ($q): no allocation of the declared size");
    }
}

is($node->safe_psql('postgres',
    q{SELECT string_agg(id::text, ',' ORDER BY id) FROM (SELECT id FROM cxf OFFSET 0) s WHERE NOT readable(id)}),
    '5,6,7,8,9,1001,1002,1003', 'exactly the rewritten rows are unreadable');
is($node->safe_psql('postgres', q{SELECT count(md5(body)) FROM cxf WHERE id NOT IN (5, 6, 7, 8, 9, 1001, 1002, 1003)}),
    '97', 'every other row is readable');

my $verify = q{SELECT string_agg(c.id::text, ',' ORDER BY c.id)
      FROM compressx.verify('cxf') v JOIN (SELECT ctid, id FROM cxf OFFSET 0) c ON c.ctid = v.ctid};
is($node->safe_psql('postgres', $verify . q{ WHERE v.problem LIKE 'method-2 value not written by compressx (unattributable):%'}),
    '5,6,7,1001,1002', 'verify lists the values compressx did not write as unattributable');
is($node->safe_psql('postgres', $verify . q{ WHERE v.problem LIKE 'compressed value of column "body" of relation "cxf" is corrupt:%'}),
    '8,9,1003', 'verify lists the corrupt values apart');
is($node->safe_psql('postgres', q{SELECT count(*) FROM compressx.verify('cxf') WHERE column_name IS NULL}),
    '1', 'the TOAST value 1002 referenced before is an orphan now');

# a rewrite refuses such values rather than copying them
($ret, $out, $err) = $node->psql('postgres', 'VACUUM FULL cxf');
like($err, qr/ERROR:  compressed value of column "body" of relation "cxf" was not written by compressx/,
    'VACUUM FULL refuses a value compressx did not write');
is($node->safe_psql('postgres', q{SELECT count(md5(body)) FROM cxf WHERE id NOT IN (5, 6, 7, 8, 9, 1001, 1002, 1003)}),
    '97', 'every other row is still readable');

# deleting the row must not delete through the foreign reference
$node->safe_psql('postgres', 'DELETE FROM cxf WHERE id = 1002');
($ret, $out, $err) = $node->psql('postgres', 'SELECT md5(t) FROM other');
is($out . $err, $other_md5, 'deleting a row with a reference to another table leaves that table\'s value');

is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server keeps running');
ok(!$node->log_contains('terminated by signal'), 'no backend crashed');

$node->stop;
done_testing();
