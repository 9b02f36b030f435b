# Every way of restoring a dump stores each column as its settings say
# (issue 28 A4): serial pg_restore, pg_restore -j 2 (custom and directory
# format), pg_dump | psql, and pg_dump -t into a database that has the
# extension.  Settings travel in pre-data as security labels of provider
# compressx, so a parallel restore cannot load a table's rows before its
# settings exist.  Per column this compares the restored database with the
# dumped one: the stored codec mix, the stored bytes (within 10%), the
# settings compressx.column_codecs shows (status included), the bytes of the
# column's dictionary, and compressx.verify().
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('restore_settings');
$node->init;
# restored dictionaries are re-encoded (or trained) by the worker within
# about a naptime
$node->append_conf('postgresql.conf', "compressx.auto_dictionary_naptime = 2");
$node->start;
# its columns cover lz4 and lz4 with a dictionary
plan skip_all => 'the server was built without lz4 (this test stores lz4 values)'
  unless cx_has_lz4($node);
my $tmp = PostgreSQL::Test::Utils::tempdir;

# JSON-like values of about 150-300 bytes that a dictionary helps, and
# documents of a few kB.
my $json = q{json_build_object('id', i, 'kind', 'kind ' || i % 7, 'state', 'state ' || i % 5,
                               'note', 'a small document with a dictionary, row ' || i,
                               'tags', json_build_array('alpha', 'beta', 'gamma' || i % 3))::text};
my $doc = q{repeat('document body ' || i || ' lorem ipsum dolor sit amet ', 20 + i % 60)};
$node->safe_psql('postgres', qq{
    CREATE EXTENSION compressx;
    -- zstd 19, none and pglz on columns of one table; attcompression lz4
    -- left over on the zstd column (the restore must not fall back to it)
    CREATE TABLE mix (id integer PRIMARY KEY, z19 text COMPRESSION lz4, raw text, pz text)
        USING compressx;
    SELECT compressx.set_column_codec('mix', 'z19', 'zstd', 19);
    SELECT compressx.set_column_codec('mix', 'raw', 'none');
    SELECT compressx.set_column_codec('mix', 'pz', 'pglz');
    INSERT INTO mix SELECT i, $doc, $doc, $doc FROM generate_series(1, 3000) i;
    -- lz4 with a dictionary
    CREATE TABLE l4d (id integer PRIMARY KEY, doc text) USING compressx;
    SELECT compressx.set_column_codec('l4d', 'doc', 'lz4');
    INSERT INTO l4d SELECT i, $json FROM generate_series(1, 3000) i;
    SELECT compressx.train_dictionary('l4d', 'doc', 4096);
    -- zstd with a dictionary, level 7
    CREATE TABLE zd (id integer PRIMARY KEY, doc text) USING compressx;
    SELECT compressx.set_column_codec('zd', 'doc', 'zstd', 7, 16);
    INSERT INTO zd SELECT i, replace($json, 'kind', 'sort') FROM generate_series(1, 3000) i;
    SELECT compressx.train_dictionary('zd', 'doc', 4096);
    -- zstd with a dictionary in a schema whose rows a serial restore loads
    -- before compressx's own data (pg_dump orders data by schema name)
    CREATE SCHEMA app;
    CREATE TABLE app.ad (id integer PRIMARY KEY, doc text) USING compressx;
    SELECT compressx.set_column_codec('app.ad', 'doc', 'zstd', 5);
    INSERT INTO app.ad SELECT i, replace($json, 'note', 'memo') FROM generate_series(1, 3000) i;
    SELECT compressx.train_dictionary('app.ad', 'doc', 4096);
    -- a column whose type changed to one that cannot be compressed: its
    -- settings (and label) go, so a strict restore does not fail on it
    CREATE TABLE ty (id integer, c text) USING compressx;
    SELECT compressx.set_column_codec('ty', 'c', 'zstd', 5);
    INSERT INTO ty VALUES (1, '1');
    ALTER TABLE ty ALTER COLUMN c TYPE integer USING c::integer;
    -- a partitioned table with its setting on the parent
    CREATE TABLE pt (id integer, body text) PARTITION BY RANGE (id);
    CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (1500) USING compressx;
    CREATE TABLE pt2 PARTITION OF pt FOR VALUES FROM (1500) TO (3001) USING compressx;
    SELECT compressx.set_column_codec('pt', 'body', 'pglz');
    INSERT INTO pt SELECT i, $doc FROM generate_series(1, 3000) i;
    -- a heap table with a pending setting
    CREATE TABLE hp (id integer PRIMARY KEY, body text);
    SELECT compressx.set_column_codec('hp', 'body', 'zstd', 19);
    INSERT INTO hp SELECT i, $doc FROM generate_series(1, 300) i;
    VACUUM FULL mix;
    VACUUM FULL l4d;
    VACUUM FULL zd;
    VACUUM FULL app.ad;
});

