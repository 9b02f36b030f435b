# A pgoutput consumer stuck on "invalid compression method id 2", and the
# recovery doc/logical-replication.md gives for it (issue 33, item 15).
#
# Debezium (plugin.name = pgoutput) asks for a slot whose plugin is named
# pgoutput, so a connector set up before the shadow plugins were enabled
# (or by someone who did not know of them) stops at the first zstd value
# of a compressx table, and its retries stop at the same change.  The
# documented recovery: put $libdir/compressx_decoders first on
# dynamic_library_path and reload; the same slot's next attempt decodes
# the change it stopped at.  Here, with the pgoutput protocol over a
# walsender (pg_recvlogical, as Debezium connects):
#  - a heap table and a compressx table get the same changes (inserts with
#    inline and out-of-line zstd values, in a column without settings and
#    one with its own codec and a dictionary; an UPDATE leaving the
#    out-of-line value unchanged and one changing it; REPLICA IDENTITY
#    FULL; a transaction spilled to disk; a DELETE), each statement on
#    both tables in one transaction, the heap table first;
#  - the consumer confirms the first transaction (small values), then
#    fails twice on the second, and the slot does not move;
#  - compressx.check_logical() names the slot and the recovery;
#  - after the recovery the same slot sends every transaction from the
#    one it stopped at, none before it (nothing lost, nothing repeated),
#    and the compressx table's change messages equal the heap table's,
#    value for value.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Digest::MD5 qw(md5_hex);
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

plan skip_all => $ENV{CX_SKIP_LOGICAL_DECODING} if $ENV{CX_SKIP_LOGICAL_DECODING};

my $node = PostgreSQL::Test::Cluster->new('dbz');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', q{
logical_decoding_work_mem = 64kB
autovacuum = off
});
$node->start;
cx_install_helpers($node);

# two tables of each kind, the same columns: h/c REPLICA IDENTITY DEFAULT,
# hf/cf FULL; c.s has its own codec (zstd 9) and, later, a dictionary
my $cols = 'id int PRIMARY KEY, small text, z text, s text, big text';
$node->safe_psql('postgres', qq{
    CREATE TABLE h ($cols);
    CREATE TABLE c ($cols) USING compressx;
    CREATE TABLE hf ($cols);
    CREATE TABLE cf ($cols) USING compressx;
    ALTER TABLE hf REPLICA IDENTITY FULL;
    ALTER TABLE cf REPLICA IDENTITY FULL;
    SELECT compressx.set_column_codec('c', 's', 'zstd', 9);
    SELECT compressx.set_column_codec('cf', 's', 'zstd', 9);
    CREATE PUBLICATION dbz_pub FOR TABLE h, c, hf, cf;
});

# Run each statement on the heap table, then on the compressx one, in one
# transaction: "%1\$s" is the table.
sub both
{
	my ($heap, $cx, @stmts) = @_;
	$node->safe_psql('postgres', join("\n", 'BEGIN;',
		(map { my $s = $_ =~ s/;?\s*$/;/r; (sprintf($s, $heap), sprintf($s, $cx)) } @stmts), 'COMMIT;'));
}
# row values: z inline (zstd), s and big out of line (300 md5s: heap's
# pglz does not compress them, so heap stores them out of line too)
my $row = q{%%1$s SELECT i, 'row ' || i, repeat('zstd inline ' || i || ' ', 40),
    (SELECT string_agg(md5('s' || k || '-' || i), ' ') FROM generate_series(1, 200) k),
    (SELECT string_agg(md5(k || '-' || i || '%s'), '') FROM generate_series(1, 300) k)
    FROM generate_series(%d, %d) i};
sub insert_rows
{
	my ($from, $to, $tag) = @_;
	return 'INSERT INTO ' . sprintf($row, $tag, $from, $to) . ';';
}

# the slot, as Debezium makes it (plugin pgoutput), before the shadow
# plugins are enabled
$node->safe_psql('postgres', "SELECT pg_create_logical_replication_slot('dbz', 'pgoutput')");
my %opts = ('proto_version' => '1', 'publication_names' => 'dbz_pub');

# transaction 1: small values only, which pgoutput alone decodes; the
# consumer receives and confirms it
both('h', 'c', q{INSERT INTO %1$s (id, small) VALUES (1, 'small')});
my $lsn1 = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
my $first = $node->pg_recvlogical_upto('postgres', 'dbz', $lsn1, $PostgreSQL::Test::Utils::timeout_default, %opts);
my @first = decode_pgoutput($first);
is(join(' ', map { "$_->{rel}:$_->{kind}" } grep { $_->{kind} =~ /^[IUD]$/ } @first), 'h:I c:I',
	'before any zstd value, plain pgoutput sends the first transaction');
my $confirmed = $node->safe_psql('postgres',
	"SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'dbz'");

