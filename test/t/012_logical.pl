# Logical replication of compressx tables to a stock subscriber (heap
# tables, no compressx): values in pglz, lz4 (pglz again on a server built
# without lz4), zstd inline and out of line,
# with a dictionary, NULLs, a partitioned table published through its root.
#
#  - Subscription p1 uses a slot made on the publisher with plugin compressx
#    (pgoutput's protocol) and copies while the publisher is quiet.
#  - Then the workload: INSERT, UPDATE of a small column (big values
#    unchanged), UPDATE of the big value, DELETE under REPLICA IDENTITY
#    DEFAULT, FULL and USING INDEX (out-of-line key), TRUNCATE, a streamed
#    transaction larger than logical_decoding_work_mem, two-phase commit, a
#    dictionary trained meanwhile, recompress_table and VACUUM FULL.
#  - Subscription p2 uses the shadow plugins ($libdir/compressx_decoders
#    first on dynamic_library_path): created as any subscription, its copy
#    runs while pgbench writes zstd values.
#  - A publisher crash in the middle of a streamed transaction.
# After each step the subscribers' tables equal the publisher's (checksums).
# Also: test_decoding gets stuck without the shadow and check_logical()
# says so; compressx_test_decoding and (with the shadow) test_decoding
# decode; pg_recvlogical with plugin compressx.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

# set by test/run_version_suite.sh where the server's minor release is
# older than the headers compressx was built with and the reorder buffer's
# structures differ between them (17: a 17.10 server, 17.12 headers)
plan skip_all => $ENV{CX_SKIP_LOGICAL_DECODING} if $ENV{CX_SKIP_LOGICAL_DECODING};

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->append_conf('postgresql.conf', q{
logical_decoding_work_mem = 64kB
max_prepared_transactions = 10
max_wal_senders = 20
max_replication_slots = 20
wal_sender_timeout = 0
});
$pub->start;
# column l: lz4, or pglz on a server built without lz4
my $other = cx_other_codec($pub);
# 18 (and 15.20) check slot plugins against output_plugin_libraries
if ($pub->safe_psql('postgres',
	"SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'") eq '1')
{
	$pub->append_conf('postgresql.conf',
		"output_plugin_libraries = 'pgoutput, test_decoding, compressx, compressx_test_decoding'\n");
	$pub->restart;
}
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->append_conf('postgresql.conf', q{
max_prepared_transactions = 10
max_logical_replication_workers = 8
max_worker_processes = 16
wal_receiver_timeout = 0
});
$sub->start;

my $big = q{(SELECT string_agg(md5(k::text || i || '%s'), '') FROM generate_series(1, 100) k)};
sub rows_sql
{
	my ($from, $to, $tag) = @_;
	my $b = sprintf($big, $tag);
	return qq{
	INSERT INTO docs SELECT i, 'row ' || i, repeat('pglz $tag ' || i, 60), repeat('lz4 $tag ' || i, 60),
	       repeat('zstd $tag ' || i || ' ', 50),
	       CASE WHEN i % 5 = 0 THEN $b END,
	       json_build_object('id', i, 'kind', 'kind ' || i % 7, 'note', 'document $tag ' || i)::text,
	       CASE WHEN i % 3 = 0 THEN NULL ELSE 'n' || i END
	FROM generate_series($from, $to) i;
	INSERT INTO full_t SELECT i, repeat('full $tag ' || i || ' ', 40), CASE WHEN i % 4 = 0 THEN $b END
	FROM generate_series($from, $to) i;
	INSERT INTO parted SELECT i, i % 2, repeat('part $tag ' || i || ' ', 40), CASE WHEN i % 6 = 0 THEN $b END
	FROM generate_series($from, $to) i;
	};
}

