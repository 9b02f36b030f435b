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