# transactions 2 to 8; compressx stores zstd values, inline and out of line
both('h', 'c', insert_rows(2, 4, 'a'));
both('h', 'c', q{UPDATE %1$s SET small = 'updated' WHERE id = 2});
both('h', 'c', q{UPDATE %1$s SET big = reverse(big), s = 'short now' WHERE id = 3});
both('hf', 'cf', insert_rows(10, 13, 'f'), q{UPDATE %1$s SET small = 'full ' || id WHERE id IN (10, 11)},
	q{DELETE FROM %1$s WHERE id = 12});
both('h', 'c', insert_rows(100, 250, 'spill'));
$node->safe_psql('postgres', q{SELECT compressx.train_dictionary('c', 's', 4096)});
both('h', 'c', insert_rows(300, 302, 'dict'), q{DELETE FROM %1$s WHERE id = 4});
both('hf', 'cf', q{DELETE FROM %1$s WHERE id = 13});
my $end = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');

is($node->safe_psql('postgres', q{
    SELECT string_agg(column_name || ':' || (methods ? 'zstd')::text || ':' || (external_values > 0)::text, ' '
                      ORDER BY column_name)
    FROM compressx.column_stats('c') WHERE column_name IN ('z', 's', 'big')}),
	'big:true:true s:true:true z:true:false', 'c stores zstd values, s and big out of line');
is($node->safe_psql('postgres', q{
    SELECT dictionary IS NOT NULL FROM compressx.column_codec_settings('c') WHERE column_name = 's'}),
	't', 'c.s has a dictionary for the last rows');

# the consumer is stuck: each attempt fails at transaction 2, the slot
# does not move
foreach my $attempt (1, 2)
{
	my ($ret, $out, $err) = $node->pg_recvlogical_upto('postgres', 'dbz', $end,
		$PostgreSQL::Test::Utils::timeout_default, %opts);
	isnt($ret, 0, "attempt $attempt: pg_recvlogical fails");
	like($err, qr/invalid compression method id 2/, "attempt $attempt: on invalid compression method id 2");
	is($node->safe_psql('postgres',
		"SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'dbz'"),
		$confirmed, "attempt $attempt: the slot has not moved");
}
my ($rc, $out, $err) = $node->psql('postgres', q{
    SELECT count(*) FROM pg_logical_slot_peek_binary_changes('dbz', NULL, NULL,
        'proto_version', '1', 'publication_names', 'dbz_pub')});
like($err, qr/invalid compression method id 2/, 'the SQL functions fail on the same change');
like($err, qr/HINT:  .*dynamic_library_path.*reload.*same change/,
	'the warning before it tells how this slot resumes');
like($node->safe_psql('postgres', "SELECT slot_name || ': ' || problem FROM compressx.check_logical()"),
	qr/^dbz: plugin pgoutput cannot decode .*to keep this slot.*dynamic_library_path.*reload/,
	'check_logical() names the slot and how it resumes');

# the recovery, as documented
$node->safe_psql('postgres', q{
    ALTER SYSTEM SET dynamic_library_path = '$libdir/compressx_decoders:$libdir';
    SELECT pg_reload_conf();});
is($node->safe_psql('postgres', 'SELECT count(*) FROM compressx.check_logical()'), '0',
	'check_logical() has nothing to report');
my $stream = $node->pg_recvlogical_upto('postgres', 'dbz', $end, $PostgreSQL::Test::Utils::timeout_default, %opts);
my @msgs = decode_pgoutput($stream);
cmp_ok($node->safe_psql('postgres',
	"SELECT confirmed_flush_lsn >= '$end' FROM pg_replication_slots WHERE slot_name = 'dbz'"), 'eq', 't',
	'the slot has passed every change');
cmp_ok($node->safe_psql('postgres',
	"SELECT spill_txns FROM pg_stat_replication_slots WHERE slot_name = 'dbz'"), '>', 0,
	'a transaction was spilled to disk');

# every transaction from the one that failed, none before
my @txns;
foreach my $m (@msgs)
{
	push @txns, [] if $m->{kind} eq 'B';
	push @{ $txns[-1] }, $m if $m->{kind} =~ /^[IUD]$/;
}
is(scalar(@txns), 7, 'seven transactions after the recovery');
is(join(' ', map { "$_->{rel}:$_->{kind}:$_->{id}" } @{ $txns[0] }),
	'h:I:2 h:I:3 h:I:4 c:I:2 c:I:3 c:I:4', 'the first is the one the consumer stopped at');
ok(!grep({ $_->{id} == 1 } map { @$_ } @txns), 'nothing already confirmed is sent again');

