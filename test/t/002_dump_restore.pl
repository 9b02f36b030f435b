# pg_dump / pg_restore (plain, custom, and directory format with -j) keep
# compressx tables' access method, their per-column settings (mapped to the
# new OIDs and column numbers), their zstd dictionaries and their data.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;
# body: lz4 level 9, or pglz (no levels) on a server built without lz4
my $other = cx_other_codec($node);
my ($level, $level_arg) = $other eq 'lz4' ? ('9', '9') : ('-', 'NULL');
my $tmp = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres', qq{
    CREATE EXTENSION compressx;
    CREATE TABLE docs (id integer PRIMARY KEY, gone text, body text, meta jsonb, note text)
        USING compressx;
    INSERT INTO docs
    SELECT i, 'x', repeat('document body ' || i || ' ', 20 + i % 200),
           jsonb_build_object('i', i, 'pad', repeat('p', 100)),
           CASE WHEN i % 50 = 0 THEN (SELECT string_agg(md5(k::text || i), '') FROM generate_series(1, 300) k) END
    FROM generate_series(1, 2000) i;
    ALTER TABLE docs DROP COLUMN gone;           -- restored column numbers shift
    SELECT compressx.set_column_codec('docs', 'body', '$other', $level_arg);
    SELECT compressx.set_column_codec('docs', 'meta', 'zstd', 12, 16);
    ALTER TABLE docs RENAME COLUMN note TO remark;
    SELECT compressx.set_column_codec('docs', 'remark', 'pglz');
    VACUUM FULL docs;
    CREATE INDEX docs_body ON docs (md5(body));
});
# small JSON values compressed with a dictionary
$node->safe_psql('postgres', cx_dict_table_sql('jd'));

my $settings_sql = q{
    SELECT string_agg(s.relid::text || '.' || s.attname || '=' || s.codec || '/' ||
                      coalesce(s.level::text, '-') || '/' || coalesce(s.min_size::text, '-') || '/d' ||
                      coalesce(s.dict_id::text, '-') || '@' ||
                      (s.attnum = a.attnum)::text, ',' ORDER BY s.attname)
    FROM compressx.column_settings s
    JOIN pg_attribute a ON a.attrelid = s.relid AND a.attname = s.attname};
my $data_sql = cx_state_sql('docs') . ' UNION ALL ' . cx_state_sql('jd');
my $dict_sql = q{SELECT string_agg(dict_id || ':' || relid::text || '.' || attname || ':' || md5(dict), ',' ORDER BY dict_id)
                 FROM compressx.dictionaries};
my $am_sql = q{SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'docs'};

my $settings = $node->safe_psql('postgres', $settings_sql);
my $data = $node->safe_psql('postgres', $data_sql);
my $dicts = $node->safe_psql('postgres', $dict_sql);
my $jd_bytes_sql = q{SELECT stored_bytes FROM compressx.column_stats('jd') WHERE column_name = 'doc'};
my $jd_bytes = $node->safe_psql('postgres', $jd_bytes_sql);
like($settings, qr/docs\.body=$other\/$level\/-\/d-\@true/, 'settings before dump');
like($settings, qr/jd\.doc=zstd\/3\/-\/d1\@true/, 'dictionary setting before dump');
like($dicts, qr/^1:jd\.doc:[0-9a-f]{32}$/, 'one dictionary before dump');

cx_dump_restore_each($node, $tmp, sub {
    my ($label, $db) = @_;
    is($node->safe_psql($db, $am_sql), 'compressx', "$label: access method kept");
    is($node->safe_psql($db, $settings_sql), $settings, "$label: settings kept, on the right columns");
    is($node->safe_psql($db, $data_sql), $data, "$label: data identical");
    is($node->safe_psql($db, $dict_sql), $dicts, "$label: dictionaries kept, for the restored table");
    # the dictionary is used again, and new ones are numbered after it
    $node->safe_psql($db, 'VACUUM FULL jd');
    is($node->safe_psql($db, $data_sql), $data, "$label: data identical after re-encoding with the dictionary");
    is($node->safe_psql($db, $jd_bytes_sql), $jd_bytes, "$label: same stored size: the same dictionary is used");
    is($node->safe_psql($db, q{SELECT compressx.train_dictionary('jd', 'doc', 2048)}), '2',
        "$label: a new dictionary takes the next id");
    # the settings existed before the rows (labels, in pre-data); a rewrite keeps them
    $node->safe_psql($db, 'VACUUM FULL docs');
    is($node->safe_psql($db, qq{SELECT methods->>'$other' FROM compressx.column_stats('docs') WHERE column_name = 'body'}),
        '2000', "$label: settings apply to restored data");
    is($node->safe_psql($db, q{SET enable_seqscan = off; SELECT id FROM docs WHERE md5(body) = md5(repeat('document body 7 ', 27))}),
        '7', "$label: expression index works");
    # a rename right after the restore follows the right column
    $node->safe_psql($db, 'ALTER TABLE docs RENAME COLUMN meta TO info');
    is($node->safe_psql($db, q{SELECT codec || '/' || level FROM compressx.column_settings WHERE attname = 'info'}),
        'zstd/12', "$label: rename after restore follows the column");
});

# Restore into a database that already holds a dictionary with the same
# id.  Before 0.5.0 the restored dictionary row collided and the restored
# table's values were stored without one; since 0.5.0 dictionaries travel
# in the columns' security labels and are imported under a new id: the
# restore succeeds and a's values use a's own dictionary again.
$node->safe_psql('postgres', 'CREATE DATABASE da');
$node->safe_psql('da', 'CREATE EXTENSION compressx;' . cx_dict_table_sql('a'));
$node->safe_psql('postgres', 'CREATE DATABASE db');
$node->safe_psql('db', 'CREATE EXTENSION compressx;' . cx_dict_table_sql('b'));
my $a_data = $node->safe_psql('da', cx_state_sql('a'));
my $a_dict_sql = q{SELECT md5(d.dict) FROM compressx.column_settings s JOIN compressx.dictionaries d USING (dict_id)
                   WHERE s.relid = 'a'::regclass};
my $a_bytes_sql = q{SELECT stored_bytes FROM compressx.column_stats('a') WHERE column_name = 'doc'};
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/da.custom", '-d', $node->connstr('da') ], 'pg_dump da');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('db'), "$tmp/da.custom" ],
    'pg_restore into a database holding dictionary 1');
is($node->safe_psql('db', q{SELECT string_agg(relid::text, ',') FROM compressx.dictionaries WHERE dict_id = 1}),
   'b', 'dictionary 1 stays b\'s');
is($node->safe_psql('db', $a_dict_sql), $node->safe_psql('da', $a_dict_sql), 'a has its dictionary, under a new id');
is($node->safe_psql('db', $a_bytes_sql), $node->safe_psql('da', $a_bytes_sql), 'a is stored with it');
is($node->safe_psql('db', cx_state_sql('a')), $a_data, 'restored rows of a read back');
$node->safe_psql('db', 'DROP TABLE b');
is($node->safe_psql('db', cx_state_sql('a')), $a_data,
   'rows of a stay readable after b and its dictionary are dropped');
$node->safe_psql('db', 'VACUUM FULL a');
is($node->safe_psql('db', cx_state_sql('a')), $a_data, 'and after a rewrite');

$node->stop;
done_testing();