my @tables = qw(mix l4d zd app.ad pt1 pt2 hp);

# per column: codec mix and stored bytes
sub stats
{
	my ($db, @which) = @_;
	my %r;
	foreach my $t (@which ? @which : @tables)
	{
		foreach my $line (split /\n/, $node->safe_psql($db, qq{
		    SELECT column_name, methods, stored_bytes FROM compressx.column_stats('$t')}))
		{
			my ($col, $methods, $bytes) = split /\|/, $line;
			$r{"$t.$col"} = [ $methods, $bytes ];
		}
	}
	return \%r;
}

my $codecs_sql = q{
    SELECT string_agg(table_name || '.' || column_name || '=' || codec || '/' || coalesce(level::text, '-') || '/' ||
                      min_size || '/' || explicit || '/' || (dictionary IS NOT NULL) || '/' || status, E'\n'
                      ORDER BY table_name, column_name)
    FROM compressx.column_codecs WHERE table_name <> 'pt'};
# each column's current dictionary, and the settings of the parent pt
my $dicts_sql = q{
    SELECT string_agg(s.relid::text || '.' || s.attname || '=' || s.codec || '/' || coalesce(s.level::text, '-') ||
                      '/' || coalesce(md5(d.dict), '-'), E'\n' ORDER BY s.relid::text, s.attname)
    FROM compressx.column_settings s LEFT JOIN compressx.dictionaries d ON d.dict_id = s.dict_id};
my $data_sql = join(' UNION ALL ', map { cx_state_sql($_) } @tables);

my $src_stats = stats('postgres');
my $src_codecs = $node->safe_psql('postgres', $codecs_sql);
my $src_dicts = $node->safe_psql('postgres', $dicts_sql);
my $src_data = $node->safe_psql('postgres', $data_sql);
like($src_stats->{'mix.z19'}[0], qr/^\{"zstd": 3000\}$/, 'source: z19 stored zstd');
like($src_stats->{'l4d.doc'}[0], qr/lz4/, 'source: l4d stored lz4');
like($src_dicts, qr/^l4d\.doc=lz4\/-\/[0-9a-f]{32}$/m, 'source: l4d has a dictionary');
like($src_dicts, qr/^zd\.doc=zstd\/7\/[0-9a-f]{32}$/m, 'source: zd has a dictionary');
my @md5 = $src_dicts =~ /\/([0-9a-f]{32})$/mg;
isnt($md5[0], $md5[1], 'source: the two dictionaries differ');
like($src_codecs, qr/^hp\.body=zstd\/19\/.*pending/m, 'source: hp pending');

