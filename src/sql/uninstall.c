/*-------------------------------------------------------------------------
 *
 * uninstall.c
 *	  The way out: DROP EXTENSION compressx refused, before anything is
 *	  dropped, while tables use the compressx access method, with the tables
 *	  named and the call that moves each one back to heap online.
 *
 * Core refuses too (the tables depend on the access method), but its hint
 * is DROP ... CASCADE, which drops the tables with their data.  This event
 * trigger (ddl_command_start, DROP EXTENSION) runs before core's check and
 * says what to do instead.  DROP EXTENSION compressx CASCADE is left to
 * core: whoever writes CASCADE asks for the tables to go.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(compressx_on_drop_extension);

/* How many tables the refusal names; the rest are counted. */
#define CX_UNINSTALL_NAMED 10

/* Whether stmt drops the extension compressx without CASCADE. */
static bool
drops_compressx(DropStmt *stmt)
{
	ListCell   *lc;

	if (stmt->removeType != OBJECT_EXTENSION || stmt->behavior == DROP_CASCADE)
		return false;
	foreach(lc, stmt->objects)
	{
		if (strcmp(strVal(lfirst(lc)), "compressx") == 0)
			return true;
	}
	return false;
}

Datum
compressx_on_drop_extension(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	StringInfoData names;
	uint64		ntables;
	char	   *first = NULL;
	MemoryContext outer = CurrentMemoryContext;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "compressx_on_drop_extension: not called by event trigger manager");
	trigdata = (EventTriggerData *) fcinfo->context;
	if (!IsA(trigdata->parsetree, DropStmt) ||
		!drops_compressx((DropStmt *) trigdata->parsetree))
		PG_RETURN_VOID();

	/* the names outlive SPI_finish(): in the caller's memory */
	initStringInfo(&names);
	SPI_connect();
	if (SPI_execute("SELECT c.oid::pg_catalog.regclass::pg_catalog.text "
					"FROM pg_catalog.pg_class c "
					"JOIN pg_catalog.pg_am a ON a.oid OPERATOR(pg_catalog.=) c.relam "
					"WHERE a.amname OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name "
					"AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog.\"char\"[]) "
					"ORDER BY 1", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed listing compressx tables");
	ntables = SPI_processed;
	for (uint64 i = 0; i < ntables && i < CX_UNINSTALL_NAMED; i++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		appendStringInfo(&names, "%s%s", i > 0 ? ", " : "", name);
		if (i == 0)
			first = MemoryContextStrdup(outer, name);
	}
	if (ntables > CX_UNINSTALL_NAMED)
		appendStringInfo(&names, " and %llu more",
						 (unsigned long long) (ntables - CX_UNINSTALL_NAMED));
	SPI_finish();

	if (ntables > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg_plural("cannot drop extension compressx because %llu table uses its access method",
							   "cannot drop extension compressx because %llu tables use its access method",
							   (unsigned long) ntables, (unsigned long long) ntables),
				 errdetail("Tables: %s.", names.data),
				 errhint("Move each table to heap first, online: CALL compressx.recompress_online('%s', access_method => 'heap'); then DROP EXTENSION compressx. SELECT * FROM compressx.column_codecs lists the tables.",
						 first)));
	PG_RETURN_VOID();
}
