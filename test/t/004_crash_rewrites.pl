# Crash safety of the other rewrites of compressx tables: an immediate
# shutdown in the middle of VACUUM FULL, CLUSTER, recompress_table, ALTER
# TABLE .. SET ACCESS METHOD (both ways) and a large COPY leaves the old
# state complete, a
# second run completes with the same data, and no out-of-line value is left
# without a row referencing it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('crash2');
$node->init;
$node->start;
my $other = cx_other_codec($node);
cx_install_helpers($node);
$node->safe_psql('postgres', q{
    CREATE FUNCTION fill(rel regclass, n int) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        EXECUTE format($q$INSERT INTO %s
            SELECT i, repeat('value ' || i || ' of a document ', 40 + i %% 80),
                   CASE WHEN i %% 10 = 0
                        THEN (SELECT string_agg(md5(k::text || i), '') FROM generate_series(1, 300) k) END
            FROM generate_series(1, %s) i$q$, rel, n);
    END $$;
});

my $state = sub { return $node->safe_psql('postgres', cx_state_sql($_[0])); };
my $am = sub {
    my ($t) = @_;
    return $node->safe_psql('postgres',
        "SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = '$t'::regclass");
};
my $orphans_ok = sub { cx_toast_referenced_ok($node, @_) };

# Run $sql in the background, wait until $ready returns true, crash.
sub crash_during
{
    my ($sql, $ready, $label) = @_;
    my $bg = $node->background_psql('postgres', on_error_stop => 0);
    $bg->query_until(qr/go/, "\\echo go\n$sql\n");
    ok($node->poll_query_until('postgres', $ready), "$label: under way");
    $node->stop('immediate');
    $bg->{run}->kill_kill;
    $node->start;
}

# --- VACUUM FULL and CLUSTER on a compressx table (slowed per block)
$node->safe_psql('postgres', qq{
    CREATE TABLE vf (id integer PRIMARY KEY, body text, extra text) USING compressx;
    SELECT fill('vf', 4000);
    SELECT compressx.set_column_codec('vf', 'body', '$other');
});
my $before = $state->('vf');
foreach my $op ('VACUUM FULL vf', 'CLUSTER vf USING vf_pkey')
{
    crash_during("SET compressx.debug_rewrite_delay = '30ms'; $op;",
        q{SELECT heap_tuples_scanned > 200 OR heap_tuples_written > 200 FROM pg_stat_progress_cluster}, $op);
    is($state->('vf'), $before, "$op: data identical after the crash");
    is($node->safe_psql('postgres', q{SELECT methods::text FROM compressx.column_stats('vf') WHERE column_name = 'body'}),
        '{"zstd": 4000}', "$op: old encoding complete after the crash");
    $orphans_ok->('vf', "$op after crash");
    $node->safe_psql('postgres', $op);
    is($state->('vf'), $before, "$op: second run, data identical");
    is($node->safe_psql('postgres', q{SELECT methods::text FROM compressx.column_stats('vf') WHERE column_name = 'body'}),
        qq/{"$other": 4000}/, "$op: second run re-encoded");
    $node->safe_psql('postgres', qq{SELECT compressx.set_column_codec('vf', 'body', 'zstd'); VACUUM FULL vf;
                                   SELECT compressx.set_column_codec('vf', 'body', '$other');});
}

# --- recompress_table on a compressx table (stored lz4, or pglz, first)
$node->safe_psql('postgres', 'VACUUM FULL vf');
crash_during(q{SET compressx.debug_rewrite_delay = '30ms'; SELECT * FROM recompress_table('vf', 'zstd', 12, '{body}');},
    q{SELECT tuples_written > 200 FROM compressx.recompress_progress}, 'recompress_table zstd 12');
is($state->('vf'), $before, 'recompress_table: data identical after the crash');
is($node->safe_psql('postgres', q{SELECT methods::text FROM compressx.column_stats('vf') WHERE column_name = 'body'}),
    qq/{"$other": 4000}/, 'recompress_table: old encoding complete after the crash');
is($node->safe_psql('postgres', q{SELECT codec FROM compressx.column_settings WHERE attname = 'body'}),
    $other, 'recompress_table: old setting after the crash');
$orphans_ok->('vf', 'recompress_table after crash');
$node->safe_psql('postgres', q{SELECT * FROM recompress_table('vf', 'zstd', 12, '{body}')});
is($state->('vf'), $before, 'recompress_table: second run, data identical');
is($node->safe_psql('postgres', q{SELECT methods::text FROM compressx.column_stats('vf') WHERE column_name = 'body'}),
    '{"zstd": 4000}', 'recompress_table: second run re-encoded');

# --- ALTER TABLE .. SET ACCESS METHOD, both ways.  Core runs this rewrite,
# so the delay hook does not apply: the same ALTER also rewrites column
# extra through a function that sleeps a little per row and returns its
# argument, so the crash always comes in the middle of the rewrite.
$node->safe_psql('postgres', q{
    CREATE TABLE sam (id integer PRIMARY KEY, body text, extra text);
    SELECT fill('sam', 30000);
    CREATE FUNCTION slow_same(t text) RETURNS text LANGUAGE plpgsql AS
        $$ BEGIN PERFORM pg_sleep(0.0002); RETURN t; END $$;
});
$before = $state->('sam');
foreach my $target ('compressx', 'heap')
{
    crash_during("ALTER TABLE sam SET ACCESS METHOD $target, ALTER COLUMN extra TYPE text USING slow_same(extra);",
        q{SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'ALTER TABLE sam%' AND state = 'active'
          AND now() - query_start > interval '300 ms'}, "SET ACCESS METHOD $target");
    my $after = $am->('sam');
    # the catalog and the stored values agree: zstd values exactly under compressx
    my $mix = $node->safe_psql('postgres',
        q{SELECT methods::text FROM compressx.column_stats('sam') WHERE column_name = 'body'});
    ok(($after eq 'compressx') == ($mix =~ /zstd/ ? 1 : 0),
        "SET ACCESS METHOD $target: stored values match the access method after the crash ($after: $mix)");
    note("SET ACCESS METHOD $target: crash left the table $after");
    is($state->('sam'), $before, "SET ACCESS METHOD $target: data identical after the crash");
    $orphans_ok->('sam', "SET ACCESS METHOD $target after crash");
    $node->safe_psql('postgres', "ALTER TABLE sam SET ACCESS METHOD $target");
    is($am->('sam'), $target, "SET ACCESS METHOD $target: second run completes");
    is($state->('sam'), $before, "SET ACCESS METHOD $target: data identical");
}

# --- a large COPY into a compressx table
my $file = $node->basedir . '/copy.data';
$node->safe_psql('postgres', qq{
    CREATE TABLE src (id integer, body text, extra text);
    SELECT fill('src', 60000);
    COPY src TO '$file';
    CREATE TABLE cp (id integer, body text, extra text) USING compressx;
    SELECT fill('cp', 100);
});
$before = $state->('cp');
crash_during("COPY cp FROM '$file';",
    q{SELECT tuples_processed > 2000 FROM pg_stat_progress_copy}, 'COPY');
is($state->('cp'), $before, 'COPY: table as before the crash');
$orphans_ok->('cp', 'COPY after crash');
$node->safe_psql('postgres', "COPY cp FROM '$file'");
is($node->safe_psql('postgres', 'SELECT count(*) FROM cp'), '60100', 'COPY: second run completes');
$orphans_ok->('cp', 'COPY second run');

$node->stop;
done_testing();
