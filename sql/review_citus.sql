-- Issue 27, item 11: the Citus settings check outside Citus.
-- citus_settings_digest compares settings by content, columns by name
CREATE TABLE rc_a (id int, body text, note text) USING compressx;
CREATE TABLE rc_b (id int, note text, body text) USING compressx;
SELECT compressx.citus_settings_digest('rc_a') = compressx.citus_settings_digest('rc_b') AS same_without_settings;
SELECT compressx.set_column_codec('rc_a', 'body', 'zstd', 5);
SELECT compressx.set_column_codec('rc_b', 'body', 'zstd', 5);
SELECT compressx.set_column_codec('rc_a', 'note', 'lz4');
SELECT compressx.set_column_codec('rc_b', 'note', 'lz4');
SELECT compressx.citus_settings_digest('rc_a') = compressx.citus_settings_digest('rc_b') AS same_settings_other_column_order;
SELECT compressx.set_column_codec('rc_b', 'body', 'zstd', 6);
SELECT compressx.citus_settings_digest('rc_a') = compressx.citus_settings_digest('rc_b') AS same_after_level_change;
-- owner only
CREATE ROLE regress_rc_other;
SET ROLE regress_rc_other;
SELECT compressx.citus_settings_digest('rc_a');
RESET ROLE;
-- the check and the repair need Citus
SELECT * FROM compressx.citus_settings_check();
SELECT * FROM compressx.citus_settings_repair();
DROP TABLE rc_a, rc_b;
DROP ROLE regress_rc_other;
