/*-------------------------------------------------------------------------
 *
 * citus_fanout.c
 *	  compressx functions called on the coordinator for a Citus table act on
 *	  every shard: the call is handed to a PL/pgSQL function of the
 *	  extension script (compressx.citus_<name>), which runs the function on
 *	  the shards' placements through Citus (run_command_on_placements or
 *	  run_command_on_shards) and combines their results.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "catalog/citus.h"
#include "sql/citus_fanout.h"

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
