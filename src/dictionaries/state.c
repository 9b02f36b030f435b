/*-------------------------------------------------------------------------
 *
 * state.c
 *	  The state of automatic dictionaries: the rows of
 *	  compressx.auto_dictionary_state (what the last check of each column
 *	  found and did), and the result rows of compressx.auto_dictionary_run()
 *	  that checking (auto.c) and pruning (prune.c) return.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"
#include "utils/builtins.h"
#include "catalog/dict_auto.h"
#include "catalog/relation.h"
#include "dictionaries/state.h"

bool
cx_autodict_installed(void)
{
	return OidIsValid(cx_extension_table_oid("auto_dictionary_state")) &&
		cx_settings_have_auto_column();
}

void
cx_autodict_record(Oid relid, AttrNumber attnum, const char *state,
				   int values_seen, const char *action, const char *message,
				   double ratio_now, double baseline)
{
	Oid			types[9] = {OIDOID, INT2OID, TEXTOID, INT4OID, INT4OID, TEXTOID,
	TEXTOID, FLOAT8OID, FLOAT8OID};
	Datum		values[9];
	char		nulls[9] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = CStringGetTextDatum(state);
	values[3] = Int32GetDatum(values_seen);
	nulls[3] = values_seen < 0 ? 'n' : ' ';
	values[4] = Int32GetDatum(cx_auto_min_values);
	values[5] = CStringGetTextDatum(action);
	values[6] = CStringGetTextDatum(message);
	values[7] = Float8GetDatum(ratio_now);
	nulls[7] = ratio_now < 0 ? 'n' : ' ';
	values[8] = Float8GetDatum(baseline);
	nulls[8] = baseline < 0 ? 'n' : ' ';
	/* a skipped check keeps what the last one measured */
	cx_settings_exec("INSERT INTO compressx.auto_dictionary_state AS s "
					 "(relid, attnum, state, values_seen, values_needed, last_check, "
					 " last_action, last_message, ratio_now, ratio_baseline, baseline_dict, activity) "
					 "VALUES ($1, $2, $3, $4, $5, pg_catalog.now(), $6, $7, $8, $9, "
					 " (SELECT x.dict_id FROM compressx.column_settings x "
					 "  WHERE x.relid = $1 AND x.attnum = $2), "
					 " (SELECT " CX_AUTO_ACTIVITY_SQL " FROM pg_catalog.pg_class c WHERE c.oid = $1)) "
					 "ON CONFLICT (relid, attnum) DO UPDATE SET "
					 "activity = EXCLUDED.activity, "
					 "state = EXCLUDED.state, "
					 "values_seen = COALESCE(EXCLUDED.values_seen, s.values_seen), "
					 "values_needed = EXCLUDED.values_needed, last_check = EXCLUDED.last_check, "
					 "last_action = EXCLUDED.last_action, last_message = EXCLUDED.last_message, "
					 "ratio_now = COALESCE(EXCLUDED.ratio_now, s.ratio_now), "
					 "ratio_baseline = CASE WHEN EXCLUDED.ratio_baseline IS NULL "
					 " AND EXCLUDED.state = 'skipped' THEN s.ratio_baseline "
					 " ELSE EXCLUDED.ratio_baseline END, "
					 "baseline_dict = CASE WHEN EXCLUDED.ratio_baseline IS NULL "
					 " AND EXCLUDED.state = 'skipped' THEN s.baseline_dict "
					 " ELSE EXCLUDED.baseline_dict END",
					 9, types, values, nulls);
}

void
cx_autodict_record_error(Oid relid, const char *message)
{
	Oid			types[3] = {OIDOID, TEXTOID, INT4OID};
	Datum		values[3];

	values[0] = ObjectIdGetDatum(relid);
	values[1] = CStringGetTextDatum(message);
	values[2] = Int32GetDatum(cx_auto_min_values);
	cx_settings_exec("INSERT INTO compressx.auto_dictionary_state AS s "
					 "(relid, attnum, state, values_needed, last_check, last_action, last_message, activity) "
					 "SELECT $1, x.attnum, 'error', $3, pg_catalog.now(), 'failed', $2, "
					 CX_AUTO_ACTIVITY_SQL " "
					 "FROM compressx.column_settings x "
					 "JOIN pg_catalog.pg_class c ON c.oid = x.relid::pg_catalog.oid "
					 "WHERE x.relid = $1 AND x.auto_dictionary "
					 "ON CONFLICT (relid, attnum) DO UPDATE SET state = 'error', "
					 "last_check = EXCLUDED.last_check, last_action = 'failed', "
					 "last_message = EXCLUDED.last_message, activity = EXCLUDED.activity",
					 3, types, values, NULL);
}

void
cx_autodict_count_pruned(Oid relid, AttrNumber attnum, int pruned)
{
	Oid			types[3] = {OIDOID, INT2OID, INT4OID};
	Datum		values[3];

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = Int32GetDatum(pruned);
	cx_settings_exec("INSERT INTO compressx.auto_dictionary_state AS s "
					 "(relid, attnum, state, values_needed, dictionaries_pruned) "
					 "VALUES ($1, $2, 'pending', 0, $3) "
					 "ON CONFLICT (relid, attnum) DO UPDATE SET "
					 "dictionaries_pruned = s.dictionaries_pruned + EXCLUDED.dictionaries_pruned",
					 3, types, values, NULL);
}

void
cx_autodict_forget_stale(void)
{
	/*
	 * SKIP LOCKED: any owner's auto_dictionary_run() forgets them too, in a
	 * transaction that may stay open; waiting for it would stop this run
	 * (and the worker, for the whole database).  A skipped row is forgotten
	 * by that transaction, or by the next run if it aborts.
	 */
	cx_settings_exec("DELETE FROM compressx.auto_dictionary_state "
					 "WHERE ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
					 "SELECT s.ctid FROM compressx.auto_dictionary_state s "
					 "WHERE NOT EXISTS (SELECT FROM compressx.column_settings c "
					 "WHERE c.relid::pg_catalog.oid = s.relid AND c.attnum = s.attnum "
					 "AND c.auto_dictionary) "
					 "FOR UPDATE OF s SKIP LOCKED))",
					 0, NULL, NULL, NULL);
}

CxAutoResult *
cx_autodict_result(Oid relid, const char *column, const char *action, int32 dict_id,
				   char *message)
{
	CxAutoResult *r = palloc0(sizeof(CxAutoResult));

	r->relid = relid;
	r->column = column ? pstrdup(column) : NULL;
	r->action = action;
	r->dict_id = dict_id;
	r->message = message;
	return r;
}
