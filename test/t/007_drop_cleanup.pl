# Settings and dictionaries go with their table or column even where the
# sql_drop event trigger does not run (disabled here, as event_triggers =
# off would in 17; single-user mode), through compressx's object access
# hook.  A backend that has not loaded compressx has no hook: a row it
# leaves behind is not dumped, and a dump that holds such rows (made by an
# older version) restores with a warning per row instead of losing every
# table's settings.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('drops');
$node->init;
$node->start;
# only settings rows matter here: lz4, or zstd (which has levels too) on
# a server built without lz4
my $codec = cx_has_lz4($node) ? 'lz4' : 'zstd';
my $tmp = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres', qq{
    CREATE EXTENSION compressx;
    CREATE TABLE keep (id integer PRIMARY KEY, body text, note text) USING compressx;
    INSERT INTO keep SELECT i, repeat('kept row ' || i || ' ', 30), 'note ' || i
    FROM generate_series(1, 200) i;
    SELECT compressx.set_column_codec('keep', 'body', '$codec', 9);
    SELECT compressx.set_column_codec('keep', 'note', 'pglz', min_size => 8);
    CREATE TABLE gone (id integer, body text, extra text) USING compressx;
    SELECT compressx.set_column_codec('gone', 'body', '$codec');
    SELECT compressx.set_column_codec('gone', 'extra', 'pglz');
    CREATE TABLE single (id integer, body text) USING compressx;
    SELECT compressx.set_column_codec('single', 'body', '$codec');
    -- a heap table may hold settings for a later SET ACCESS METHOD compressx
    CREATE TABLE orphan (id integer, body text);
    SELECT compressx.set_column_codec('orphan', 'body', '$codec');
});
$node->safe_psql('postgres', cx_dict_table_sql('jd'));
$node->safe_psql('postgres', 'ALTER EVENT TRIGGER compressx_sql_drop DISABLE');

my %oid;
$oid{$_} = $node->safe_psql('postgres', "SELECT '$_'::regclass::oid") foreach qw(gone single orphan jd);
# "settings rows/dictionary rows" of a relation, by OID
sub rows_of
{
	my ($name) = @_;
	return $node->safe_psql('postgres', qq{
	    SELECT (SELECT count(*) FROM compressx.column_settings WHERE relid = $oid{$name}) || '/' ||
	           (SELECT count(*) FROM compressx.dictionaries WHERE relid = $oid{$name})});
}
my $settings_sql = q{
    SELECT string_agg(relid::text || '.' || attname || '=' || codec || '/' ||
                      coalesce(level::text, '-') || '/' || coalesce(min_size::text, '-'),
                      ',' ORDER BY relid::text, attname)
    FROM compressx.column_settings};
is(rows_of('gone'), '2/0', 'settings of two columns before the drops');
is(rows_of('jd'), '1/1', 'a setting and a dictionary before the drops');

# Each drop in a session that has read a compressx table, so the library
# (and its hook) is loaded; the event trigger is disabled.
$node->safe_psql('postgres', 'SELECT count(*) FROM gone; ALTER TABLE gone DROP COLUMN extra');
is($node->safe_psql('postgres', "SELECT string_agg(attname, ',') FROM compressx.column_settings WHERE relid = $oid{gone}"),
	'body', 'a dropped column loses its setting, the other column keeps its own');
$node->safe_psql('postgres', 'SELECT count(*) FROM gone; DROP TABLE gone');
is(rows_of('gone'), '0/0', 'a dropped table loses its settings without the event trigger');
$node->safe_psql('postgres', 'SELECT count(*) FROM jd; DROP TABLE jd');
is(rows_of('jd'), '0/0', 'a dropped table loses its settings and dictionaries without the event trigger');
# a rolled-back drop keeps them
$node->safe_psql('postgres', 'SELECT count(*) FROM keep; BEGIN; DROP TABLE keep; ROLLBACK');
my $settings = $node->safe_psql('postgres', $settings_sql);
like($settings, qr/^keep\.body=$codec\/9\/-,keep\.note=pglz\/-\/8,/, 'a rolled-back drop keeps the settings');

# Single-user mode runs no event triggers.
$node->stop;
my ($out, $err);
ok(IPC::Run::run([ 'postgres', '--single', '-F', '-c', 'exit_on_error=true', '-D', $node->data_dir, 'postgres' ],
		'<', \"SELECT count(*) FROM single;\nDROP TABLE single;\n", '>', \$out, '2>', \$err),
	'DROP TABLE in single-user mode')
  or diag($err);
$node->start;
is(rows_of('single'), '0/0', 'a table dropped in single-user mode loses its settings');

# A new session that has not loaded compressx drops a heap table: no hook,
# no event trigger, and the row stays behind, naming a relation that is gone.
$node->safe_psql('postgres', 'DROP TABLE orphan');
is(rows_of('orphan'), '1/0', 'a backend without compressx loaded leaves the row behind');
$settings = $node->safe_psql('postgres', $settings_sql);
like($settings, qr/(^|,)$oid{orphan}\.body=$codec/, 'the row names its relation by OID');

# pg_dump leaves that row out, so restores keep every other setting.
my $kept = "keep.body=$codec/9/-,keep.note=pglz/-/8";
cx_dump_restore_each($node, $tmp, sub {
	my ($label, $db) = @_;
	is($node->safe_psql($db, $settings_sql), $kept, "$label: every existing table's settings restored, the orphan left out");
});

# A dump holding rows of a dropped table and of a dropped column (as older
# versions dumped them) restores, skipping those rows with a warning each.
open(my $in, '<', "$tmp/dump.sql") or die "cannot read dump: $!";
my $sql = do { local $/; <$in> };
close($in);
unlike($sql, qr/^$oid{orphan}\t/m, 'pg_dump leaves out the row of the dropped table');
# (the columns after relid, attname, attnum and codec: NULL, but
# auto_dictionary, since 0.4.0, false)
my ($columns) = $sql =~ /^COPY compressx\.column_settings \((.*)\) FROM stdin;$/m;
my @columns = split /, /, $columns;
my $rest = join('', map { $_ eq 'auto_dictionary' ? "\tf" : "\t\\N" } @columns[4 .. $#columns]);
ok($sql =~ s/^(COPY compressx\.column_settings \(.*\n)/$1$oid{orphan}\tbody\t2\t$codec$rest\npublic.keep\tdropped_col\t7\tpglz$rest\n/m,
	'rows of a dropped table and column added to the plain dump');
open(my $outf, '>', "$tmp/old.sql") or die "cannot write dump: $!";
print $outf $sql;
close($outf);
$node->safe_psql('postgres', 'CREATE DATABASE restored_old');
my ($stdout, $stderr);
$node->psql('restored_old', undef, extra_params => [ '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$tmp/old.sql" ],
	stdout => \$stdout, stderr => \$stderr, on_error_die => 1);
like($stderr, qr/WARNING:  skipping compressx settings of column "body" of relation with OID $oid{orphan}, which does not exist/,
	'old dump: the dropped table\'s row is skipped with a warning');
like($stderr, qr/WARNING:  skipping compressx settings of column "dropped_col" of relation (public\.)?keep, which does not exist/,
	'old dump: the dropped column\'s row is skipped with a warning');
unlike($stderr, qr/ERROR/, 'old dump: no error');
is($node->safe_psql('restored_old', $settings_sql), $kept, 'old dump: every existing table\'s settings restored');

$node->stop;
done_testing();
