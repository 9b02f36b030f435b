# Progress of compressx's operations (issue 34, item 5), watched from a
# second session while each one waits:
#  - ALTER TABLE .. SET ACCESS METHOD compressx: compressx.progress shows
#    the rewrite (rows written of the old table's estimate) while a USING
#    function waits on an advisory lock; nothing stays once it is done,
#    inside the transaction block, nor after an error in a subtransaction;
#    an ordinary INSERT into a compressx table shows nothing;
#  - train_dictionary, advise and a check of an automatic dictionary:
#    shown while reading values, held by a REINDEX of the TOAST index in a
#    second session (the values are out of line); nothing after an error;
#  - VACUUM FULL of a compressx table: core's pg_stat_progress_cluster;
#  - who reads it: a plain role sees no other role's operation, a member
#    of pg_read_all_stats does.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init;
$node->append_conf('postgresql.conf', qq{
compressx.auto_dictionary_worker = off
});
$node->start;
cx_install_helpers($node);
$node->safe_psql('postgres', q{
    CREATE ROLE plain_watcher LOGIN;
    CREATE ROLE stats_watcher LOGIN IN ROLE pg_read_all_stats;
    CREATE FUNCTION wait_at(i integer, at integer) RETURNS integer LANGUAGE plpgsql AS $$
    BEGIN
        IF i = at THEN
            PERFORM pg_advisory_lock(4242);
            PERFORM pg_advisory_unlock(4242);
        END IF;
        RETURN i;
    END $$;
    CREATE TABLE big (id integer, doc text);
    INSERT INTO big SELECT i, repeat(md5(i::text), 10) FROM generate_series(1, 4000) i;
    ANALYZE big;
    -- values of about 22 kB of hex: out of line in compressx tables
    CREATE TABLE docs (id integer, body text) USING compressx;
    INSERT INTO docs SELECT i, (SELECT string_agg(md5(i || '-' || j), ' ') FROM generate_series(1, 700) j)
    FROM generate_series(1, 60) i;
    CREATE TABLE empty_docs (id integer, body text) USING compressx;
    CREATE TABLE back (id integer, doc text) USING compressx;
    INSERT INTO back SELECT i, repeat(md5(i::text), 10) FROM generate_series(1, 2000) i;
    ANALYZE back;
});

my $progress = q{SELECT operation || '|' || phase || '|' || coalesce(unit, '') || '|' ||
                        coalesce(done::text, '') || '|' || coalesce(total::text, '')
                 FROM compressx.progress WHERE pid = };

# ---------------------------------------------------------------------
# 1. ALTER TABLE .. SET ACCESS METHOD compressx
# ---------------------------------------------------------------------
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(4242)');
my $alter = $node->background_psql('postgres', on_error_stop => 0);
my $apid = $alter->query_safe('SELECT pg_backend_pid()');
$alter->query_until(qr/go/, q{\echo go
BEGIN;
ALTER TABLE big SET ACCESS METHOD compressx, ALTER COLUMN id TYPE integer USING wait_at(id, 1000);
});
ok($node->poll_query_until('postgres', "$progress $apid", 'table rewrite|writing rows|rows|999|4000'),
   'SET ACCESS METHOD: 999 rows written of 4000 while row 1000 waits');
is($node->safe_psql('postgres', "SELECT relation FROM compressx.progress WHERE pid = $apid"),
   'big', 'SET ACCESS METHOD: the row names the table');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress WHERE pid = $apid",
                    extra_params => [ '-U', 'plain_watcher' ]),
   '0', 'a plain role does not see another role\'s operation');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress_info() WHERE pid = $apid",
                    extra_params => [ '-U', 'plain_watcher' ]),
   '0', 'nor its slot');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress WHERE pid = $apid",
                    extra_params => [ '-U', 'stats_watcher' ]),
   '1', 'a member of pg_read_all_stats does');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_progress_cluster"),
   '0', 'SET ACCESS METHOD: nothing in pg_stat_progress_cluster');

