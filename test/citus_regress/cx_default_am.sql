-- compressx: the tables the following tests create are compressx tables.
-- default_table_access_method of the regression database on the
-- coordinator and both workers (new sessions take it); the extension exists
-- in each of them (pg_regress_multi.pl --load-extension=compressx).
ALTER DATABASE regression SET default_table_access_method = compressx;
\c - - - :worker_1_port
ALTER DATABASE regression SET default_table_access_method = compressx;
\c - - - :worker_2_port
ALTER DATABASE regression SET default_table_access_method = compressx;
\c - - - :master_port
SHOW default_table_access_method;
CREATE TABLE cx_default_am_check (a int);
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid = 'cx_default_am_check'::regclass;
DROP TABLE cx_default_am_check;
