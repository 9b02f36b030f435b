# A DROP TABLE must not stop a lagging logical slot (issue 27, item 14).
#
# A compressx table whose values are compressed with a zstd dictionary is
# dropped while two logical slots have yet to decode its last rows; VACUUM
# then runs on compressx.dictionaries (as autovacuum would).  The
# dictionary's bytes are out of line, in the TOAST relation of the
# dictionaries table, which VACUUM cleans with the data horizon, not the
# slots' catalog_xmin: deleting the row at the drop lost them, and the slot
# failed for good ("missing chunk number 0 for toast value").  Now the
# dictionary is kept, marked dropped, while a slot may still need it:
#  - both slots decode every row with the right text after the drop;
#  - compressx.purge_dropped_dictionaries() keeps it while a slot's
#    catalog_xmin is older than the drop, and removes it once the slots
#    have passed the drop (one advanced, the other dropped);
#  - with no slot at all, a drop deletes the dictionary at once, as before.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('slot_drop');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
# 18 (and 15.20) check slot plugins against output_plugin_libraries
if ($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'") eq '1')
{
	$node->append_conf('postgresql.conf',
		"output_plugin_libraries = 'test_decoding, compressx_test_decoding'\n");
	$node->restart;
}
cx_install_helpers($node);

# val(g): a document; a 64 kB dictionary of them is stored out of line
$node->safe_psql('postgres', q{
    CREATE FUNCTION val(g int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT 'document ' || g || ' ' || md5(g::text) || ' '
               || repeat('kind ' || (g % 11) || ' ' || md5((g % 97)::text) || ' ', 6) $$;
    CREATE TABLE t (id int PRIMARY KEY, body text) USING compressx;
    INSERT INTO t SELECT g, val(g) FROM generate_series(1, 3000) g;
    SELECT compressx.train_dictionary('t', 'body', 65536);
});
my $dict_id = $node->safe_psql('postgres',
	"SELECT dict_id FROM compressx.dictionaries WHERE relid = 't'::regclass");
ok($dict_id > 0, 'the table has a dictionary');
is($node->safe_psql('postgres', q{
    SELECT toast_values('compressx.dictionaries') > 0}),
	't', 'the dictionary is stored out of line');

$node->safe_psql('postgres', q{
    SELECT pg_create_logical_replication_slot('s1', 'compressx_test_decoding');
    SELECT pg_create_logical_replication_slot('s2', 'compressx_test_decoding');
    INSERT INTO t SELECT g, val(g) FROM generate_series(5001, 5040) g;
    UPDATE t SET body = val(id + 1) WHERE id BETWEEN 5001 AND 5005;
});
# a fresh session: compressx's library is not loaded when the table is
# dropped, so the sql_drop event trigger marks the dictionary (the drops of
# t2 and t4 below, in the session that made them, go through the drop hook)
$node->safe_psql('postgres', 'DROP TABLE t');
# what autovacuum does sooner or later
$node->safe_psql('postgres', 'VACUUM compressx.dictionaries');

my $expected = $node->safe_psql('postgres', q{
    SELECT string_agg(line, E'\n' ORDER BY n) FROM (
      SELECT g AS n, format('table public.t: INSERT: id[integer]:%s body[text]:''%s''', g, val(g)) AS line
      FROM generate_series(5001, 5040) g
      UNION ALL
      SELECT 10000 + g, format('table public.t: UPDATE: id[integer]:%s body[text]:''%s''', g, val(g + 1))
      FROM generate_series(5001, 5005) g) x});

for my $slot ('s1', 's2')
{
	my ($rc, $out, $err) = $node->psql('postgres', qq{
	    SELECT string_agg(data, E'\\n') FROM pg_logical_slot_peek_changes('$slot', NULL, NULL)
	    WHERE data LIKE 'table public.t:%'});
	is($err, '', "$slot: decoding after the drop raises no error");
	is($out, $expected, "$slot: every row decodes with its text after the drop");
}

is($node->safe_psql('postgres', qq{
    SELECT relid::oid = 0 AND dropped IS NOT NULL FROM compressx.dictionaries WHERE dict_id = $dict_id}),
	't', 'the dictionary is kept, marked dropped');
is($node->safe_psql('postgres', 'SELECT compressx.purge_dropped_dictionaries()'),
	'0', 'purge keeps it while the slots have not passed the drop');

# s1 consumes past the drop; s2 still lags
$node->safe_psql('postgres', "SELECT count(*) FROM pg_logical_slot_get_changes('s1', NULL, NULL)");
is($node->safe_psql('postgres', 'SELECT compressx.purge_dropped_dictionaries()'),
	'0', 'purge keeps it while one slot lags');
my ($rc, $out, $err) = $node->psql('postgres', q{
    SELECT count(*) FROM pg_logical_slot_peek_changes('s2', NULL, NULL)
    WHERE data LIKE 'table public.t: %'});
is("$out/$err", '45/', 's2 still decodes after purge and after s1 advanced');

# the lagging slot goes; s1's catalog_xmin passes the drop once it decodes a
# running-transactions record logged after it (CHECKPOINT logs one)
$node->safe_psql('postgres', "SELECT pg_drop_replication_slot('s2')");
my $purged = 0;
for (my $i = 0; $i < 300 && !$purged; $i++)
{
	$node->safe_psql('postgres', q{
	    CHECKPOINT;
	    SELECT count(*) FROM pg_logical_slot_get_changes('s1', NULL, NULL)});
	$purged = $node->safe_psql('postgres', 'SELECT compressx.purge_dropped_dictionaries()');
	usleep(100_000) unless $purged;
}
is($purged, '1', 'purge removes the dictionary once every slot has passed the drop');
$node->safe_psql('postgres', "SELECT pg_drop_replication_slot('s1')");
is($node->safe_psql('postgres', 'SELECT count(*) FROM compressx.dictionaries'),
	'0', 'no dictionary left');
$node->safe_psql('postgres', 'VACUUM compressx.dictionaries');
is($node->safe_psql('postgres', "SELECT toast_values('compressx.dictionaries')"),
	'0', 'its bytes are gone from the TOAST relation after VACUUM');

# a drop while a slot lags, then the slot is dropped: the next drop of any
# table removes the dictionary (the drop hook purges too)
$node->safe_psql('postgres', q{
    CREATE TABLE t2 (id int, body text) USING compressx;
    INSERT INTO t2 SELECT g, val(g) FROM generate_series(1, 2000) g;
    SELECT compressx.train_dictionary('t2', 'body', 8192);
    SELECT pg_create_logical_replication_slot('s3', 'compressx_test_decoding');
    INSERT INTO t2 VALUES (1, val(1));
    DROP TABLE t2;
    CREATE TABLE other (i int);
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM compressx.dictionaries WHERE dropped IS NOT NULL'),
	'1', 'dropped with a slot behind: kept');
$node->safe_psql('postgres', 'VACUUM compressx.dictionaries');
is($node->safe_psql('postgres', q{
    SELECT toast_values('compressx.dictionaries') > 0,
           (SELECT data FROM pg_logical_slot_peek_changes('s3', NULL, NULL)
            WHERE data LIKE 'table public.t2: INSERT:%') =
           format('table public.t2: INSERT: id[integer]:1 body[text]:''%s''', val(1))}),
	't|t', 'its out-of-line bytes stay, and the slot decodes the row after the drop');
$node->safe_psql('postgres', q{
    SELECT pg_drop_replication_slot('s3');
    DROP TABLE other;
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM compressx.dictionaries'),
	'0', 'the next DROP TABLE removes it once no slot may need it');

# no slot: the dictionary goes with its table at once
$node->safe_psql('postgres', q{
    CREATE TABLE t3 (id int, body text) USING compressx;
    INSERT INTO t3 SELECT g, val(g) FROM generate_series(1, 2000) g;
    SELECT compressx.train_dictionary('t3', 'body', 8192);
    DROP TABLE t3;
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM compressx.dictionaries'),
	'0', 'with no slot, a drop deletes the dictionary at once');

# a dropped table's dictionary is not dumped
$node->safe_psql('postgres', q{
    CREATE TABLE t4 (id int, body text) USING compressx;
    INSERT INTO t4 SELECT g, val(g) FROM generate_series(1, 2000) g;
    SELECT compressx.train_dictionary('t4', 'body', 8192);
    SELECT pg_create_logical_replication_slot('s4', 'compressx_test_decoding');
    DROP TABLE t4;
});
my ($dump, $dump_err);
IPC::Run::run([ 'pg_dump', '--data-only', '-d', $node->connstr('postgres') ],
	'>', \$dump, '2>', \$dump_err);
like($dump, qr/COPY compressx\.dictionaries/, 'pg_dump dumps the dictionaries table');
unlike($dump, qr/^\d+\t-\t/m, 'pg_dump leaves out dropped tables\' dictionaries');
$node->safe_psql('postgres', "SELECT pg_drop_replication_slot('s4')");

# automatic dictionaries: one pruned (no stored value names it any more)
# while a slot has yet to decode values that used it is kept the same way
$node->safe_psql('postgres', q{
    CREATE FUNCTION ad_json(i integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT json_build_object('id', i, 'name', 'customer ' || i,
                                 'city', (ARRAY['Paris', 'Lyon', 'Nantes', 'Lille'])[1 + i % 4],
                                 'status', 'active',
                                 'note', 'regular customer since ' || (2000 + i % 20))::text $$;
    CREATE FUNCTION ad_log(i integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT format('2026-11-%sT12:%s:00Z ERROR [worker-%s] connection to 10.0.%s.%s:5432 reset by peer after %s ms; retrying (attempt %s of 5) in pool "%s"',
                      10 + i % 20, 10 + i % 50, i % 8, i % 256, (i * 7) % 256, i % 997, 1 + i % 5,
                      (ARRAY['orders', 'billing', 'search'])[1 + i % 3]) $$;
    CREATE TABLE ad (id integer PRIMARY KEY, doc text) USING compressx;
    INSERT INTO ad SELECT i, ad_json(i) FROM generate_series(1, 2000) i;
});
my $ad_settings = q{
    SET compressx.auto_dictionary_worker = off;
    SET compressx.auto_dictionary_min_values = 200;
    SET compressx.auto_dictionary_size = 4096;
};
$node->safe_psql('postgres', $ad_settings . q{
    SELECT compressx.set_column_codec('ad', 'doc', 'zstd', dictionary => 'auto');
    SELECT count(*) FROM compressx.auto_dictionary_run('ad');
});
my $d1 = $node->safe_psql('postgres',
	"SELECT dictionary FROM compressx.auto_dictionaries WHERE table_name = 'ad'");
ok($d1 > 0, 'the automatic column has a dictionary');
$node->safe_psql('postgres', $ad_settings . q{
    SELECT pg_create_logical_replication_slot('s5', 'compressx_test_decoding');
    INSERT INTO ad SELECT i, ad_json(i) FROM generate_series(2001, 2100) i;
    INSERT INTO ad SELECT i, ad_log(i) FROM generate_series(10001, 16000) i;
    SELECT count(*) FROM compressx.auto_dictionary_run('ad');
    DELETE FROM ad WHERE id <= 2100;
    VACUUM ad;
});
isnt($node->safe_psql('postgres',
	"SELECT dictionary FROM compressx.auto_dictionaries WHERE table_name = 'ad'"),
	$d1, 'a new dictionary replaced it');
like($node->safe_psql('postgres', $ad_settings .
	"SELECT string_agg(action, ',') FROM compressx.auto_dictionary_run('ad') WHERE dictionary = $d1"),
	qr/pruned/, 'the old one is pruned');
is($node->safe_psql('postgres',
	"SELECT relid::oid = 0 AND dropped IS NOT NULL FROM compressx.dictionaries WHERE dict_id = $d1"),
	't', 'while a slot may need it, it is kept, marked dropped');
$node->safe_psql('postgres', 'VACUUM compressx.dictionaries');
($rc, $out, $err) = $node->psql('postgres', q{
    SELECT count(*), bool_and(data = format('table public.ad: INSERT: id[integer]:%s doc[text]:''%s''',
                                            substring(data from 'id\[integer\]:(\d+)')::int,
                                            ad_json(substring(data from 'id\[integer\]:(\d+)')::int)))
    FROM pg_logical_slot_peek_changes('s5', NULL, NULL)
    WHERE data ~ '^table public.ad: INSERT: id\[integer\]:2[01]\d\d '});
is("$out/$err", '100|t/', 'the slot decodes the values that used the pruned dictionary');
$node->safe_psql('postgres', "SELECT pg_drop_replication_slot('s5')");
is($node->safe_psql('postgres', 'SELECT compressx.purge_dropped_dictionaries()'),
	'1', 'with the slot gone, purge deletes it');

$node->stop;
done_testing();