# a table owned by a role other than the bootstrap superuser, rewritten by
# its owner: shown the same (the transient relation's relcache entry names
# the bootstrap superuser as its owner until its pg_class row is made, so
# a start in relation_set_new_filelocator saw an owner differing from the
# table's and reported nothing for such tables)
$node->safe_psql('postgres', q{
    CREATE ROLE app_owner LOGIN;
    GRANT CREATE ON SCHEMA public TO app_owner;
    GRANT EXECUTE ON FUNCTION wait_at(integer, integer) TO app_owner;
    CREATE TABLE owned (id integer, doc text);
    INSERT INTO owned SELECT i, repeat(md5(i::text), 10) FROM generate_series(1, 3000) i;
    ANALYZE owned;
    ALTER TABLE owned OWNER TO app_owner;
});
my $owned = $node->background_psql('postgres', on_error_stop => 0,
								   extra_params => [ '-U', 'app_owner' ]);
my $opid = $owned->query_safe('SELECT pg_backend_pid()');
$owned->query_until(qr/go/, q{\echo go
ALTER TABLE owned SET ACCESS METHOD compressx, ALTER COLUMN id TYPE integer USING wait_at(id, 1000);
});
ok($node->poll_query_until('postgres', qq{
    SELECT wait_event = 'advisory' FROM pg_stat_activity WHERE pid = $opid}),
   'plain owner: the rewrite waits on row 1000');
is($node->safe_psql('postgres', "$progress $opid"),
   'table rewrite|writing rows|rows|999|3000',
   'plain owner: SET ACCESS METHOD compressx shows, 999 rows of 3000');
is($node->safe_psql('postgres', "SELECT relation FROM compressx.progress WHERE pid = $opid",
                    extra_params => [ '-U', 'app_owner' ]),
   'owned', 'the owner sees the row of its own backend');

# an ordinary INSERT into a compressx table reports nothing
my $insert = $node->background_psql('postgres', on_error_stop => 0);
my $ipid = $insert->query_safe('SELECT pg_backend_pid()');
$insert->query_until(qr/go/, q{\echo go
INSERT INTO docs SELECT wait_at(i, 5), 'x' FROM generate_series(1, 10) i;
});
ok($node->poll_query_until('postgres', qq{
    SELECT wait_event = 'advisory' FROM pg_stat_activity WHERE pid = $ipid}),
   'INSERT waits on row 5');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress WHERE pid = $ipid"),
   '0', 'an INSERT into a compressx table shows no progress');

$holder->query_safe('SELECT pg_advisory_unlock(4242)');
$insert->query_safe('DELETE FROM docs WHERE body = \'x\'');
$insert->quit;
$owned->query('SELECT 1');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress WHERE pid = $opid"),
   '0', 'plain owner: no row once done');
$owned->quit;
is($alter->query_safe("SELECT count(*) FROM compressx.progress WHERE pid = pg_backend_pid()"),
   '0', 'SET ACCESS METHOD done: no progress row, the transaction still open');
$alter->query_safe('COMMIT');
is($node->safe_psql('postgres', q{SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
                                   WHERE c.oid = 'big'::regclass}),
   'compressx', 'the table moved');

# an operation inside another (advise from a USING expression of the
# rewrite) leaves the outer report alone, and nothing stays after either
my ($ret, $out, $err) = $node->psql('postgres', q{
    CREATE TABLE tiny (id integer, t text);
    INSERT INTO tiny SELECT i, repeat('abc', i) FROM generate_series(1, 20) i;
    CREATE FUNCTION advise_in(i integer) RETURNS integer LANGUAGE plpgsql AS $$
    BEGIN
        IF i = 1 THEN
            PERFORM count(*) FROM compressx.advise('tiny');
        END IF;
        RETURN i;
    END $$;
    CREATE TABLE nest AS SELECT * FROM tiny;
    BEGIN;
    ALTER TABLE nest SET ACCESS METHOD compressx, ALTER COLUMN id TYPE integer USING advise_in(id);
    SELECT 'in transaction: ' || count(*) FROM compressx.progress WHERE pid = pg_backend_pid();
    COMMIT;
    SELECT 'after commit: ' || count(*) FROM compressx.progress WHERE pid = pg_backend_pid();
}, on_error_stop => 0);
like($out, qr/in transaction: 0/, 'nested advise: no row left in the transaction') or diag $err;
like($out, qr/after commit: 0/, 'nor after it');