# compare database $db with the source, per column
sub check_db
{
	my ($label, $db, @only) = @_;
	my $st = stats($db, @only);
	my %want = map { $_ => 1 } (@only ? @only : @tables);
	foreach my $key (sort keys %$src_stats)
	{
		my ($t) = $key =~ /^(.*)\.[^.]+$/;
		next unless $want{$t};
		my ($m, $b) = @{ $src_stats->{$key} };
		is($st->{$key}[0], $m, "$label: $key stored with the same codecs");
		my $rb = $st->{$key}[1] // 0;
		ok($b == 0 ? $rb == 0 : abs($rb - $b) <= $b * 0.1,
			"$label: $key stored bytes $rb within 10% of $b");
	}
	my $re = join('|', map { my $b = $_; $b =~ s/^.*\.//; (quotemeta($_), $b) } keys %want);
	my $filter = sub { join("\n", grep { /^($re)\./ } split /\n/, $_[0]) };
	is($filter->($node->safe_psql($db, $codecs_sql)), $filter->($src_codecs),
		"$label: column_codecs as in the source");
	my $dre = $re . ($want{pt1} ? '|pt' : '');
	my $dfilter = sub { join("\n", grep { /^($dre)\./ } split /\n/, $_[0]) };
	if ($label =~ /-t/)
	{
		# pg_dump -t carries no extension data: a dictionary trained anew
		my $mask = sub { (my $x = $_[0]) =~ s/\/[0-9a-f]{32}$/\/<trained>/mg; $x };
		is($mask->($dfilter->($node->safe_psql($db, $dicts_sql))), $mask->($dfilter->($src_dicts)),
			"$label: settings as in the source, a dictionary where it had one");
	}
	else
	{
		is($dfilter->($node->safe_psql($db, $dicts_sql)), $dfilter->($src_dicts),
			"$label: settings and dictionary bytes as in the source");
	}
	# one line per table, in whatever order the UNION ALL returns them (17
	# may run it as a parallel append)
	is(join("\n", sort split /\n/, $node->safe_psql($db, $data_sql)), join("\n", sort split /\n/, $src_data),
		"$label: data identical") unless @only;
	my $verify_sql = join(' UNION ALL ', map { "SELECT count(*) FROM compressx.verify('$_')" } sort keys %want);
	is($node->safe_psql($db, "SELECT sum(count) FROM ($verify_sql) v"), '0', "$label: verify finds nothing");
	return;
}

# Wait until the worker has re-encoded (or trained) every restored column
# (restored_at cleared); returns the seconds it took after the restore.
sub settle
{
	my ($label, $db) = @_;
	my $t0 = time();
	my $left;
	for (my $i = 0; $i < 600; $i++)
	{
		$left = $node->safe_psql($db, 'SELECT count(*) FROM compressx.column_settings WHERE restored_at IS NOT NULL');
		last if $left eq '0';
		select(undef, undef, undef, 0.1);
	}
	is($left, '0', "$label: the restored columns settled");
	my $s = time() - $t0;
	diag("$label: restored values re-encoded ${s} s after the restore");
	return $s;
}

# A schema-only dump holds no dictionary byte: labels name keys only
$node->command_ok([ 'pg_dump', '--schema-only', '-f', "$tmp/schema.sql", '-d', $node->connstr('postgres') ],
	'pg_dump --schema-only');
{
	my $schema = slurp_file("$tmp/schema.sql");
	my @dicts = $schema =~ /dict=(\S+?)'/g;
	ok(@dicts >= 3, 'schema-only dump: labels name dictionaries');
	is(scalar(grep { !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/ } @dicts), 0,
		'schema-only dump: every dict= is a key, not bytes');
	unlike($schema, qr/small document|ratio=/, 'schema-only dump: nothing of the rows');
}

$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/dump.custom", '-d', $node->connstr('postgres') ], 'pg_dump -Fc');
$node->command_ok([ 'pg_dump', '-Fd', '-j', '2', '-f', "$tmp/dump.dir", '-d', $node->connstr('postgres') ], 'pg_dump -Fd');
$node->command_ok([ 'pg_dump', '-Fp', '-f', "$tmp/dump.sql", '-d', $node->connstr('postgres') ], 'pg_dump -Fp');

my @restores = (
	[ 'serial pg_restore', [ "$tmp/dump.custom" ] ],
	[ 'pg_restore -j 2', [ '-j', '2', "$tmp/dump.custom" ] ],
	[ 'pg_restore -j 2 -Fd', [ '-j', '2', "$tmp/dump.dir" ] ],
	[ 'pg_dump | psql', undef ],
);
my $n = 0;
foreach my $r (@restores)
{
	my ($label, $args) = @$r;
	my $db = 'r' . $n++;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	if ($args)
	{
		$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr($db), @$args ], $label);
	}
	else
	{
		$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr($db),
							'-f', "$tmp/dump.sql" ], $label);
	}
	settle($label, $db);
	check_db($label, $db);
}

# A4: a strict restore (one transaction, exit on error) of the whole dump
$node->safe_psql('postgres', 'CREATE DATABASE rstrict');
$node->command_ok([ 'pg_restore', '--single-transaction', '--exit-on-error', '-d', $node->connstr('rstrict'),
					"$tmp/dump.custom" ], 'pg_restore --single-transaction --exit-on-error');
settle('strict', 'rstrict');

# pg_dump -t into a database that has the extension (and another table
# holding dictionary ids of its own)
$node->safe_psql('postgres', 'CREATE DATABASE tdb');
$node->safe_psql('tdb', 'CREATE EXTENSION compressx;' . cx_dict_table_sql('other'));
$node->safe_psql('tdb', 'CREATE SCHEMA app');
foreach my $t (qw(mix l4d zd app.ad))
{
	$node->command_ok([ 'pg_dump', '-t', $t, '-f', "$tmp/t_$t.sql", '-d', $node->connstr('postgres') ], "pg_dump -t $t");
	$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('tdb'),
						'-f', "$tmp/t_$t.sql" ], "psql < pg_dump -t $t");
}
settle('pg_dump -t', 'tdb');
check_db('pg_dump -t', 'tdb', qw(mix l4d zd app.ad));

