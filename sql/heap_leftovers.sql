-- What stays behind a move back to heap: the columns' compressx settings,
-- pending until the table uses compressx again.  The move says so and how
-- to drop them (issue 34, item 7).
SET client_min_messages = notice;
CREATE TABLE hl (id integer PRIMARY KEY, body text, note text) USING compressx;
SELECT compressx.set_column_codec('hl', 'body', 'pglz');
INSERT INTO hl SELECT i, repeat('leftover ' || (i % 7), 60), NULL FROM generate_series(1, 50) i;
CALL compressx.recompress_online('hl', access_method => 'heap');
SELECT table_name, column_name, access_method, codec, status
FROM compressx.column_codecs WHERE table_name = 'hl' ORDER BY column_name;
-- the function the NOTICE names drops them
SELECT compressx.reset_column_codec('hl');
SELECT count(*) AS left_behind FROM compressx.column_codecs WHERE table_name = 'hl';
CALL compressx.recompress_online('hl', access_method => 'compressx');
-- a move to heap gives every column a setting heap reads (its own, else
-- heap's method): those stay behind too, and are said
CALL compressx.recompress_online('hl', access_method => 'heap');
SELECT compressx.reset_column_codec('hl');

-- ALTER TABLE .. SET ACCESS METHOD heap says the same
CREATE TABLE hl_alter (id integer, body text, note text) USING compressx;
SELECT compressx.set_column_codec('hl_alter', 'body', 'zstd', 9);
SELECT compressx.set_column_codec('hl_alter', 'note', 'pglz');
INSERT INTO hl_alter SELECT i, repeat('x', 100), 'n' FROM generate_series(1, 5) i;
ALTER TABLE hl_alter SET ACCESS METHOD heap;
SELECT table_name, column_name, codec, level, status
FROM compressx.column_codecs WHERE table_name = 'hl_alter' ORDER BY column_name;
-- one column's setting dropped: the other stays, said again on the next move
SELECT compressx.reset_column_codec('hl_alter', 'body');
ALTER TABLE hl_alter SET ACCESS METHOD compressx;
ALTER TABLE hl_alter SET ACCESS METHOD heap;
SELECT compressx.reset_column_codec('hl_alter');
-- a table without settings moves without a word
ALTER TABLE hl_alter SET ACCESS METHOD compressx;
ALTER TABLE hl_alter SET ACCESS METHOD heap;
-- a name that needs quoting is quoted in the statement offered
CREATE TABLE "HL odd" (id integer, "Body" text) USING compressx;
SELECT compressx.set_column_codec('"HL odd"', 'Body', 'pglz');
ALTER TABLE "HL odd" SET ACCESS METHOD heap;
DROP TABLE hl, hl_alter, "HL odd";