my $ddl_pub = qq{
    CREATE TABLE docs (id int PRIMARY KEY, small text, p text COMPRESSION pglz,
                       l text COMPRESSION $other, z text, big text, d text, n text) USING compressx;
    CREATE TABLE full_t (id int, body text, big text) USING compressx;
    ALTER TABLE full_t REPLICA IDENTITY FULL;
    CREATE TABLE keyed (k text NOT NULL, v int) USING compressx;
    CREATE UNIQUE INDEX keyed_k ON keyed (k);
    ALTER TABLE keyed REPLICA IDENTITY USING INDEX keyed_k;
    CREATE TABLE parted (id int, part int, body text, big text, PRIMARY KEY (id, part))
        PARTITION BY LIST (part);
    CREATE TABLE parted_0 PARTITION OF parted FOR VALUES IN (0) USING compressx;
    CREATE TABLE parted_1 PARTITION OF parted FOR VALUES IN (1) USING compressx;
};
my $ddl_sub = q{
    CREATE TABLE docs (id int PRIMARY KEY, small text, p text, l text, z text, big text, d text, n text);
    CREATE TABLE full_t (id int, body text, big text);
    ALTER TABLE full_t REPLICA IDENTITY FULL;
    CREATE TABLE keyed (k text NOT NULL, v int);
    CREATE UNIQUE INDEX keyed_k ON keyed (k);
    ALTER TABLE keyed REPLICA IDENTITY USING INDEX keyed_k;
    CREATE TABLE parted (id int, part int, body text, big text, PRIMARY KEY (id, part));
};
cx_install_helpers($pub);
$pub->safe_psql('postgres', $ddl_pub . rows_sql(1, 300, 'a'));
$pub->safe_psql('postgres',
	'CREATE PUBLICATION pub FOR TABLE docs, full_t, keyed, parted WITH (publish_via_partition_root = true)');
is($pub->safe_psql('postgres', q{
    SELECT string_agg(column_name || ':' || methods::text, ' ' ORDER BY column_name)
    FROM compressx.column_stats('docs') WHERE column_name IN ('p', 'l', 'z')}),
	qq/l:{"$other": 300} p:{"pglz": 300} z:{"zstd": 300}/, "the publisher stores pglz, $other and zstd");
cmp_ok($pub->safe_psql('postgres',
	"SELECT external_values FROM compressx.column_stats('docs') WHERE column_name = 'big'"),
	'>', 0, 'and zstd values out of line');

my @tables = qw(docs full_t keyed parted);
sub state_of
{
	my ($node, $db) = @_;
	return join(' ', map {
		$_ . '=' . $node->safe_psql($db,
			"SELECT count(*) || '/' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '-') FROM $_ t")
	} @tables);
}
sub same_ok
{
	my ($label, @dbs) = @_;
	my $want = state_of($pub, 'postgres');
	foreach my $db (@dbs)
	{
		$pub->wait_for_catchup("sub_$db");
		is(state_of($sub, $db), $want, "$label: subscriber $db equals the publisher");
	}
}
my $connstr = $pub->connstr . ' dbname=postgres';

# A test_decoding slot made now gets stuck at the first zstd value it must
# print; check_logical() names it.
$pub->safe_psql('postgres', q{
    SELECT pg_create_logical_replication_slot('plain_td', 'test_decoding');
    SELECT pg_create_logical_replication_slot('cx_td', 'compressx_test_decoding');
    INSERT INTO docs (id, z) VALUES (100000, repeat('decoded by the wrapper ', 30));
    DELETE FROM docs WHERE id = 100000;
});
my ($rc, $out, $err) = $pub->psql('postgres',
	"SELECT count(*) FROM pg_logical_slot_get_changes('plain_td', NULL, NULL)");
like($err, qr/invalid compression method id 2/, 'test_decoding alone cannot print a zstd value');
like($err, qr/WARNING:  logical decoding slot "plain_td" with output plugin "test_decoding" meets a compressx table/,
	'compressx warns first, naming the slot and its plugin');
is($pub->safe_psql('postgres', 'SELECT slot_name FROM compressx.check_logical()'),
	'plain_td', 'check_logical() names the slot whose plugin cannot decode');
like($pub->safe_psql('postgres',
	"SELECT string_agg(data, E'\\n') FROM pg_logical_slot_get_changes('cx_td', NULL, NULL)"),
	qr/INSERT: id\[integer\]:100000 .* z\[text\]:'(decoded by the wrapper ){30}'/,
	'compressx_test_decoding prints the zstd value');