# the way back, SET ACCESS METHOD heap: its rows go through heap, so only
# the phase shows (done NULL), and nothing stays after it
$holder->query_safe('SELECT pg_advisory_lock(4242)');
my $back = $node->background_psql('postgres', on_error_stop => 0);
my $bpid = $back->query_safe('SELECT pg_backend_pid()');
$back->query_until(qr/go/, q{\echo go
ALTER TABLE back SET ACCESS METHOD heap, ALTER COLUMN id TYPE integer USING wait_at(id, 1000);
});
ok($node->poll_query_until('postgres', qq{
    SELECT operation || '|' || phase || '|' || (done IS NULL) || '|' || (total > 0)
    FROM compressx.progress WHERE pid = $bpid}, 'table rewrite|writing rows|true|true'),
   'SET ACCESS METHOD heap: the phase, rows not counted');
$holder->query_safe('SELECT pg_advisory_unlock(4242)');
$back->query('SELECT 1');
is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress WHERE pid = $bpid"),
   '0', 'SET ACCESS METHOD heap done: no progress row');
is($node->safe_psql('postgres', q{SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
                                   WHERE c.oid = 'back'::regclass}),
   'heap', 'the table moved back');
$back->quit;

# an error in the rewrite, in a subtransaction: nothing stays
($ret, $out, $err) = $node->psql('postgres', q{
    CREATE TABLE big2 AS SELECT * FROM big;
    BEGIN;
    SAVEPOINT s;
    ALTER TABLE big2 SET ACCESS METHOD heap, ALTER COLUMN id TYPE integer USING 1 / (id - 1000) + id;
    ROLLBACK TO s;
    SAVEPOINT t;
    CREATE TABLE big3 AS SELECT * FROM big2;
    ALTER TABLE big3 SET ACCESS METHOD compressx, ALTER COLUMN id TYPE integer USING 1 / (id - 1000) + id;
    ROLLBACK TO t;
    SELECT 'left: ' || count(*) FROM compressx.progress WHERE pid = pg_backend_pid();
    INSERT INTO big SELECT 5000, 'y';
    SELECT 'after insert: ' || count(*) FROM compressx.progress WHERE pid = pg_backend_pid();
    COMMIT;
}, on_error_stop => 0);
like($err, qr/division by zero/, 'the rewrite failed');
like($out, qr/left: 0/, 'a failed rewrite leaves no progress row');
like($out, qr/after insert: 0/, 'nor does an INSERT after it');

# ---------------------------------------------------------------------
# 2. train_dictionary, advise, an automatic dictionary check: held while
#    reading the values (out of line) by a REINDEX of the TOAST index
# ---------------------------------------------------------------------
my $toast_index = $node->safe_psql('postgres', q{
    SELECT i.indexrelid::regclass FROM pg_index i
    WHERE i.indrelid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'docs'::regclass)});
is($node->safe_psql('postgres', q{
    SELECT count(*) > 50 FROM docs, compressx.value_storage('docs', docs.ctid, 'body') v WHERE v.external}),
   't', 'the values are out of line');

