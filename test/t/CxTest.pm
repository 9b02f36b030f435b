# Helpers shared by compressx's TAP tests.
package CxTest;
use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Test::More;

our @EXPORT = qw(cx_install_helpers cx_toast_referenced_ok cx_state_sql cx_dict_table_sql
  cx_dump_restore_each cx_tuple_data_offset cx_file_tuples cx_read_at cx_write_at
  cx_disk_edit_node cx_readable_sql cx_has_lz4 cx_other_codec);

# cx_has_lz4(NODE): whether the server of the running NODE was built with
# lz4 (the PostgreSQL 16 builds the suite runs on were not; compressx
# refuses lz4 there, sql/server_lz4.sql tests that).
sub cx_has_lz4
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
	    SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression'}) eq 't';
}

# cx_other_codec(NODE): the codec a test uses as "a codec in core's format
# other than compressx's default (zstd)": lz4 where the server has it,
# else pglz.  Tests that only need some codec other than zstd use it, so
# that they run on a server built without lz4 too.
sub cx_other_codec
{
	my ($node) = @_;
	return cx_has_lz4($node) ? 'lz4' : 'pglz';
}

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

# SQL giving a table's state as "rows/md5 of every row in id order", to
# compare before and after (or primary and standby).
sub cx_state_sql
{
	my ($table) = @_;
	return "SELECT count(*) || '/' || md5(string_agg(t::text, ',' ORDER BY id)) FROM $table t";
}

# SQL making a compressx table of 2000 small JSON documents (id, doc) whose
# values are compressed with a 2 kB dictionary trained on them.
sub cx_dict_table_sql
{
	my ($table) = @_;
	return qq{
	    CREATE TABLE $table (id integer PRIMARY KEY, doc text) USING compressx;
	    INSERT INTO $table SELECT i, json_build_object('id', i, 'kind', 'kind ' || i % 7,
	                                                   'note', 'small document with a dictionary, row ' || i)::text
	    FROM generate_series(1, 2000) i;
	    SELECT compressx.train_dictionary('$table', 'doc', 2048);
	    VACUUM FULL $table;
	};
}

# Dump database postgres of $node in each format pg_dump has (plain,
# custom, directory with -j 2) into $dir, restore each into a new database
# (restored0, restored1, ...), and call $check->($label, $dbname) on it.
sub cx_dump_restore_each
{
	my ($node, $dir, $check) = @_;
	my @formats = (
		[ 'plain', [ '-Fp', '-f', "$dir/dump.sql" ], undef ],
		[ 'custom', [ '-Fc', '-f', "$dir/dump.custom" ], [ "$dir/dump.custom" ] ],
		[ 'directory -j 2', [ '-Fd', '-j', '2', '-f', "$dir/dump.dir" ], [ '-j', '2', "$dir/dump.dir" ] ],
	);
	my $n = 0;
	foreach my $f (@formats)
	{
		my ($label, $dumpargs, $restoreargs) = @$f;
		my $db = 'restored' . $n++;
		$node->command_ok([ 'pg_dump', @$dumpargs, '-d', $node->connstr('postgres') ], "pg_dump $label");
		$node->safe_psql('postgres', "CREATE DATABASE $db");
		if (defined $restoreargs)
		{
			$node->command_ok([ 'pg_restore', '-d', $node->connstr($db), @$restoreargs ], "pg_restore $label");
		}
		else
		{
			$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr($db),
								'-f', "$dir/dump.sql" ], "psql restore $label");
		}
		$check->($label, $db);
	}
}

# A started node for a test that edits relation files with the server
# stopped: without page checksums (on by default since 18's initdb), so
# that compressx's own checks, not the checksums, meet the edited bytes.
sub cx_disk_edit_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(extra => ($node->pg_version >= 18 ? ['--no-data-checksums'] : []));
	$node->start;
	return $node;
}

# SQL creating readable(i integer): whether the row of $table with id i
# reads back its column body, or raises data_corrupted.
sub cx_readable_sql
{
	my ($table) = @_;
	return qq{
	    CREATE FUNCTION readable(i integer) RETURNS boolean LANGUAGE plpgsql AS \$\$
	    BEGIN
	        PERFORM md5(body) FROM $table WHERE id = i;
	        RETURN true;
	    EXCEPTION WHEN data_corrupted THEN
	        RETURN false;
	    END \$\$;
	};
}

# Offset in a relation file (open on $fh, the server stopped) of the first
# byte of the data of the tuple at line pointer $off of block $blk (after
# its header).
sub cx_tuple_data_offset
{
	my ($fh, $blk, $off) = @_;
	my $page = cx_read_at($fh, $blk * 8192, 8192);
	my $lp = unpack('V', substr($page, 24 + ($off - 1) * 4, 4));
	my $lp_off = $lp & 0x7FFF;
	my $t_hoff = unpack('C', substr($page, $lp_off + 22, 1));
	return $blk * 8192 + $lp_off + $t_hoff;
}

# Every tuple of a relation file (the server stopped), in file order: a
# list of [block, line pointer, offset of its data in the file, its data].
sub cx_file_tuples
{
	my ($file) = @_;
	my @tuples;
	open(my $fh, '<', $file) or die "open $file: $!";
	binmode $fh;
	my $page;
	for (my $blk = 0; read($fh, $page, 8192) == 8192; $blk++)
	{
		my $pd_lower = unpack('v', substr($page, 12, 2));
		for (my $off = 1; 24 + $off * 4 <= $pd_lower; $off++)
		{
			my $lp = unpack('V', substr($page, 24 + ($off - 1) * 4, 4));
			my ($lp_off, $lp_flags, $lp_len) = ($lp & 0x7FFF, ($lp >> 15) & 3, $lp >> 17);
			next unless $lp_flags == 1;		# LP_NORMAL
			my $t_hoff = unpack('C', substr($page, $lp_off + 22, 1));
			push @tuples, [ $blk, $off, $blk * 8192 + $lp_off + $t_hoff,
							substr($page, $lp_off + $t_hoff, $lp_len - $t_hoff) ];
		}
	}
	close $fh;
	return @tuples;
}

sub cx_read_at
{
	my ($fh, $pos, $n) = @_;
	my $buf;
	seek($fh, $pos, 0) or die "seek: $!";
	read($fh, $buf, $n) == $n or die "short read at $pos";
	return $buf;
}

sub cx_write_at
{
	my ($fh, $pos, $buf) = @_;
	seek($fh, $pos, 0) or die "seek: $!";
	print $fh $buf or die "write: $!";
}

1;
