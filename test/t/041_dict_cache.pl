# Each session's cache of digested dictionaries is bounded by
# compressx.dictionary_cache_memory (issue 27, item 2): a table whose rows
# name 150 dictionaries (a role can make as many as it likes on its own
# table) is read by another session with a small bound; the session keeps
# about the bound, not every dictionary, and every value reads back right
# after the evictions, for reads and for writes (a zstd level-19 digest
# alone larger than the bound).  With the default bound the same
# dictionaries all stay.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('dictcache');
$node->init;
$node->start;
cx_install_helpers($node);

# the documents are a function of their id, so that reads can be checked
my $doc = q{json_build_object('id', i, 'kind', 'kind ' || i % 7,
                              'note', 'a small document for the dictionary cache, row ' || i,
                              'pad', md5(i::text))::text};
(my $doc_of_id = $doc) =~ s/\bi\b/(id % 100000)/g;

# one 64 kB dictionary trained by the table's owner, then 149 copies of it
# under new ids, each the column's dictionary while one row is written
$node->safe_psql('postgres', qq{
    CREATE ROLE bob LOGIN;
    CREATE SCHEMA bob AUTHORIZATION bob;
    SET ROLE bob;
    CREATE TABLE bob.t (id integer, doc text) USING compressx;
    INSERT INTO bob.t SELECT i, $doc FROM generate_series(1, 20000) i;
    SELECT compressx.train_dictionary('bob.t', 'doc', 65536, 20000);
    INSERT INTO bob.t SELECT 100000 + i, $doc FROM generate_series(1, 1) i;
    RESET ROLE;
    DO \$\$
    DECLARE d integer;
    BEGIN
        FOR k IN 2..150 LOOP
            INSERT INTO compressx.dictionaries (relid, attname, dict, sample_values, sample_bytes)
            SELECT relid, attname, dict, sample_values, sample_bytes FROM compressx.dictionaries
            WHERE relid = 'bob.t'::regclass ORDER BY dict_id LIMIT 1
            RETURNING dict_id INTO d;
            UPDATE compressx.column_settings SET dict_id = d WHERE relid = 'bob.t'::regclass;
            INSERT INTO bob.t SELECT 100000 + k, doc FROM bob.t WHERE id = k;
        END LOOP;
    END \$\$;
});
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM compressx.dictionaries WHERE relid = 'bob.t'::regclass}),
	'150', '150 dictionaries');
is($node->safe_psql('postgres', q{
    SELECT count(DISTINCT s.dict_id) FROM compressx.column_settings s WHERE relid = 'bob.t'::regclass}),
	'1', 'the column names the last one');

# anonymous memory of the session's backend, in kB
my $anon_kb = q{(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
                              'RssAnon:\s+(\d+)'))[1]::integer};
# values that do not read back as written (rows over 100000 repeat rows 1-150)
my $wrong = qq{SELECT count(*) FROM bob.t WHERE doc IS DISTINCT FROM $doc_of_id};

# (before the bound, the session kept every dictionary: 24 MB for these)
my ($rc, $out, $err) = $node->psql('postgres', qq{
    SET compressx.dictionary_cache_memory = '1MB';
    \\o /dev/null
    SELECT count(*) FROM pg_class;   -- warm the catalog caches
    SELECT $anon_kb AS before \\gset
    ANALYZE bob.t;
    SELECT sum(length(doc)) FROM bob.t;
    \\o
    SELECT $anon_kb - :before, ($wrong);
    SELECT c.entries, c.bytes,
           (SELECT sum(total_bytes) FROM pg_backend_memory_contexts
            WHERE name = 'compressx dictionary cache')
    FROM compressx.dictionary_cache() c;
});
my ($growth, $wrong_small, $entries, $bytes, $cxt) = split /[|\n]/, $out;
is($err, '', 'no error');
is($wrong_small, '0', 'every value reads back right after evictions');
ok($growth < 8192, "reading 150 dictionaries with a 1 MB bound: the session grew by $growth kB");
ok($entries > 0 && $entries < 20, "a few dictionaries stay in the cache ($entries)");
ok($bytes <= 1024 * 1024, "the cache takes at most its bound ($bytes bytes)");
ok($cxt < 2 * 1024 * 1024, "its memory context holds less than 2 MB ($cxt bytes)");

# writes: the level-19 digest of one dictionary is larger than the bound;
# it is kept while in use, and dropped for the next one
my ($wrong_written, $w_entries, $w_bytes) = split /\|/, $node->safe_psql('postgres', qq{
    SET compressx.dictionary_cache_memory = '256kB';
    \\o /dev/null
    SELECT compressx.set_column_codec('bob.t', 'doc', 'zstd', 19);
    DO \$\$
    BEGIN
        FOR k IN 1..20 LOOP
            UPDATE compressx.column_settings
            SET dict_id = (SELECT dict_id FROM compressx.dictionaries WHERE relid = 'bob.t'::regclass
                           ORDER BY dict_id OFFSET k - 1 LIMIT 1)
            WHERE relid = 'bob.t'::regclass;
            INSERT INTO bob.t SELECT 200000 + k, doc FROM bob.t WHERE id = k;
        END LOOP;
    END \$\$;
    \\o
    SELECT ($wrong), entries, bytes FROM compressx.dictionary_cache();
});
is($wrong_written, '0', 'values written through a cache smaller than one digest read back right');
ok($w_entries >= 1 && $w_entries < 10, "the cache kept what it could ($w_entries entries, $w_bytes bytes)");
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM bob.t, compressx.value_storage('bob.t', bob.t.ctid, 'doc') v
    WHERE id > 200000 AND v.method = 'zstd' AND v.stored_bytes < v.raw_bytes}),
	'20', 'they are compressed');

# the default bound (64 MB) keeps a working set that fits: all 150
my ($d_entries, $d_max) = split /\|/, $node->safe_psql('postgres', qq{
    \\o /dev/null
    SELECT sum(length(doc)) FROM bob.t;
    \\o
    SELECT entries, max_bytes FROM compressx.dictionary_cache();
});
is($d_entries, '150', 'with the default bound every dictionary stays');
is($d_max, 64 * 1024 * 1024, 'the default bound is 64 MB');

$node->stop;
my $log_text = slurp_file($node->logfile);
unlike($log_text, qr/TRAP:|terminated by signal/, 'no assertion failure or crash');
done_testing();