sub held_while_reading
{
	my ($label, $call, $expected) = @_;
	my $lock = $node->background_psql('postgres');
	$lock->query_safe("BEGIN; REINDEX INDEX $toast_index");
	my $op = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $op->query_safe('SELECT pg_backend_pid()');
	$op->query_until(qr/go/, "\\echo go\n$call;\n");
	ok($node->poll_query_until('postgres', "$progress $pid", $expected),
	   "$label: $expected");
	$lock->query_safe('COMMIT');
	$lock->quit;
	$op->query('SELECT 1');
	is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress WHERE pid = $pid"),
	   '0', "$label: no row once done");
	$op->quit;
}

held_while_reading('train_dictionary',
	"SELECT compressx.train_dictionary('docs', 'body', 4096, 1000)",
	'train_dictionary|reading values|values|0|60');
held_while_reading('advise',
	"SELECT count(*) FROM compressx.advise('docs')",
	'advise|trying codecs|candidates|0|' . $node->safe_psql('postgres', q{
	    SELECT count(*) FROM compressx.advise('docs') WHERE column_name = 'body'}));
held_while_reading('automatic dictionary check',
	"SELECT compressx.set_column_codec('docs', 'body', 'zstd', dictionary => 'auto')",
	'automatic dictionary check|reading values|values|0|60');

# an error after the start: nothing stays
($ret, $out, $err) = $node->psql('postgres', q{
    BEGIN;
    SAVEPOINT s;
    SELECT compressx.train_dictionary('empty_docs', 'body', 4096, 1000);
    ROLLBACK TO s;
    SELECT 'left: ' || count(*) FROM compressx.progress WHERE pid = pg_backend_pid();
    COMMIT;
}, on_error_stop => 0);
like($err, qr/too few values/, 'train_dictionary failed');
like($out, qr/left: 0/, 'a failed train_dictionary leaves no progress row');

# ---------------------------------------------------------------------
# 3. VACUUM FULL of a compressx table: core's pg_stat_progress_cluster
# ---------------------------------------------------------------------
{
	my $lock = $node->background_psql('postgres');
	$lock->query_safe("BEGIN; REINDEX INDEX $toast_index");
	my $vf = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $vf->query_safe('SELECT pg_backend_pid()');
	$vf->query_until(qr/go/, "\\echo go\nVACUUM FULL docs;\n");
	ok($node->poll_query_until('postgres', qq{
	    SELECT command || ' ' || relid::regclass FROM pg_stat_progress_cluster WHERE pid = $pid},
	    'VACUUM FULL docs'),
	   'VACUUM FULL of a compressx table shows in pg_stat_progress_cluster');
	is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress WHERE pid = $pid"),
	   '0', 'and not in compressx.progress');
	$lock->query_safe('COMMIT');
	$lock->quit;
	$vf->query('SELECT 1');
	$vf->quit;
}

# ---------------------------------------------------------------------
# 4. recompress_table and recompress_online appear in compressx.progress
#    too (compressx.debug_rewrite_delay slows their copy down)
# ---------------------------------------------------------------------
foreach my $case (
	[ 'recompress_table', "SELECT count(*) FROM compressx.recompress_table('big', 'zstd', 5)" ],
	[ 'recompress_online', "CALL compressx.recompress_online('big', 'zstd', 9, batch_rows => 64)" ])
{
	my ($name, $call) = @$case;
	my $op = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $op->query_safe('SELECT pg_backend_pid()');
	$op->query_until(qr/go/, "\\echo go\nSET compressx.debug_rewrite_delay = '50ms';\n$call;\n");
	ok($node->poll_query_until('postgres', qq{
	    SELECT operation || ' ' || relation FROM compressx.progress WHERE pid = $pid AND phase IS NOT NULL},
	    "$name big"),
	   "$name shows in compressx.progress");
	$op->query('SELECT 1');
	is($node->safe_psql('postgres', "SELECT count(*) FROM compressx.progress WHERE pid = $pid"),
	   '0', "$name: no row once done");
	$op->quit;
}

$holder->quit;
$alter->quit;
$node->stop;
done_testing();
