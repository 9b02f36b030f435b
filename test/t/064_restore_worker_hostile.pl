# Issue 33 A1, hostile review of the restore's worker (src/dictionaries/
# restored.c).  A plain role, eve, owns a table whose label names a
# dictionary no dump brings (any owner can write such a label); the
# automatic-dictionary worker then trains one as eve and re-encodes the
# table.
#  - Objects eve plants in public (writable by every role in databases
#    made before PostgreSQL 15) are not run by the worker, which works as
#    a superuser: an operator "=" (regclass, integer) matched the worker's
#    "WHERE relid = <oid>" exactly and ran as the superuser.
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

$node->stop;
done_testing();
