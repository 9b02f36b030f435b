# Every SQL block of README.md's "Common tasks" runs as printed (issue 34:
# "the quick start and every README task run as printed"), each on the
# tables its heading speaks of: `docs` (a heap table of documents, moved to
# compressx where the task is about a compressx table) and `events` (JSON
# events on compressx).  What a task's comments promise is checked where it
# is a fact: level 19 in effect after the online call, the dictionary used
# by the rewrite, the NOTICE's statements, verify's empty answer, the
# settings left behind, DROP EXTENSION refused while a compressx table
# remains.  A block README gains or renames fails here until it has a case.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $readme = slurp_file("$FindBin::RealBin/../../README.md");
my ($tasks) = $readme =~ /^## Common tasks\n(.*?)^## /ms;
ok(defined $tasks, 'README has a Common tasks section');

# heading => its SQL block
my %block;
my @order;
while ($tasks =~ /^\*\*([^*]+)\*\*\n\n```sql\n(.*?)^```/msg)
{
	$block{$1} = $2;
	push @order, $1;
}
note('tasks with SQL: ' . join('; ', @order));

my $node = PostgreSQL::Test::Cluster->new('tasks');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\ndefault_toast_compression = pglz");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION compressx');

my $make_docs = q{
    DROP TABLE IF EXISTS docs;
    CREATE TABLE docs (id int PRIMARY KEY, body text);
    INSERT INTO docs
    SELECT g, string_agg(format('<p>Section %s of document %s: %s</p>', s, g, md5((g * s % 97)::text)), E'\n')
    FROM generate_series(1, 400) g, generate_series(1, 60) s GROUP BY g;
    ANALYZE docs;
};
my $make_events = q{
    DROP TABLE IF EXISTS events;
    CREATE TABLE events (id bigint PRIMARY KEY, payload jsonb) USING compressx;
    INSERT INTO events
    SELECT i, jsonb_build_object('event_id', md5(i::text)::uuid,
        'level', (ARRAY['info', 'warn', 'error'])[1 + i % 3],
        'service', (ARRAY['checkout', 'cart', 'auth'])[1 + i % 3],
        'path', '/api/v2/orders/' || i % 500, 'status', 200, 'ms', i * 31 % 997)
    FROM generate_series(1, 5000) i;
};

# run one task's block as printed; returns (stdout, stderr)
sub task
{
	my ($name, %opt) = @_;
	my $sql = $block{$name};
	ok(defined $sql, "README has the task \"$name\"") or return ('', '');
	my ($rc, $out, $err) = $node->psql('postgres', $sql,
		on_error_stop => $opt{may_fail} ? 0 : 1,
		extra_params => ['-v', 'VERBOSITY=default']);
	is($rc, 0, "\"$name\" runs as printed") or diag($err) unless $opt{may_fail};
	return ($out, $err);
}

my ($out, $err);

# ratios: on a heap table of documents
$node->safe_psql('postgres', $make_docs);
($out) = task('See what compression buys, per column and per table');
like($out, qr/docs/, 'the ratio views show docs');

# another codec for a heap table's data, offline then online (a server
# built without lz4, 16's here, refuses the task's codec: not run there)
SKIP:
{
	skip 'the server was built without lz4', 3 unless cx_has_lz4($node);
	($out, $err) = task('Apply another codec to the data a heap table already has');
	is($node->safe_psql('postgres', q{
	    SELECT methods ? 'lz4' FROM compressx.column_stats('docs') WHERE column_name = 'body'}),
		't', 'the documents are stored lz4');
}

# one column of a compressx table at level 19
$node->safe_psql('postgres', $make_docs . 'ALTER TABLE docs SET ACCESS METHOD compressx;');
($out) = task('Give one column of a compressx table its own codec and level');
like($out, qr/in effect/, 'the column\'s level 19 is in effect after the online call');
like($out, qr/\|\s*19\s*\|/, 'column_codecs shows level 19');

# a dictionary trained by hand, applied to the values already there
$node->safe_psql('postgres', $make_events);
($out) = task('Train a dictionary once, by hand');
is($node->safe_psql('postgres', q{
    SELECT status FROM compressx.column_codecs WHERE table_name = 'events' AND column_name = 'payload'}),
	'in effect', 'the rewrite applied the new dictionary to the values already there');

# progress views: each query runs (nothing runs beside it here)
task('Watch a long operation');

# the room back after an online rewrite: the NOTICE names what the block runs
$node->safe_psql('postgres', $make_docs . 'ALTER TABLE docs SET ACCESS METHOD compressx;');
($out, $err) = task('Give the room back after an online rewrite');
like($err, qr/^VACUUM public\.docs;$/m, 'the NOTICE lists VACUUM public.docs');
like($err, qr/^REINDEX INDEX CONCURRENTLY public\.docs_pkey;$/m,
	'the NOTICE lists REINDEX INDEX CONCURRENTLY public.docs_pkey');

($out) = task('Check stored data');
is($out, '', 'verify answers no row');

# back to heap: the NOTICE of the settings left behind; DROP EXTENSION is
# refused while events is still compressx, and goes once it is not
($out, $err) = task('Move a table back to heap, and uninstall', may_fail => 1);
like($out, qr/docs/, 'the query lists docs among the compressx tables');
like($err, qr/keeps compressx settings/, 'the move names the settings left behind');
like($err, qr/events/, 'DROP EXTENSION names the compressx table that remains');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_extension WHERE extname = 'compressx'}),
	'1', 'the extension stays while a compressx table remains');
is($node->safe_psql('postgres', q{SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'docs'}),
	'heap', 'docs is heap again');
$node->safe_psql('postgres', q{CALL compressx.recompress_online('events', access_method => 'heap')});
$node->safe_psql('postgres', 'DROP EXTENSION compressx');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_extension WHERE extname = 'compressx'}),
	'0', 'DROP EXTENSION goes once no compressx table remains');

# every block of the section was run above
my %ran = map { $_ => 1 } (
	'See what compression buys, per column and per table',
	'Apply another codec to the data a heap table already has',
	'Give one column of a compressx table its own codec and level',
	'Train a dictionary once, by hand',
	'Watch a long operation',
	'Give the room back after an online rewrite',
	'Check stored data',
	'Move a table back to heap, and uninstall');
is(join('; ', grep { !$ran{$_} } @order), '', 'no task of README is left unchecked');

$node->stop;
done_testing();
