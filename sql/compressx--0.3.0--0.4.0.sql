/* compressx 0.3.0 -> 0.4.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.4.0'" to load this file. \quit

-- Automatic zstd dictionaries: set_column_codec(.., dictionary => 'auto').
-- compressx trains a column's dictionary once it holds enough values,
-- trains a new one when its values change character, and deletes the
-- dictionaries no stored value names any more (src/sql/dict_auto_sql.c,
-- src/sql/dict_prune.c; README, "Automatic dictionaries").

-- The policy is part of the column's settings, so pg_dump keeps it.
ALTER TABLE compressx.column_settings
    ADD COLUMN auto_dictionary boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN compressx.column_settings.auto_dictionary IS
'dictionary => ''auto'': compressx trains, replaces and prunes the column''s zstd dictionary';

-- A column's own inline limit (NULL: compressx.inline_max): its values in
-- compressx's format stored larger than this go out of line even when the
-- row would fit (src/catalog/settings.c, compressx.set_column_inline).
ALTER TABLE compressx.column_settings ADD COLUMN inline_max integer;
COMMENT ON COLUMN compressx.column_settings.inline_max IS
'values stored larger than this go out of line (NULL: compressx.inline_max); set with compressx.set_column_inline()';

CREATE FUNCTION compressx.set_column_inline(rel regclass, column_name name, inline_max integer)
RETURNS void
AS 'MODULE_PATHNAME', 'compressx_set_column_inline'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.set_column_inline(regclass, name, integer) IS
'values of the column stored in compressx''s own format larger than inline_max bytes go out of line (NULL: compressx.inline_max); new rows follow it, VACUUM FULL moves existing ones; owner only';

-- Automatic dictionaries serve zstd only: a column that leaves zstd leaves the
-- policy too (as it loses its dictionary), whoever writes the row.
CREATE FUNCTION compressx.settings_auto_dictionary()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.codec <> 'zstd' THEN
        NEW.auto_dictionary := false;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER settings_auto_dictionary
BEFORE INSERT OR UPDATE ON compressx.column_settings
FOR EACH ROW EXECUTE FUNCTION compressx.settings_auto_dictionary();

-- Which dictionaries compressx made itself (only those are ever pruned),
-- and the ratio each had on held-out sample values when it was trained.
ALTER TABLE compressx.dictionaries
    ADD COLUMN auto boolean NOT NULL DEFAULT false,
    ADD COLUMN trained_ratio double precision;
COMMENT ON COLUMN compressx.dictionaries.auto IS
'trained by compressx for a column with dictionary => ''auto''; deleted once no stored value names it';
COMMENT ON COLUMN compressx.dictionaries.trained_ratio IS
'stored ratio of held-out sample values with the dictionary when it was trained (automatic dictionaries)';

-- What the last check of each automatic column found.  Not dumped: a
-- restored database checks its columns afresh.
CREATE TABLE compressx.auto_dictionary_state (
    relid oid NOT NULL,
    attnum smallint NOT NULL,
    state text NOT NULL,            -- pending, waiting, active, skipped, error
    values_seen integer,            -- values in the last sample
    values_needed integer NOT NULL, -- compressx.auto_dictionary_min_values then
    last_check timestamptz,
    last_action text,               -- trained, retrained, kept, waiting, skipped, failed
    last_message text,
    ratio_now double precision,     -- held-out values with the dictionary (without: none yet)
    ratio_baseline double precision,    -- what a drift is measured from
    baseline_dict integer,          -- the dictionary ratio_baseline is of
    activity text,                  -- the table's write and vacuum counters
                                    -- and file at the last check
    dictionaries_pruned integer NOT NULL DEFAULT 0,
    PRIMARY KEY (relid, attnum)
) USING heap;
REVOKE ALL ON compressx.auto_dictionary_state FROM PUBLIC;

COMMENT ON TABLE compressx.auto_dictionary_state IS
'state of the columns with automatic dictionaries; read it through compressx.auto_dictionaries';

-- as for compressx's other tables: a subscriber keeps its own
CREATE TRIGGER skip_replicated_rows BEFORE INSERT OR UPDATE OR DELETE
    ON compressx.auto_dictionary_state FOR EACH ROW
    EXECUTE FUNCTION compressx.skip_replicated_rows();
ALTER TABLE compressx.auto_dictionary_state ENABLE REPLICA TRIGGER skip_replicated_rows;

-- set_column_codec takes the dictionary: NULL keeps the column's as it is,
-- 'auto' has compressx train and replace it, 'none' stops using one.
-- Calls of the five-argument form (scripts, positional or named) mean the
-- same as before.
DROP FUNCTION compressx.set_column_codec(regclass, name, text, integer, integer);
CREATE FUNCTION compressx.set_column_codec(
    rel regclass, column_name name, codec text,
    level integer DEFAULT NULL, min_size integer DEFAULT NULL,
    dictionary text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'compressx_set_column_codec_dictionary'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.set_column_codec(regclass, name, text, integer, integer, text) IS
'set the codec, level, minimum size and dictionary (''auto'', ''none'', NULL: as it is) of a column of a compressx table; applies to new values (VACUUM FULL re-encodes old ones); owner only';

CREATE FUNCTION compressx.auto_dictionary_run(rel regclass)
RETURNS TABLE (relation regclass, column_name name, action text,
               dictionary integer, message text)
AS 'MODULE_PATHNAME', 'compressx_auto_dictionary_run'
LANGUAGE C VOLATILE STRICT;

COMMENT ON FUNCTION compressx.auto_dictionary_run(regclass) IS
'what the background worker does for a table, now: prune the automatic dictionaries no stored value names, then train, keep or replace the dictionary of each column with dictionary => ''auto''; owner only';

CREATE VIEW compressx.auto_dictionaries AS
SELECT n.nspname AS schema_name,
       c.relname AS table_name,
       s.attname AS column_name,
       s.dict_id AS dictionary,
       COALESCE(st.state, 'pending') AS state,
       st.values_seen,
       COALESCE(st.values_needed,
                pg_catalog.current_setting('compressx.auto_dictionary_min_values', true)::pg_catalog.int4)
           AS values_needed,
       d.created AS trained_at,
       pg_catalog.round(d.trained_ratio::pg_catalog.numeric, 2) AS ratio_at_training,
       pg_catalog.round(st.ratio_now::pg_catalog.numeric, 2) AS ratio_now,
       st.last_check,
       st.last_action,
       st.last_message,
       COALESCE(st.dictionaries_pruned, 0) AS dictionaries_pruned
FROM compressx.column_settings s
JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.relid::pg_catalog.oid
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
LEFT JOIN compressx.auto_dictionary_state st
       ON st.relid OPERATOR(pg_catalog.=) s.relid::pg_catalog.oid
      AND st.attnum OPERATOR(pg_catalog.=) s.attnum
LEFT JOIN compressx.dictionaries d
       ON d.dict_id OPERATOR(pg_catalog.=) s.dict_id
      AND d.relid::pg_catalog.oid OPERATOR(pg_catalog.=) s.relid::pg_catalog.oid
WHERE s.auto_dictionary
  AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog."char"[])
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
  AND NOT pg_catalog.row_security_active(c.oid);

GRANT SELECT ON compressx.auto_dictionaries TO PUBLIC;

COMMENT ON VIEW compressx.auto_dictionaries IS
'per column with dictionary => ''auto'' of the tables you may read: its dictionary, the state of its last check, ratios, dictionaries pruned';
