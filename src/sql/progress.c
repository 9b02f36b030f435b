/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  compressx.progress_info(): the progress slots of the backends running
 *	  a compressx rewrite (see progress.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "sql/progress.h"

PG_FUNCTION_INFO_V1(compressx_progress_info);

/* recompress_table's marker at param 20 (sql/recompress.c, "CXRC") */
#define CX_RECOMPRESS_MARKER_VALUE	0x43585243

/*
 * compressx.progress_info() RETURNS SETOF (pid int4, datid oid, relid oid,
 *		param1 .. param20 int8)
 *
 * One row per backend reporting CX_PROGRESS_COMMAND, as
 * pg_stat_get_progress_info() returns for one of core's commands, but only
 * the backends whose statistics the caller may read (a member of their
 * role, or of pg_read_all_stats): core shows the others' pid with null
 * figures, which compressx's views would filter out anyway.
 */
Datum
compressx_progress_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			nbackends;

	InitMaterializedSRF(fcinfo, 0);
	nbackends = pgstat_fetch_stat_numbackends();
	for (int i = 1; i <= nbackends; i++)
	{
		LocalPgBackendStatus *local = cx_local_beentry(i);
		PgBackendStatus *be;
		Datum		values[PGSTAT_NUM_PROGRESS_PARAM + 3];
		bool		nulls[PGSTAT_NUM_PROGRESS_PARAM + 3];
		int64		params[PGSTAT_NUM_PROGRESS_PARAM];

		if (local == NULL)
			continue;
		be = &local->backendStatus;
		if (be->st_procpid <= 0 || be->st_progress_command != CX_PROGRESS_COMMAND)
			continue;
		if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS) &&
			!has_privs_of_role(GetUserId(), be->st_userid))
			continue;
		memset(nulls, 0, sizeof(nulls));
		values[0] = Int32GetDatum(be->st_procpid);
		values[1] = ObjectIdGetDatum(be->st_databaseid);
		values[2] = ObjectIdGetDatum(be->st_progress_command_target);
		memcpy(params, be->st_progress_param, sizeof(params));
		/* recompress_table's, in CLUSTER's numbers of 15 to 18 */
		if (params[PGSTAT_NUM_PROGRESS_PARAM - 1] == CX_RECOMPRESS_MARKER_VALUE)
			cx_progress_as_cluster(params);
		for (int p = 0; p < PGSTAT_NUM_PROGRESS_PARAM; p++)
			values[p + 3] = Int64GetDatum(params[p]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