# A dump holding no compressx table (a heap table with a pending setting, a
# partitioned table whose parent comes first), without owners (no ALTER
# TABLE before the labels): the session restoring it has not used compressx
# before the first label, whose event trigger loads the library.
$node->command_ok([ 'pg_dump', '-O', '-t', 'hp', '-t', 'pt*', '-f', "$tmp/t_hp.sql", '-d', $node->connstr('postgres') ],
	'pg_dump -O -t hp -t pt*');
$node->safe_psql('postgres', 'CREATE DATABASE tdb2');
$node->safe_psql('tdb2', 'CREATE EXTENSION compressx');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('tdb2'),
					'-f', "$tmp/t_hp.sql" ], "psql < pg_dump -O -t hp -t pt*");
settle('pg_dump -t hp pt', 'tdb2');
check_db('pg_dump -t hp pt', 'tdb2', qw(hp pt1 pt2));

# A dump taken by 0.4.0 carries settings and dictionaries as rows of the
# configuration tables, and no labels: it restores as before (serially),
# and the rows loaded give the columns their labels (the dictionary's row
# comes after the settings row that names it).
$node->safe_psql('postgres', 'CREATE DATABASE v040');
$node->safe_psql('v040', qq{
    CREATE EXTENSION compressx VERSION '0.4.0';
    CREATE TABLE old (id integer PRIMARY KEY, doc text) USING compressx;
    SELECT compressx.set_column_codec('old', 'doc', 'zstd', 9);
    INSERT INTO old SELECT i, $json FROM generate_series(1, 3000) i;
    SELECT compressx.train_dictionary('old', 'doc', 4096);
    VACUUM FULL old;
    CREATE TABLE oldh (id integer, body text);
    SELECT compressx.set_column_codec('oldh', 'body', 'pglz');
});
my $old_sql = q{SELECT string_agg(s.relid::text || '.' || s.attname || '=' || s.codec || '/' || coalesce(s.level::text, '-')
                || '/' || coalesce(md5(d.dict), '-'), ',' ORDER BY s.relid::text, s.attname)
                FROM compressx.column_settings s LEFT JOIN compressx.dictionaries d USING (dict_id)};
my $labels_sql = q{SELECT string_agg(objoid::regclass::text || '.' || objsubid || '=' ||
                   regexp_replace(label, 'dict=[0-9a-f-]{36}$', 'dict=<key>'), ',' ORDER BY objoid::regclass::text, objsubid)
                   FROM pg_seclabel WHERE provider = 'compressx'};
my $old = $node->safe_psql('v040', $old_sql);
is($node->safe_psql('v040', $labels_sql), '', '0.4.0 writes no labels');
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/v040.custom", '-d', $node->connstr('v040') ], 'pg_dump of 0.4.0');
$node->safe_psql('postgres', 'CREATE DATABASE v040r');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('v040r'), "$tmp/v040.custom" ],
	'serial pg_restore of a 0.4.0 dump');
is($node->safe_psql('v040r', $old_sql), $old, '0.4.0 dump: settings and dictionary restored');
is($node->safe_psql('v040r', $labels_sql), 'old.2=v2 codec=zstd level=9 dict=<key>,oldh.2=v2 codec=pglz',
	'0.4.0 dump: the restored rows got their labels');
is($node->safe_psql('v040r', q{SELECT methods FROM compressx.column_stats('old') WHERE column_name = 'doc'}),
	$node->safe_psql('v040', q{SELECT methods FROM compressx.column_stats('old') WHERE column_name = 'doc'}),
	'0.4.0 dump: stored alike');
# ALTER EXTENSION UPDATE labels the settings made before
$node->safe_psql('v040', 'ALTER EXTENSION compressx UPDATE');
is($node->safe_psql('v040', $labels_sql), 'old.2=v2 codec=zstd level=9 dict=<key>,oldh.2=v2 codec=pglz',
	'update to 0.5.0 labels the existing settings');
is($node->safe_psql('v040', 'SELECT count(*) FROM compressx.dictionary_dump'), '1',
	'update to 0.5.0 copies the dictionary for dumps');
# DROP EXTENSION takes the labels with it (a heap table's would otherwise
# make the next restore fail)
$node->safe_psql('v040', 'DROP TABLE old; DROP EXTENSION compressx');
is($node->safe_psql('v040', 'SELECT count(*) FROM pg_seclabel'), '0', 'DROP EXTENSION deletes the labels');

$node->stop;
done_testing();