$pub->safe_psql('postgres', "SELECT pg_drop_replication_slot('plain_td')");
# messages pass through, compressx's own do not; an old row's out-of-line
# value (REPLICA IDENTITY FULL) comes from compressx's message
$pub->safe_psql('postgres', q{
    SELECT pg_logical_emit_message(true, 'user.prefix', 'hello');
    DELETE FROM full_t WHERE id = 4;});
my $td = $pub->safe_psql('postgres',
	"SELECT string_agg(data, E'\\n') FROM pg_logical_slot_get_changes('cx_td', NULL, NULL)");
like($td, qr/message: transactional: 1 prefix: user\.prefix, sz: 5 content:hello/,
	'a logical message passes through the wrapper');
like($td, qr/DELETE: id\[integer\]:4 body\[text\]:'(full a 4 ){40}' big\[text\]:'[0-9a-f]{3200}'/,
	'the old row of a FULL identity DELETE has its out-of-line value decoded');
unlike($td, qr/compressx\.body/, "compressx's own messages are not passed on");
$pub->safe_psql('postgres', "SELECT pg_drop_replication_slot('cx_td')");

# Anyone may emit a message with compressx's prefix.  A role that may only
# update another column forges the body of a value it cannot read (its
# TOAST value id and stored length known): the forged bytes never reach
# the output, under REPLICA IDENTITY DEFAULT (the value is unchanged) or
# FULL (compressx's own message for the old row comes later and wins).
$pub->safe_psql('postgres', q{
    CREATE TABLE forge_t (id int PRIMARY KEY, small text, secret text) USING compressx;
    INSERT INTO forge_t VALUES (1, 'a', (SELECT string_agg(md5(k::text), '') FROM generate_series(1, 100) k));
    CREATE ROLE mallory;
    GRANT SELECT (id, small), UPDATE (small) ON forge_t TO mallory;
    SELECT pg_create_logical_replication_slot('forge_td', 'compressx_test_decoding');});
my $toast = $pub->safe_psql('postgres', "SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'forge_t'");
my ($toastrelid, $valueid, $stored) = split /\|/, $pub->safe_psql('postgres',
	"SELECT '$toast'::regclass::oid, chunk_id, sum(octet_length(chunk_data)) FROM $toast GROUP BY chunk_id");
# version 1, codec zstd, no flags; a zstd frame of 3200 'F's (one RLE block);
# a skippable frame padding it to the stored length
my $frame = pack('V C V', 0xFD2FB528, 0xA0, 3200) . substr(pack('V', (3200 << 3) | (1 << 1) | 1), 0, 3) . 'F';
my $body = pack('C C C', 1, 3, 0) . $frame;
$body .= pack('V V', 0x184D2A50, $stored - length($body) - 8) . ("\0" x ($stored - length($body) - 8));
my $forged = unpack('H*', pack('C V V', 1, $toastrelid, $valueid) . $body);
foreach my $ident ('DEFAULT', 'FULL')
{
	$pub->safe_psql('postgres', "ALTER TABLE forge_t REPLICA IDENTITY $ident");
	$pub->safe_psql('postgres', qq{
	    SET ROLE mallory;
	    BEGIN;
	    SELECT pg_logical_emit_message(true, 'compressx.body', '\\x$forged'::bytea);
	    UPDATE forge_t SET small = small || 'b';
	    COMMIT;});
	my $out = $pub->safe_psql('postgres',
		"SELECT string_agg(data, E'\\n') FROM pg_logical_slot_get_changes('forge_td', NULL, NULL)");
	unlike($out, qr/FFFFFFFF/, "REPLICA IDENTITY $ident: a forged body message is not used");
	like($out, $ident eq 'FULL' ? qr/old-key: .*secret\[text\]:'[0-9a-f]{3200}'/
		: qr/new-tuple: .*secret\[text\]:unchanged-toast-datum|UPDATE: id\[integer\]:1 small\[text\]:'ab' secret\[text\]:unchanged-toast-datum/,
		"REPLICA IDENTITY $ident: the value is sent as it is stored");
}
$pub->safe_psql('postgres', "SELECT pg_drop_replication_slot('forge_td')");