# the compressx tables' messages equal the heap tables', value for value
my %seq;
foreach my $m (grep { $_->{kind} =~ /^[IUD]$/ } @msgs)
{
	(my $as = $m->{rel}) =~ s/^c/h/;
	push @{ $seq{ $m->{rel} =~ /^c/ ? 'cx' : 'heap' }{$as} }, $m->{text};
}
foreach my $t ('h', 'hf')
{
	my ($heap, $cx) = ($seq{heap}{$t}, $seq{cx}{$t});
	is(scalar(@$cx), scalar(@$heap), "$t: as many changes from compressx as from heap");
	is_deeply($cx, $heap, "$t: the same changes, value for value");
}
like(join("\n", @{ $seq{cx}{h} }), qr/^U N\[t:2,t:updated,t:[^,]*,u,u\]$/m,
	'an UPDATE leaving out-of-line values unchanged sends them as unchanged (u), as heap');
like(join("\n", @{ $seq{cx}{hf} }), qr/^D O\[t:13,t:row 13,t:[0-9a-f]{32},t:[0-9a-f]{32},t:[0-9a-f]{32}\]$/m,
	'a FULL identity DELETE sends the whole old row, as heap');
my @c_inserts = grep { $_->{kind} eq 'I' && $_->{rel} eq 'c' } @msgs;
is(scalar(@c_inserts), 3 + 151 + 3, 'every insert into c is sent');
# the values sent are the table's (the dictionary's rows too)
is(join('|', @{ (grep { $_->{id} == 300 } @c_inserts)[0]{cols} }),
	$node->safe_psql('postgres', q{SELECT concat_ws('|', id, small, z, s, big) FROM c WHERE id = 300}),
	'the decoded values are those stored');

# later changes go on
both('h', 'c', insert_rows(400, 400, 'later'));
my $later = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
is(scalar(grep { $_->{kind} eq 'I' }
		decode_pgoutput(scalar($node->pg_recvlogical_upto('postgres', 'dbz', $later,
			$PostgreSQL::Test::Utils::timeout_default, %opts)))), 2, 'later changes are sent');

done_testing();

# Decode pg_recvlogical's output of pgoutput (protocol 1) messages, each
# followed by a newline: a list of {kind, rel, id, text}, text naming the
# kind and every column ("t:<text>", "n" for NULL, "u" for unchanged; a
# long text by its md5), old (K/O) and new (N) tuples; cols: the new
# tuple's values.
sub decode_pgoutput
{
	my ($data) = @_;
	my ($pos, %relname, @out) = (0);
	my $take = sub { my ($fmt, $len) = @_; my @v = unpack($fmt, substr($data, $pos, $len)); $pos += $len; return @v; };
	my $cstring = sub { my $e = index($data, "\0", $pos); my $s = substr($data, $pos, $e - $pos); $pos = $e + 1; return $s; };
	my $tuple = sub {
		my ($n) = $take->('n', 2);
		my @cols;
		foreach (1 .. $n)
		{
			my ($k) = $take->('a', 1);
			if ($k eq 't' || $k eq 'b')
			{
				my ($len) = $take->('N', 4);
				push @cols, "$k:" . substr($data, $pos, $len);
				$pos += $len;
			}
			else { push @cols, $k; }
		}
		return \@cols;
	};
	while ($pos < length($data))
	{
		my ($kind) = $take->('a', 1);
		my %m = (kind => $kind);
		if ($kind eq 'B') { $pos += 20; }
		elsif ($kind eq 'C') { $pos += 25; }
		elsif ($kind eq 'O') { $pos += 8; $cstring->(); }
		elsif ($kind eq 'Y') { $pos += 4; $cstring->(); $cstring->(); }
		elsif ($kind eq 'R')
		{
			my ($relid) = $take->('N', 4);
			$cstring->();
			$relname{$relid} = $cstring->();
			my ($ident, $natts) = $take->('C n', 3);
			foreach (1 .. $natts) { $pos += 1; $cstring->(); $pos += 8; }
		}
		elsif ($kind eq 'T')
		{
			my ($n) = $take->('N', 4);
			$pos += 1 + 4 * $n;
		}
		elsif ($kind =~ /^[IUD]$/)
		{
			my ($relid) = $take->('N', 4);
			$m{rel} = $relname{$relid};
			my @parts;
			while ($pos < length($data) && substr($data, $pos, 1) =~ /^[KON]$/)
			{
				my ($which) = $take->('a', 1);
				my $t = $tuple->();
				# long values by their md5, to keep diagnostics short
				push @parts, "$which\[" . join(',', map { length($_) > 80 ? 't:' . md5_hex(substr($_, 2)) : $_ } @$t) . ']';
				$m{id} //= ($t->[0] =~ /^t:(\d+)$/)[0];
				$m{cols} = [ map { s/^t://r } @$t ] if $which eq 'N';
				last if $which eq 'N' || $kind eq 'D';
			}
			$m{text} = "$kind " . join(' ', @parts);
		}
		else { die "unexpected pgoutput message '$kind' at offset " . ($pos - 1); }
		push @out, \%m;
		# pg_recvlogical writes a newline after each message
		$pos++ if $pos < length($data) && substr($data, $pos, 1) eq "\n";
	}
	return @out;
}
