# Crash safety of recompress_table(): an immediate shutdown in the middle of
# the rewrite leaves the old state complete; a second run completes; a crash
# right after commit keeps the new state.  A heap table, pglz -> lz4; on a
# server built without lz4 (where a heap table has pglz only) a compressx
# table, pglz -> zstd.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', "default_toast_compression = pglz\n");
$node->start;
my $heap = cx_has_lz4($node);
my $new = $heap ? 'lz4' : 'zstd';

$node->safe_psql('postgres', q{CREATE EXTENSION compressx});
$node->safe_psql('postgres', $heap
	? q{CREATE TABLE docs (id integer PRIMARY KEY, small text, body text)}
	: q{CREATE TABLE docs (id integer PRIMARY KEY, small text, body text) USING compressx;
	    SELECT compressx.set_column_codec('docs', 'body', 'pglz')});
$node->safe_psql('postgres', q{
    INSERT INTO docs
    SELECT i, 'doc ' || i, repeat('document body ' || i || ' words words ', 150 + i % 300)
    FROM generate_series(1, 3000) i;
    CREATE INDEX docs_small ON docs (small);
});

my $state_sql = cx_state_sql('docs');
# stored methods of body: heap through core, compressx from the stored forms
my $methods_sql = $heap
	? q{SELECT string_agg(m || '=' || n, ',' ORDER BY m)
	    FROM (SELECT pg_column_compression(body) m, count(*) n FROM docs GROUP BY 1) x}
	: q{SELECT string_agg(m || '=' || n, ',' ORDER BY m)
	    FROM compressx.column_stats('docs'), jsonb_each_text(methods) AS j(m, n) WHERE column_name = 'body'};
# the column's setting: attcompression (heap), compressx's setting
my $setting_sql = $heap
	? q{SELECT attcompression FROM pg_attribute WHERE attrelid = 'docs'::regclass AND attname = 'body'}
	: q{SELECT codec FROM compressx.column_settings WHERE relid = 'docs'::regclass AND attname = 'body'};

my $before = $node->safe_psql('postgres', $state_sql);
is($node->safe_psql('postgres', $methods_sql), 'pglz=3000', 'starts as pglz');
my $toast_before = $node->safe_psql('postgres',
    q{SELECT pg_relation_filenode(reltoastrelid::regclass) FROM pg_class WHERE relname = 'docs'});

# Start a slowed-down rewrite and crash while it is copying.
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/started/, qq{
    SET compressx.debug_rewrite_delay = '20ms';
    \\echo started
    SELECT * FROM recompress_table('docs', '$new');
});
ok( $node->poll_query_until('postgres', q{
        SELECT tuples_written > 100 FROM compressx.recompress_progress}),
    'rewrite is under way');
my $progress = $node->safe_psql('postgres',
    q{SELECT phase || ' ' || (heap_blks_scanned < heap_blks_total)::text FROM compressx.recompress_progress});
is($progress, 'rewriting true', 'progress is visible from another session, mid-table');

$node->stop('immediate');
$bg->{run}->kill_kill;
$node->start;

is($node->safe_psql('postgres', $state_sql), $before, 'data identical after crash mid-rewrite');
is($node->safe_psql('postgres', $methods_sql), 'pglz=3000', 'old state complete after crash');
is($node->safe_psql('postgres', $setting_sql), $heap ? '' : 'pglz', 'column setting rolled back');
is($node->safe_psql('postgres',
    q{SELECT pg_relation_filenode(reltoastrelid::regclass) FROM pg_class WHERE relname = 'docs'}),
    $toast_before, 'still the old TOAST relation');
is($node->safe_psql('postgres', q{SET enable_seqscan = off; SELECT count(*) FROM docs WHERE small = 'doc 77'}),
    '1', 'index usable after crash');

# A second run completes.
my $result = $node->safe_psql('postgres',
    qq{SELECT column_name || ':' || values_rewritten FROM recompress_table('docs', '$new') WHERE column_name = 'body'});
is($result, 'body:3000', 'second run rewrites every value');
is($node->safe_psql('postgres', $methods_sql), "$new=3000", "all values $new");
is($node->safe_psql('postgres', $state_sql), $before, 'data identical after second run');

# A crash right after commit keeps the new state.
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', $methods_sql), "$new=3000", 'new state survives a crash after commit');
is($node->safe_psql('postgres', $state_sql), $before, 'data identical after recovery');
is($node->safe_psql('postgres', q{SELECT count(*) FROM compressx.column_stats('docs') WHERE methods ? 'pglz'}),
    '0', 'column_stats agrees');

$node->stop;
done_testing();