# p1: slot with plugin compressx, copy while quiet
$sub->safe_psql('postgres', 'CREATE DATABASE p1');
$sub->safe_psql('p1', $ddl_sub);
$pub->safe_psql('postgres', "SELECT pg_create_logical_replication_slot('sub_p1', 'compressx')");
$sub->safe_psql('p1', qq{
    CREATE SUBSCRIPTION sub_p1 CONNECTION '$connstr' PUBLICATION pub
    WITH (create_slot = false, slot_name = 'sub_p1', streaming = on, two_phase = true)});
$sub->wait_for_subscription_sync($pub, 'sub_p1', 'p1');
same_ok('initial copy', 'p1');

# the workload, one transaction per statement
$pub->safe_psql('postgres', rows_sql(301, 500, 'b'));
same_ok('INSERT', 'p1');
$pub->safe_psql('postgres', q{
    UPDATE docs SET small = 'updated ' || id WHERE id % 5 = 0;
    UPDATE parted SET body = body || ' x' WHERE id % 6 = 0;});
same_ok('UPDATE of a small column, big values unchanged', 'p1');
$pub->safe_psql('postgres', sprintf(q{
    UPDATE docs SET big = %s, z = 'z' || id WHERE id %% 10 = 0;
    UPDATE parted SET big = %s WHERE id %% 4 = 0;},
	sprintf($big, 'c') =~ s/\bi\b/id/gr, sprintf($big, 'c') =~ s/\bi\b/id/gr));
same_ok('UPDATE of the big value', 'p1');
$pub->safe_psql('postgres', 'DELETE FROM docs WHERE id % 13 = 0; DELETE FROM parted WHERE id % 13 = 0');
same_ok('DELETE, REPLICA IDENTITY DEFAULT', 'p1');
# Run $code while p1 is disabled, so its slot decodes the changes only
# after VACUUM has removed the TOAST rows of deleted values: their bodies
# then come from compressx's messages alone.
sub while_p1_stopped
{
	my ($code) = @_;
	$sub->safe_psql('p1', 'ALTER SUBSCRIPTION sub_p1 DISABLE');
	$pub->poll_query_until('postgres',
		"SELECT NOT active FROM pg_replication_slots WHERE slot_name = 'sub_p1'")
	  or die 'sub_p1 did not stop';
	$code->();
	$sub->safe_psql('p1', 'ALTER SUBSCRIPTION sub_p1 ENABLE');
}
while_p1_stopped(sub {
	my $before = $pub->safe_psql('postgres', "SELECT toast_values('full_t')");
	$pub->safe_psql('postgres', q{
	    UPDATE full_t SET body = 'changed ' || id WHERE id % 8 = 0;
	    UPDATE full_t SET id = -id WHERE id % 12 = 0;
	    DELETE FROM full_t WHERE id % 9 = 0;});
	$pub->safe_psql('postgres', 'VACUUM full_t');
	cmp_ok($pub->safe_psql('postgres', "SELECT toast_values('full_t')"), '<', $before,
		'VACUUM removed the TOAST rows of deleted values before decoding');
});
same_ok('UPDATE and DELETE, REPLICA IDENTITY FULL', 'p1');
$pub->safe_psql('postgres', q{
    SET compressx.inline_max = 100;
    INSERT INTO keyed SELECT (SELECT string_agg(md5(k::text || i), '') FROM generate_series(1, 12) k), i
    FROM generate_series(1, 50) i;});
is($pub->safe_psql('postgres',
	"SELECT external_values FROM compressx.column_stats('keyed') WHERE column_name = 'k'"),
	'50', 'the replica identity key is stored out of line');
