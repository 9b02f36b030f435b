# Physical streaming replication and base backups of compressx tables: a
# standby replays inserts (zstd inline and out of line), updates, deletes,
# VACUUM FULL and recompress_table, values compressed with a dictionary
# trained after the base backup, returns the primary's results, and can be
# promoted and written to.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
my $other = cx_other_codec($primary);
$primary->safe_psql('postgres', qq{
    CREATE EXTENSION compressx;
    CREATE TABLE docs (id integer PRIMARY KEY, body text, meta jsonb, n integer) USING compressx;
    INSERT INTO docs
    SELECT i, CASE WHEN i % 20 = 0
                   THEN (SELECT string_agg(md5(k::text || i), '') FROM generate_series(1, 400) k)
                   ELSE repeat('streamed body ' || i || ' ', 30) END,
           jsonb_build_object('i', i, 'pad', repeat('x', 90)), 0
    FROM generate_series(1, 1000) i;
    SELECT compressx.set_column_codec('docs', 'meta', '$other');
});

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

my $state = cx_state_sql('docs');
my $mix = q{SELECT string_agg(column_name || ':' || methods::text, ' ' ORDER BY column_name)
            FROM compressx.column_stats('docs')};

$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $state), $primary->safe_psql('postgres', $state),
    'standby from a base backup reads the same rows');

$primary->safe_psql('postgres', q{
    UPDATE docs SET n = n + 1 WHERE id % 3 = 0;
    UPDATE docs SET body = body || ' changed' WHERE id % 40 = 0;
    DELETE FROM docs WHERE id % 7 = 0;
    INSERT INTO docs SELECT i, repeat('late ' || i, 50), '{}', 0 FROM generate_series(2001, 2100) i;
});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $state), $primary->safe_psql('postgres', $state),
    'updates, deletes and inserts replayed');
like($standby->safe_psql('postgres', $mix), qr/body:\{"zstd": \d+\}/, 'standby sees zstd values');

# a dictionary trained after the base backup reaches the standby with its values
$primary->safe_psql('postgres', cx_dict_table_sql('small'));
my $small = cx_state_sql('small');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $small), $primary->safe_psql('postgres', $small),
    'standby reads values compressed with a dictionary');

$primary->safe_psql('postgres', 'VACUUM FULL docs');
$primary->safe_psql('postgres', q{SELECT * FROM recompress_table('docs', 'zstd', 9, '{body}')});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $state), $primary->safe_psql('postgres', $state),
    'VACUUM FULL and recompress_table replayed');
is($standby->safe_psql('postgres', $mix), $primary->safe_psql('postgres', $mix),
    'same stored method mix on the standby');
is($standby->safe_psql('postgres',
    q{SET enable_seqscan = off; SELECT count(*) FROM docs WHERE id BETWEEN 100 AND 200}),
    $primary->safe_psql('postgres', q{SELECT count(*) FROM docs WHERE id BETWEEN 100 AND 200}),
    'index scans on the standby');

# Writing functions refuse on the standby with 25006, naming themselves and
# the table, before any lock (issue 27, A6; sql/review_readonly.sql tests
# read-only transactions on a primary).
my $mix_before = $standby->safe_psql('postgres', $mix);
for my $call (
    qq{SELECT * FROM recompress_table('docs', '$other')},
    qq{SELECT compressx.set_column_codec('docs', 'body', '$other')},
    q{SELECT compressx.reset_column_codec('docs')},
    q{SELECT compressx.set_column_inline('docs', 'body', 100)},
    q{SELECT compressx.train_dictionary('docs', 'body')},
    q{SELECT * FROM compressx.auto_dictionary_run('docs')},
    qq{CALL compressx.recompress_online('docs', '$other')},
    q{SELECT compressx.recompress_online_cleanup('docs')})
{
    my ($fn) = $call =~ /(\w+)\('docs'/;
    my ($rc, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\n$call");
    like($err, qr/ERROR:  25006: cannot execute \Q$fn\E\(\) in a read-only transaction.*CONTEXT:  \Q$fn\E\(\) on relation public\.docs/s,
        "standby: $fn() refused with 25006");
}
is($standby->safe_psql('postgres', $mix), $mix_before, 'standby: nothing changed');

my $before = $primary->safe_psql('postgres', $state);
$standby->promote;
$standby->safe_psql('postgres', q{INSERT INTO docs VALUES (5000, repeat('after promotion ', 100), '{}', 0)});
is($standby->safe_psql('postgres', q{SELECT length(body) FROM docs WHERE id = 5000}), '1600',
    'promoted standby writes compressx rows');
is($standby->safe_psql('postgres', q{SELECT count(*) FROM docs WHERE id < 5000}),
    (split('/', $before))[0], 'promoted standby kept every row');

$standby->stop;
$primary->stop;
done_testing();
