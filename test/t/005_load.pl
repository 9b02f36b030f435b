# A bounded load test: pgbench with 8 clients runs transfers between
# accounts (updating zstd-compressed documents), inserts and deletes history
# rows and reads ranges, on a compressx table and on the same heap table, in
# one run.  Both must finish without a failed transaction and keep their
# invariants: balances sum to zero, every document still matches its
# checksum, every out-of-line value is referenced.  Prints both throughputs.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $seconds = $ENV{CX_LOAD_SECONDS} || 25;
my $node = PostgreSQL::Test::Cluster->new('load');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 30\n");
$node->start;
cx_install_helpers($node);

my %tps;
foreach my $am ('heap', 'compressx')
{
    $node->safe_psql('postgres', qq{
        CREATE TABLE acct_$am (id integer PRIMARY KEY, balance bigint, body text, body_md5 text) USING $am;
        INSERT INTO acct_$am
        SELECT i, 0, b, md5(b)
        FROM generate_series(1, 1000) i,
             LATERAL (SELECT repeat('{"account": ' || i || ', "note": "' || md5(i::text) || '"} ', 10 + i % 50) AS b) x;
        CREATE TABLE hist_$am (id bigserial PRIMARY KEY, aid integer, amount integer, payload text) USING $am;
    });
    my $script = $node->basedir . "/load_$am.sql";
    open(my $fh, '>', $script) or die;
    print $fh <<"SQL";
\\set a random(1, 1000)
\\set b random(1, 1000)
\\set amt random(1, 100)
BEGIN;
UPDATE acct_$am SET balance = balance - :amt, body = x.b, body_md5 = md5(x.b)
  FROM (SELECT repeat('{"moved": ' || :amt || ', "r": "' || md5(random()::text) || '"} ', 10 + :a % 50) AS b) x
  WHERE id = least(:a, :b);
UPDATE acct_$am SET balance = balance + :amt WHERE id = greatest(:a, :b);
INSERT INTO hist_$am (aid, amount, payload)
  SELECT :a, :amt, CASE WHEN :amt % 10 = 0 THEN (SELECT string_agg(md5(k::text || random()), '') FROM generate_series(1, 120) k)
                        ELSE repeat('history ' || :a || ' ', 30) END;
DELETE FROM hist_$am WHERE id = (SELECT max(id) - 50 FROM hist_$am);
SELECT sum(length(body)) FROM acct_$am WHERE id BETWEEN :a AND :a + 10;
END;
SQL
    close $fh;
    # least/greatest: transfers to self keep the sum too
    my ($out, $err) = run_command([ 'pgbench', '-n', '-c', '8', '-j', '2', '-T', $seconds,
                                    '-f', $script, '-h', $node->host, '-p', $node->port, 'postgres' ]);
    like($out, qr/number of failed transactions: 0 \(/, "$am: pgbench ran, no transaction failed");
    unlike($err, qr/ERROR|aborted/i, "$am: no client aborted") or diag($err);
    ($tps{$am}) = $out =~ /tps = ([\d.]+)/;
    ok($tps{$am} > 0, "$am: throughput measured");
    is($node->safe_psql('postgres', "SELECT sum(balance) FROM acct_$am"), '0', "$am: balances sum to zero");
    is($node->safe_psql('postgres', "SELECT count(*) FROM acct_$am WHERE md5(body) <> body_md5"), '0',
        "$am: every document matches its checksum");
    cx_toast_referenced_ok($node, $_, $_) foreach ("acct_$am", "hist_$am");
}
diag(sprintf("pgbench, 8 clients, %d s each: heap %.0f tps, compressx %.0f tps (compressx/heap %.2f)",
             $seconds, $tps{heap}, $tps{compressx}, $tps{compressx} / $tps{heap}));

$node->stop;
done_testing();