while_p1_stopped(sub {
	$pub->safe_psql('postgres', q{
	    SET compressx.inline_max = 100;
	    UPDATE keyed SET v = -v WHERE v % 2 = 0;
	    UPDATE keyed SET k = k || 'x' WHERE v % 5 = 0;
	    DELETE FROM keyed WHERE v % 7 = 0;
	    VACUUM keyed;});
});
same_ok('REPLICA IDENTITY USING INDEX on an out-of-line key', 'p1');
$pub->safe_psql('postgres', 'TRUNCATE full_t');
$pub->safe_psql('postgres', rows_sql(501, 520, 'd') =~ s/INSERT INTO (docs|parted)[^;]*;//gr);
same_ok('TRUNCATE', 'p1');

# larger than logical_decoding_work_mem: streamed (streaming = on)
$pub->safe_psql('postgres', rows_sql(1001, 3000, 'e'));
same_ok('a streamed transaction', 'p1');

# two-phase
$pub->safe_psql('postgres', 'BEGIN;' . rows_sql(3001, 3050, 'f') . "PREPARE TRANSACTION 'tp';");
$pub->safe_psql('postgres', "COMMIT PREPARED 'tp'");
same_ok('two-phase commit', 'p1');

# a dictionary trained while the subscription runs, used at once
$pub->safe_psql('postgres', q{
    BEGIN;
    SELECT compressx.set_column_codec('docs', 'd', 'zstd', 3, 16);
    SELECT compressx.train_dictionary('docs', 'd', 2048);
    UPDATE docs SET d = d || ' ' WHERE id % 3 = 0;
    COMMIT;});
is($pub->safe_psql('postgres', q{
    SELECT s.dictionary IS NOT NULL AND c.methods ? 'zstd'
    FROM compressx.column_codec_settings('docs') s
    JOIN compressx.column_stats('docs') c USING (column_name) WHERE column_name = 'd'}),
	't', 'values are stored with the dictionary, trained in the same transaction');
$pub->safe_psql('postgres', rows_sql(3051, 3100, 'g'));
same_ok('a dictionary trained meanwhile', 'p1');

# rewrites replicate nothing; later changes still find their rows
$pub->safe_psql('postgres', q{
    SELECT compressx.recompress_table('docs', 'zstd', 9);
    VACUUM FULL parted_0;
    VACUUM FULL docs;
    UPDATE docs SET small = 'after rewrite' WHERE id % 11 = 0;
    DELETE FROM docs WHERE id % 17 = 0;});
same_ok('recompress_table and VACUUM FULL', 'p1');

# p2: the shadow plugins; the copy runs while pgbench writes zstd values
$pub->safe_psql('postgres',
	q{ALTER SYSTEM SET dynamic_library_path = '$libdir/compressx_decoders:$libdir'; SELECT pg_reload_conf();});
$pub->safe_psql('postgres', q{
    SELECT pg_create_logical_replication_slot('shadow_td', 'test_decoding');
    INSERT INTO docs (id, z) VALUES (100001, repeat('decoded by the shadow ', 30));});
like($pub->safe_psql('postgres',
	"SELECT string_agg(data, E'\\n') FROM pg_logical_slot_get_changes('shadow_td', NULL, NULL)"),
	qr/z\[text\]:'(decoded by the shadow ){30}'/, 'test_decoding, shadowed, prints the zstd value');
is($pub->safe_psql('postgres', 'SELECT count(*) FROM compressx.check_logical()'), '0',
	'check_logical() finds nothing to report');
$pub->safe_psql('postgres', "SELECT pg_drop_replication_slot('shadow_td')");

my $script = $pub->basedir . '/writes.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
\set id random(5000, 9000)
INSERT INTO docs (id, small, z, big) VALUES (:id, 'bench', repeat('bench zstd ' || :id, 40),
    (SELECT string_agg(md5(k::text || :id), '') FROM generate_series(1, 80) k))
    ON CONFLICT (id) DO UPDATE SET z = excluded.z || ' again', small = 'bench again';
UPDATE full_t SET body = body || '.' WHERE id = :id % 20 + 501;
});
my ($bout, $berr) = ('', '');
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-T', '25', '-c', '2', '-f', $script, $pub->connstr('postgres') ],
	'>', \$bout, '2>', \$berr);
$sub->safe_psql('postgres', 'CREATE DATABASE p2');
$sub->safe_psql('p2', $ddl_sub);
$sub->safe_psql('p2', "CREATE SUBSCRIPTION sub_p2 CONNECTION '$connstr' PUBLICATION pub WITH (streaming = on)");
$sub->poll_query_until('p2',
	"SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')")
  or die 'p2 did not synchronize';
my $during = $pub->safe_psql('postgres', "SELECT count(*) FROM docs WHERE small LIKE 'bench%'");
$bench->finish;
is($?, 0, 'pgbench ran') or diag($berr);
cmp_ok($pub->safe_psql('postgres', "SELECT count(*) FROM docs WHERE small LIKE 'bench%'"), '>', $during,
	'writes went on after the copy had finished');
