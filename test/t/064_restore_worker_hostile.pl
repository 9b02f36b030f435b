# Issue 33 A1, hostile review of the restore's worker (src/dictionaries/
# restored.c).  A plain role, eve, owns a table whose label names a
# dictionary no dump brings (any owner can write such a label); the
# automatic-dictionary worker then trains one as eve and re-encodes the
# table.
#  - Objects eve plants in public (writable by every role in databases
#    made before PostgreSQL 15) are not run by the worker, which works as
#    a superuser: an operator "=" (regclass, integer) matched the worker's
#    "WHERE relid = <oid>" exactly and ran as the superuser.
#  - Holding a row of each of several such tables, eve kept the worker
#    waiting one naptime per table, ahead of every other role's restored
#    table: now the waits of one owner's tables share one naptime per
#    pass, the others are left for the next pass.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use CxTest;

my $node = PostgreSQL::Test::Cluster->new('restore_worker_hostile');
$node->init;
$node->append_conf('postgresql.conf', "compressx.auto_dictionary_naptime = 2");
$node->start;

$node->safe_psql('postgres', q{
    CREATE ROLE eve LOGIN;
    CREATE EXTENSION compressx;
    GRANT CREATE ON SCHEMA public TO PUBLIC;   -- as before PostgreSQL 15
});

# eve's trap: an operator matching the worker's "relid = <oid>" exactly
$node->safe_psql('postgres', q{
    SET ROLE eve;
    CREATE TABLE public.eve_log (who name, super boolean);
    GRANT INSERT ON public.eve_log TO PUBLIC;
    CREATE FUNCTION public.eve_eq(regclass, integer) RETURNS boolean
    LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO public.eve_log
        SELECT current_user, rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user;
        IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
            EXECUTE 'ALTER ROLE eve SUPERUSER';
        END IF;
        RETURN $1::pg_catalog.oid OPERATOR(pg_catalog.=) $2::pg_catalog.oid;
    END $$;
    CREATE OPERATOR public.= (LEFTARG = regclass, RIGHTARG = integer, FUNCTION = public.eve_eq);
    CREATE TABLE public.et (id integer, doc text) USING compressx;
    SECURITY LABEL FOR compressx ON COLUMN public.et.doc
        IS 'v2 codec=zstd level=3 dict=0b7c5d4e-1111-4222-8333-944455556666';
    INSERT INTO public.et SELECT i, json_build_object('id', i, 'kind', 'kind ' || i % 7,
                                                      'note', 'a row of eve ' || i)::text
    FROM generate_series(1, 3000) i;
});
is($node->safe_psql('postgres', q{SELECT count(*) FROM compressx.column_settings
                                  WHERE relid = 'public.et'::regclass AND restored_at IS NOT NULL}),
	'1', 'the column waits for a dictionary');

# the worker (started by the insert) trains one after a naptime and
# re-encodes the table
my $t0 = time();
my $left = '1';
while (time() - $t0 < 60)
{
	$left = $node->safe_psql('postgres',
		q{SELECT count(*) FROM compressx.column_settings WHERE restored_at IS NOT NULL});
	last if $left eq '0';
	select(undef, undef, undef, 0.2);
}
is($left, '0', 'the worker handled the column');
is($node->safe_psql('postgres', q{SELECT dict_id IS NOT NULL FROM compressx.column_settings
                                  WHERE relid = 'public.et'::regclass}),
	't', 'it trained a dictionary');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'eve'}),
	'f', 'eve is no superuser');
is($node->safe_psql('postgres', q{SELECT count(*) FROM public.eve_log WHERE super}),
	'0', 'no object eve planted ran as a superuser');

# eve's three tables, alice's one, all waiting for a dictionary no dump
# brings; eve holds a row of each of hers
$node->safe_psql('postgres', q{
    CREATE ROLE alice LOGIN;
    GRANT CREATE ON SCHEMA public TO alice;
    ALTER ROLE eve NOSUPERUSER;
});
my $rows = q{SELECT i, json_build_object('id', i, 'kind', 'kind ' || i % 7,
                                        'note', 'a restored row ' || i, 'more', repeat('text ' || i % 11, 12))::text
             FROM generate_series(1, 3000) i};
my $eve = $node->background_psql('postgres', on_error_stop => 0);
$eve->query_safe('SET ROLE eve');
$eve->query_safe('SET compressx.auto_dictionary_worker = off');
for my $i (1 .. 3)
{
	$eve->query_safe(qq{CREATE TABLE public.e$i (id integer, doc text) USING compressx});
	$eve->query_safe(qq{SECURITY LABEL FOR compressx ON COLUMN public.e$i.doc
        IS 'v2 codec=zstd level=3 dict=0b7c5d4e-1111-4222-8333-94445555666$i'});
	$eve->query_safe(qq{INSERT INTO public.e$i $rows});
}
$eve->query_safe('BEGIN');
$eve->query_safe("SELECT id FROM public.e$_ WHERE id = 3000 FOR UPDATE") for 1 .. 3;
$node->safe_psql('postgres', qq{
    SET ROLE alice;
    CREATE TABLE public.a1 (id integer, doc text) USING compressx;
    SECURITY LABEL FOR compressx ON COLUMN public.a1.doc
        IS 'v2 codec=zstd level=3 dict=0b7c5d4e-1111-4222-8333-944455556670';
    INSERT INTO public.a1 $rows;
});
my $alice_sql = q{SELECT count(*) FROM compressx.column_settings
                  WHERE relid = 'public.a1'::regclass AND restored_at IS NOT NULL};
my $eve_sql = q{SELECT count(*) FROM compressx.column_settings
                WHERE relid::text ~ '^e[123]$' AND restored_at IS NOT NULL};
$t0 = time();
my ($alice_left, $eve_left) = ('1', '3');
while (time() - $t0 < 90)
{
	($alice_left, $eve_left) = split /\|/, $node->safe_psql('postgres', "SELECT ($alice_sql), ($eve_sql)");
	last if $alice_left eq '0';
	select(undef, undef, undef, 0.1);
}
my $took = time() - $t0;
is($alice_left, '0', "alice's table re-encoded (${took} s)");
isnt($eve_left, '0', "before eve's three tables were all waited for ($eve_left left)");
$eve->query_safe('COMMIT');
$eve->quit;

$node->stop;
done_testing();
