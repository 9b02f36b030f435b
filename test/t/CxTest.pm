# Helpers shared by compressx's TAP tests.
package CxTest;
use strict;
use warnings;
use Exporter 'import';
use Test::More;

our @EXPORT = qw(cx_install_helpers cx_toast_referenced_ok);

# Create the extension and toast_values(rel): distinct values in the
# table's TOAST relation.
sub cx_install_helpers
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
	    CREATE EXTENSION compressx;
	    CREATE FUNCTION toast_values(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
	    DECLARE n bigint;
	    BEGIN
	        EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
	                       (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel)) INTO n;
	        RETURN n;
	    END $$;
	});
}

# After VACUUM, the out-of-line values rows reference (compressx references
# and core TOAST pointers, from stored forms) are all the TOAST relation
# holds: nothing orphaned.
sub cx_toast_referenced_ok
{
	my ($node, $table, $label) = @_;
	$node->safe_psql('postgres', "VACUUM $table");
	is($node->safe_psql('postgres',
		"SELECT (SELECT coalesce(sum(external_values), 0) FROM compressx.column_stats('$table')) = toast_values('$table')"),
		't', "$label: every TOAST value is referenced");
}

1;