same_ok('copy under writes (shadow pgoutput), then both streams', 'p1', 'p2');

# p3: binary mode, a column list and a row filter, streaming off: a large
# transaction is spilled to disk by the publisher and sent at commit
$pub->safe_psql('postgres', 'CREATE PUBLICATION pub_f FOR TABLE docs (id, small, z, big) WHERE (id % 2 = 0)');
$sub->safe_psql('postgres', 'CREATE DATABASE p3');
$sub->safe_psql('p3', 'CREATE TABLE docs (id int PRIMARY KEY, small text, z text, big text)');
$sub->safe_psql('p3',
	"CREATE SUBSCRIPTION sub_p3 CONNECTION '$connstr' PUBLICATION pub_f WITH (binary = true, streaming = off)");
$sub->wait_for_subscription_sync($pub, 'sub_p3', 'p3');
$pub->safe_psql('postgres', rows_sql(10001, 12000, 'n'));
$pub->wait_for_catchup('sub_p3');
cmp_ok($pub->safe_psql('postgres',
	"SELECT spill_txns FROM pg_stat_replication_slots WHERE slot_name = 'sub_p3'"), '>', 0,
	'with streaming off, the large transaction was spilled to disk');
$pub->safe_psql('postgres', rows_sql(4001, 4100, 'j') . sprintf(q{
    UPDATE docs SET small = 'filtered ' || id WHERE id %% 4 = 0;
    UPDATE docs SET big = %s WHERE id %% 6 = 0;
    DELETE FROM docs WHERE id %% 19 = 0;}, sprintf($big, 'k') =~ s/\bi\b/id/gr));
same_ok('binary mode, column list and row filter (p3), and the others', 'p1', 'p2');
my $filtered = q{SELECT count(*) || '/' || md5(string_agg(t::text, ',' ORDER BY id))
                 FROM (SELECT id, small, z, big FROM docs WHERE %s) t};
$pub->wait_for_catchup('sub_p3');
is($sub->safe_psql('p3', sprintf($filtered, 'true')),
	$pub->safe_psql('postgres', sprintf($filtered, 'id % 2 = 0')),
	'binary mode, column list and row filter: subscriber p3 equals the published rows');

# pg_recvlogical, plugin compressx, pgoutput options
$pub->safe_psql('postgres', "SELECT pg_create_logical_replication_slot('recv', 'compressx')");
$pub->safe_psql('postgres', "INSERT INTO docs (id, z) VALUES (100002, repeat('RECVMARK ', 40))");
my $endpos = $pub->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
my $recv = $pub->pg_recvlogical_upto('postgres', 'recv', $endpos, $PostgreSQL::Test::Utils::timeout_default,
	'proto_version' => '1', 'publication_names' => 'pub');
like($recv, qr/(RECVMARK ){40}/, 'pg_recvlogical receives the decoded value in pgoutput messages');
$pub->safe_psql('postgres', "SELECT pg_drop_replication_slot('recv')");

# a publisher crash in the middle of a streamed transaction
my $bg = $pub->background_psql('postgres');
$bg->query_safe('BEGIN');
$bg->query_safe(rows_sql(20001, 22000, 'h'));
$pub->poll_query_until('postgres',
	"SELECT coalesce(sum(stream_txns), 0) > 0 FROM pg_stat_replication_slots WHERE slot_name = 'sub_p1'")
  or diag('no stream sent before the crash');
$pub->stop('immediate');
$bg->{run}->kill_kill;
$pub->start;
$pub->safe_psql('postgres', rows_sql(22001, 22100, 'i'));
same_ok('after a crash in a streamed transaction', 'p1', 'p2');
is($pub->safe_psql('postgres', "SELECT count(*) FROM docs WHERE id BETWEEN 20001 AND 22000"), '0',
	'the crashed transaction is gone');

