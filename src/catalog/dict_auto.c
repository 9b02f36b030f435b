/*-------------------------------------------------------------------------
 *
 * dict_auto.c
 *	  Automatic zstd dictionaries: their settings, and when the background
 *	  worker starts.
 *
 * A column set with dictionary => 'auto' (compressx.column_settings.
 * auto_dictionary) gets a dictionary once it holds enough values, a new
 * one when its values change character, and loses the dictionaries no
 * stored value names any more: dictionaries/auto.c decides,
 * dictionaries/prune.c prunes, compressx.auto_dictionary_run() does both on
 * demand and the background worker (dictionaries/worker.c) does them for
 * every such column of a database.
 *
 * Which worker.  A dynamic background worker, started by a backend that
 * wrote to a table with such a column, when its transaction commits, at
 * most once per compressx.auto_dictionary_naptime per backend.  A static
 * launcher would need compressx in shared_preload_libraries, which
 * compressx has never required (the access method loads the library on
 * first use), and would run even where nothing is written; a dynamic
 * worker needs nothing but a free max_worker_processes slot, and work only
 * appears where rows are written (rewrites count: VACUUM FULL can free
 * dictionaries for pruning).  Each worker serves one database, does what
 * is due there while its tables change and exits (dictionaries/worker.c);
 * a session lock with an advisory tag that pg_advisory_lock() cannot make
 * (CX_AUTO_LOCK_KEY, CX_AUTO_LOCK_FIELD4) lets only one run per database,
 * so the others a busy database starts exit at once.  When no
 * slot is free nothing is lost: the next write after the naptime tries
 * again, and auto_dictionary_run() works without a worker.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lock.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "catalog/dict_auto.h"

int			cx_auto_min_values = 1000;
int			cx_auto_min_kb = 1024;
int			cx_auto_naptime = 60;
int			cx_auto_margin = 10;
int			cx_auto_sample_rows = 10000;
int			cx_auto_dict_size = 16384;
bool		cx_auto_worker = true;
bool		cx_autodict_in_worker = false;

/* a worker is to start when the current transaction commits */
static bool launch_pending = false;

/* when this backend last started one (0: never) */
static TimestampTz last_launch = 0;

static void
autodict_xact_callback(XactEvent event, void *arg)
{
	if (!launch_pending)
		return;
	switch (event)
	{
		case XACT_EVENT_COMMIT:
			launch_pending = false;
			last_launch = GetCurrentTimestamp();
			if (!cx_autodict_launch())
				ereport(DEBUG1,
						(errmsg_internal("compressx: no background worker slot for automatic dictionaries")));
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_ABORT:
			launch_pending = false;
			break;
		default:
			break;
	}
}

void
cx_autodict_init(void)
{
	DefineCustomIntVariable("compressx.auto_dictionary_min_values",
							"Fewest values a sample of a column with dictionary => 'auto' must hold before a dictionary is trained (unless it holds compressx.auto_dictionary_min_bytes).",
							"Counted in a sample of at most compressx.auto_dictionary_sample_rows rows; values larger than 128 kB are not sampled.",
							&cx_auto_min_values, 1000, 16, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("compressx.auto_dictionary_min_bytes",
							"Bytes of values a sample may hold instead of compressx.auto_dictionary_min_values values for a dictionary to be tried.",
							"Large values (documents of several kB) never make enough of them in the sample's 8 MB: once the sample holds this many bytes in at least 100 values, a dictionary is trained and kept only if it measures better by compressx.auto_dictionary_margin.",
							&cx_auto_min_kb, 1024, 64, 8192,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("compressx.auto_dictionary_naptime",
							"Least time between two checks of a column with dictionary => 'auto', and between two background workers one backend starts.",
							NULL,
							&cx_auto_naptime, 60, 1, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("compressx.auto_dictionary_margin",
							"How much better, in percent, a dictionary must compress to be made, or to replace the current one, and how far the current one's ratio may fall before a new one is tried.",
							NULL,
							&cx_auto_margin, 10, 1, 100,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("compressx.auto_dictionary_sample_rows",
							"Rows sampled to check or train an automatic dictionary.",
							"At most 8 MB of values are read, whatever the number of rows.",
							&cx_auto_sample_rows, 10000, 100, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("compressx.auto_dictionary_size",
							"Largest size of an automatically trained zstd dictionary.",
							NULL,
							&cx_auto_dict_size, 16384, 1024, 1024 * 1024,
							PGC_USERSET, GUC_UNIT_BYTE, NULL, NULL, NULL);
	DefineCustomBoolVariable("compressx.auto_dictionary_worker",
							 "Whether writing to a table with dictionary => 'auto' starts the background worker.",
							 "Off: dictionaries change only through compressx.auto_dictionary_run().",
							 &cx_auto_worker, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterXactCallback(autodict_xact_callback, NULL);
}

/*
 * Whether another session wants this database to itself: it holds or
 * waits for a lock on the database that conflicts with ROW EXCLUSIVE
 * (DROP DATABASE and ALTER DATABASE .. RENAME or SET TABLESPACE take
 * ACCESS EXCLUSIVE, CREATE DATABASE .. TEMPLATE it SHARE, and keep them
 * while they wait for the other sessions to leave).
 */
bool
cx_autodict_database_wanted(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, MyDatabaseId, 0);
	if (LockAcquire(&tag, RowExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(&tag, RowExclusiveLock, true);
	return false;
}

void
cx_autodict_leave_if_wanted(void)
{
	static TimestampTz last_check = 0;
	TimestampTz now;

	if (!cx_autodict_in_worker)
		return;
	now = GetCurrentTimestamp();
	if (!TimestampDifferenceExceeds(last_check, now, CX_AUTO_WANTED_CHECK_MS))
		return;
	last_check = now;
	if (cx_autodict_database_wanted())
	{
		ereport(DEBUG1,
				(errmsg_internal("compressx automatic dictionaries: leaving a database another session wants to itself")));
		proc_exit(0);
	}
}

/*
 * Start the worker when the current transaction commits, whatever the
 * naptime (a restored dictionary arrived: dict_transfer.c).
 */
void
cx_autodict_launch_at_commit(void)
{
	if (cx_auto_worker && !cx_autodict_in_worker)
		launch_pending = true;
}

void
cx_autodict_note_write(Relation rel, const CxColumnSetting *settings)
{
	int			natts;

	if (launch_pending || !cx_auto_worker ||
		(last_launch != 0 &&
		 !TimestampDifferenceExceeds(last_launch, GetCurrentTransactionStartTimestamp(),
									 cx_auto_naptime * 1000)))
		return;
	natts = RelationGetDescr(rel)->natts;
	for (int i = 0; i < natts; i++)
		if (settings[i].dict_auto || settings[i].restore_pending)
		{
			launch_pending = true;
			return;
		}
}

void
cx_autodict_request_launch(void)
{
	if (cx_auto_worker)
		launch_pending = true;
}

bool
cx_autodict_launch(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "compressx");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, CX_AUTO_WORKER_FUNCTION);
	snprintf(worker.bgw_name, BGW_MAXLEN, "compressx auto dictionary worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "compressx auto dictionary");
	worker.bgw_main_arg = ObjectIdGetDatum(MyDatabaseId);
	worker.bgw_notify_pid = 0;
	return RegisterDynamicBackgroundWorker(&worker, NULL);
}
