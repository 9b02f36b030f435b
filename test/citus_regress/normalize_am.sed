# compressx: test/citus_regress.sh applies these to the expected and the
# actual output of every test (before Citus's own bin/diff normalization).
# They only hide what compressx as the default access method changes by
# design, the name of the access method; query results are never
# rewritten.

# DDL dumps (master_get_table_ddl_events; Citus re-creating a materialized
# view) name the table's access method
s/\bUSING compressx\b/USING heap/g
# citus_tables.access_method, time_partitions.access_method, pg_am.amname
# in result rows
s/\| compressx( *)(\||$)/| heap\1\2/g
s/^ compressx( *)(\||$)/ heap\1\2/
# \d+
s/^Access method: compressx$/Access method: heap/
# a column whose COMPRESSION (not a compressx setting) decides its codec on
# a compressx table: compressx says so (issue 28 A1); heap says nothing
/^NOTICE:  column "[^"]*" of table "[^"]*" is stored with [a-z0-9]+, not with compressx\.default_codec \([a-z0-9]+\), because of its COMPRESSION$/d
/^DETAIL:  On a compressx table, a column without a setting of compressx\.set_column_codec\(\) follows its COMPRESSION \(pglz or lz4\)\.$/d
/^HINT:  SELECT compressx\.reset_column_codec\(.*\) returns it to compressx\.default_codec; compressx\.set_column_codec\(\) chooses another codec\.$/d