# decoding on a standby (16 and later): a slot there decodes too
if ($pub->pg_version >= 16)
{
	$pub->backup('b1');
	my $stby = PostgreSQL::Test::Cluster->new('standby');
	$stby->init_from_backup($pub, 'b1', has_streaming => 1);
	$stby->append_conf('postgresql.conf', "hot_standby_feedback = on\n");
	$stby->start;
	# wait_for_catchup, not 16's wait_for_replay_catchup: the suite drives
	# 16 with PostgreSQL 15's test modules (test/run_version_suite.sh)
	$pub->wait_for_catchup($stby);
	# the creation waits for a running-transactions record from the primary
	my $creating = $stby->background_psql('postgres');
	$creating->{stdin} .= "SELECT pg_create_logical_replication_slot('on_standby', 'compressx_test_decoding');\n"
	  . "\\echo created\n";
	foreach (1 .. 60)
	{
		$pub->safe_psql('postgres', 'SELECT pg_log_standby_snapshot()');
		$creating->{run}->pump_nb;
		last if $creating->{stdout} =~ /created/;
		sleep 1;
	}
	like($creating->{stdout}, qr/created/, 'a compressx_test_decoding slot is made on the standby');
	$creating->quit;
	$pub->safe_psql('postgres', "INSERT INTO docs (id, z, big) VALUES (100003, repeat('on the standby ', 30), "
		. sprintf($big, 'l') =~ s/\bi\b/100003/gr . ')');
	$pub->wait_for_catchup($stby);
	like($stby->safe_psql('postgres',
		"SELECT string_agg(data, E'\\n') FROM pg_logical_slot_get_changes('on_standby', NULL, NULL)"),
		qr/INSERT: id\[integer\]:100003 .*z\[text\]:'(on the standby ){30}' big\[text\]:'[0-9a-f]{3200}'/,
		'a slot on a standby decodes inline and out-of-line zstd values');
	$stby->stop;
}

# a failover slot (17 and later): synchronized to a standby, which is then
# promoted and decodes from it
if ($pub->pg_version >= 17)
{
	$pub->safe_psql('postgres', q{
	    SELECT pg_create_physical_replication_slot('fo_phys');
	    SELECT pg_create_logical_replication_slot('fo', 'compressx_test_decoding', false, false, true);});
	$pub->backup('b2');
	my $fo = PostgreSQL::Test::Cluster->new('failover');
	$fo->init_from_backup($pub, 'b2', has_streaming => 1);
	$fo->append_conf('postgresql.conf', "primary_slot_name = 'fo_phys'\nhot_standby_feedback = on\n"
		. "primary_conninfo = '" . $pub->connstr . " dbname=postgres application_name=failover'\n");
	$fo->start;
	$pub->wait_for_catchup($fo);
	my $synced = 0;
	foreach (1 .. 60)
	{
		# the slot must need no WAL and no catalog rows the standby lacks:
		# advance it first (19's pg_sync_replication_slots() waits until the
		# slot can be synchronized instead of returning; bounded here)
		$pub->safe_psql('postgres', q{
		    SELECT pg_log_standby_snapshot();
		    SELECT pg_replication_slot_advance('fo', pg_current_wal_lsn());});
		$pub->wait_for_catchup($fo);
		$fo->psql('postgres', q{SET statement_timeout = '10s'; SELECT pg_sync_replication_slots()});
		$synced = $fo->safe_psql('postgres',
			"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'fo' AND synced AND NOT temporary");
		last if $synced;
		sleep 1;
	}
	is($synced, '1', 'the failover slot is synchronized to the standby');
	$pub->safe_psql('postgres', "INSERT INTO docs (id, z, big) VALUES (100004, repeat('after failover ', 30), "
		. sprintf($big, 'm') =~ s/\bi\b/100004/gr . ')');
	$pub->wait_for_catchup($fo);
	$fo->psql('postgres', 'SELECT pg_sync_replication_slots()');
	$fo->promote;
	like($fo->safe_psql('postgres',
		"SELECT string_agg(data, E'\\n') FROM pg_logical_slot_get_changes('fo', NULL, NULL)"),
		qr/INSERT: id\[integer\]:100004 .*z\[text\]:'(after failover ){30}' big\[text\]:'[0-9a-f]{3200}'/,
		'after promotion, the synchronized slot decodes compressx values');
	$fo->stop;
}

done_testing();
