/*-------------------------------------------------------------------------
 *
 * fanout.c
 *	  compressx functions called on the coordinator for a Citus table act on
 *	  every shard: the call is handed to a PL/pgSQL function of the
 *	  extension script (compressx.citus_<name>), which runs the function on
 *	  the shards' placements through Citus (run_command_on_placements or
 *	  run_command_on_shards) and combines their results.  Also the SQL
 *	  functions that carry settings between nodes: citus_apply (run on each
 *	  node by the coordinator) and citus_push.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/extension.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "citus/citus.h"
#include "catalog/relation.h"
#include "catalog/settings.h"
#include "citus/fanout.h"

PG_FUNCTION_INFO_V1(compressx_citus_apply);
PG_FUNCTION_INFO_V1(compressx_citus_in_fan_out);
PG_FUNCTION_INFO_V1(compressx_citus_push);
PG_FUNCTION_INFO_V1(compressx_citus_settings_digest);

bool
cx_citus_fan_out_srf(FunctionCallInfo fcinfo, Oid relid, const char *wrapper)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid		   *argtypes;
	int			nargs;
	Datum	   *values;
	char	   *nulls;
	StringInfoData sql;

	if (!cx_citus_fan_out(relid))
		return false;
	(void) get_func_signature(fcinfo->flinfo->fn_oid, &argtypes, &nargs);
	values = palloc(sizeof(Datum) * Max(nargs, 1));
	nulls = palloc(Max(nargs, 1));
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT * FROM compressx.%s(", wrapper);
	for (int i = 0; i < nargs; i++)
	{
		appendStringInfo(&sql, "%s$%d", i > 0 ? ", " : "", i + 1);
		values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
	}
	appendStringInfoChar(&sql, ')');

	cx_citus_in_fan_out = true;
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (SPI_execute_with_args(sql.data, nargs, argtypes, values, nulls, false, 0) < 0)
			elog(ERROR, "SPI_execute_with_args failed: %s", sql.data);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			Datum		rvalues[32];
			bool		rnulls[32];
			int			natts = SPI_tuptable->tupdesc->natts;

			if (natts != rsinfo->setDesc->natts || natts > 32)
				elog(ERROR, "compressx.%s returned %d columns, expected %d",
					 wrapper, natts, rsinfo->setDesc->natts);
			heap_deform_tuple(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, rvalues, rnulls);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, rvalues, rnulls);
		}
		SPI_finish();
	}
	PG_FINALLY();
	{
		cx_citus_in_fan_out = false;
	}
	PG_END_TRY();
	return true;
}

/*
 * compressx.citus_apply(rel regclass, state jsonb, version text)
 *	  Make the settings rows of rel on this node those of state (built by
 *	  cx_citus_push on the coordinator): dictionaries by content, with ids
 *	  of this node; columns by name.  Rows of rel's shards here are removed:
 *	  the shards follow rel.  Owner only; ShareUpdateExclusiveLock on rel.
 */
Datum
compressx_citus_apply(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *version;
	char	   *mine;
	int			save_nestlevel;

	cx_prevent_if_read_only("citus_apply", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation, state and version must not be null")));
	relid = PG_GETARG_OID(0);
	if (!OidIsValid(get_extension_oid("citus", true)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("compressx.citus_apply() runs only in a database with Citus")));
	version = text_to_cstring(PG_GETARG_TEXT_PP(2));
	mine = cx_citus_installed_version();
	if (strcmp(version, mine) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("compressx %s is installed on this node, the coordinator has %s", mine, version),
				 errhint("Install the same compressx on every node and run ALTER EXTENSION compressx UPDATE where it is older.")));
	cx_check_settings_target(relid);
	/*
	 * Sent outside the coordinator's transaction (Citus builds without
	 * SendCommandToWorkersWithMetadata), this can wait on locks that
	 * transaction holds here, while it waits for this: fail rather than
	 * hang.  The timeout holds for this call only (its own GUC nest level):
	 * the rest of the transaction that called it keeps its own.
	 */
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("lock_timeout", "2s", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	AtEOXact_GUC(true, save_nestlevel);
	cx_check_settings_target(relid);

	cx_citus_apply_state(relid, cstring_to_text(DatumGetCString(DirectFunctionCall1(jsonb_out,
																  PG_GETARG_DATUM(1)))));
	PG_RETURN_VOID();
}

/*
 * compressx.citus_push(rel regclass)
 *	  Send the settings and dictionaries of a Citus table from the
 *	  coordinator to every other node again (after adding a node, or to
 *	  repair a node restored on its own).  Owner only.
 */
Datum
compressx_citus_push(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);

	cx_prevent_if_read_only("citus_push", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
	cx_check_settings_target(relid);
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	cx_check_settings_target(relid);
	if (!cx_citus_is_table(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a Citus table", get_rel_name(relid))));
	if (!cx_citus_on_coordinator())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("compressx.citus_push() runs on the coordinator")));
	cx_citus_push(relid);
	PG_RETURN_VOID();
}

/*
 * compressx.citus_settings_digest(rel regclass) RETURNS text
 *	  A digest of the settings of rel on this node and their dictionaries'
 *	  contents: compressx.citus_settings_check compares the coordinator's
 *	  with every worker's.  Owner only.
 */
Datum
compressx_citus_settings_digest(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);

	cx_check_settings_target(relid);
	PG_RETURN_TEXT_P(cx_citus_settings_digest(relid));
}

/*
 * compressx.citus_in_fan_out() RETURNS boolean
 *	  Whether cx_citus_fan_out_srf is running in this session.
 */
Datum
compressx_citus_in_fan_out(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(cx_citus_in_fan_out);
}
