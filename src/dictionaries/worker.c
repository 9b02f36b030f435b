/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The background worker of automatic dictionaries: passes over the
 *	  columns of one database that have dictionary => 'auto'.
 *
 * Started by catalog/dict_auto.c when a transaction that wrote to such a
 * table commits (at most once per compressx.auto_dictionary_naptime per
 * backend).  It connects to its database as the bootstrap superuser, as
 * autovacuum does, but does no work as it; it advertises the database's
 * owner as its role (advertise_database_owner()), so that the owner's DROP
 * DATABASE .. WITH (FORCE) may terminate it.  It takes the session lock of
 * the database's automatic dictionaries, an advisory lock tag no SQL
 * function can make (CX_AUTO_LOCK_FIELD4), and exits at once when another
 * worker holds it; then it makes passes a naptime apart: each lists
 * the tables with such a column that changed since their last check (the
 * statistics counters and file of CX_AUTO_ACTIVITY_SQL) and whose last
 * check is older than the naptime, and for each one, in two transactions
 * of its own, prunes (prune.c) and checks (dictionaries/auto.c) as the
 * table's owner, as compressx.auto_dictionary_run() does, with two
 * differences: a table whose SHARE UPDATE EXCLUSIVE lock is taken is left
 * for a later pass instead of waited for, and it waits at most 10 s for
 * writers before pruning.
 *
 * It exits after two passes that found nothing changed (or only tables
 * whose lock another session holds, so that no role can keep it resident
 * by holding a lock on its own table): a backend reports
 * its counters up to 10 s after its writes (60 s while busy), so the
 * worker a write starts stays at least a naptime to see them.  While it
 * stays, it leaves as soon as another session wants the database to itself
 * (DROP DATABASE waits 5 s for the other sessions, then fails), and at
 * SIGTERM: it checks between steps, every second of its naps, and every
 * CX_AUTO_WANTED_CHECK_MS of its work on a table (sampling, measuring,
 * scanning, waiting for writers) through cx_autodict_leave_if_wanted();
 * the one call that cannot be interrupted, training (ZDICT on at most
 * 8 MB of samples), took under a second here.
 *
 * Hostile roles share databases: the owner's identity, in a
 * security-restricted operation with search_path pinned, means the work
 * can do nothing the owner could not (it trains only on tables the owner
 * may read in full, see why_not_readable()), and no object another role
 * planted is run.  An error ends the table's transaction only: it is
 * logged and recorded as the columns' state.
 *
 * Restores.  pg_restore loads a table's rows before its last pass grants,
 * revokes and enables row-level security, so a dictionary may be trained
 * while the owner could read every row, and the owner then may not.
 * Before issue 33 the worker deferred all work while any session named
 * itself pg_restore, polling every second: any role could set that
 * application_name and stop automatic dictionaries for the whole database,
 * holding a max_worker_processes slot.  Nothing a session advertises is
 * trusted now, and no restore is detected at all.  Instead readability is
 * checked where it matters: a table whose owner may no longer read it in
 * full is due at every pass, changed or not, while a column of it names an
 * automatic dictionary, and its check withdraws that dictionary (the column
 * stops naming it: new values are stored without it; see
 * cx_autodict_check()) and then prunes it at once when no stored value
 * names it.  The restore's REVOKE or ALTER TABLE .. ENABLE ROW LEVEL
 * SECURITY starts a worker for that check when it leaves such a column
 * (event trigger compressx_readability, auto.c), so a dictionary trained
 * during the restore is gone within a second or so of the pass that made
 * the table unreadable; a change no event trigger sees (role membership,
 * ALTER ROLE) is caught at the table's next check.  Nothing defers, and
 * nothing waits for anything a session advertises: the worker exits when
 * nothing is due or pending, and the next write starts another.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_database.h"
#include "catalog/pg_inherits.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "catalog/dict_auto.h"
#include "dictionaries/auto.h"
#include "dictionaries/prune.h"
#include "dictionaries/restored.h"
#include "dictionaries/state.h"

PGDLLEXPORT void compressx_auto_dictionary_main(Datum main_arg);

/* What one look at the database's automatic columns found. */
typedef struct DueTables
{
	List	   *due;			/* tables to work on now (TopMemoryContext) */
	bool		pending;		/* some changed, but were checked recently */
	double		next_s;			/* seconds until the first of those is due */
} DueTables;

/*
 * The tables to work on now: those with a column set to dictionary =>
 * 'auto' that changed since its last check (or were never checked) and
 * whose last check is older than the naptime, least recently checked
 * first; leaf partitions of partitioned ones too while they have no
 * settings row of their own.
 */
static void
due_tables(DueTables *dt)
{
	List	   *parents = NIL;
	List	   *own = NIL;
	Oid			types[1] = {INT4OID};
	Datum		values[1];
	ListCell   *lc;
	MemoryContext caller = CurrentMemoryContext;	/* outlives SPI's */
	int			nest = NewGUCNestLevel();

	dt->due = NIL;
	dt->pending = false;
	dt->next_s = cx_auto_naptime;
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	values[0] = Int32GetDatum(cx_auto_naptime);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	if (SPI_execute_with_args("WITH t AS ("
							  "SELECT s.relid::pg_catalog.oid AS relid, c.relkind, "
							  "pg_catalog.min(COALESCE(st.last_check, '-infinity')) AS checked, "
							  "pg_catalog.bool_or(st.activity IS DISTINCT FROM "
							  CX_AUTO_ACTIVITY_SQL ") AS changed, "
							  "COALESCE(pg_catalog.bool_or(d.auto), false) AS auto_dict "
							  "FROM compressx.column_settings s "
							  "JOIN pg_catalog.pg_class c ON c.oid = s.relid::pg_catalog.oid "
							  "LEFT JOIN compressx.dictionaries d ON d.dict_id = s.dict_id "
							  "LEFT JOIN compressx.auto_dictionary_state st "
							  "ON st.relid = s.relid::pg_catalog.oid AND st.attnum = s.attnum "
							  "WHERE s.auto_dictionary AND c.relpersistence <> 't' "
							  "GROUP BY 1, 2) "
							  "SELECT relid, relkind, changed, auto_dict, "
							  /* never checked (no state row: a restored database): due now */
							  "CASE WHEN checked = '-infinity' THEN 0 "
							  "ELSE pg_catalog.date_part('epoch', checked "
							  "+ pg_catalog.make_interval(secs => $1) - pg_catalog.now()) END "
							  "FROM t ORDER BY checked",
							  1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the columns with automatic dictionaries");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Oid			relid = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
		char		relkind = DatumGetChar(SPI_getbinval(tup, desc, 2, &isnull));
		bool		changed = DatumGetBool(SPI_getbinval(tup, desc, 3, &isnull));
		bool		auto_dict = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
		double		wait_s = DatumGetFloat8(SPI_getbinval(tup, desc, 5, &isnull));
		MemoryContext old = MemoryContextSwitchTo(caller);

		if (relkind == RELKIND_PARTITIONED_TABLE)
			parents = lappend_oid(parents, relid);
		else
		{
			own = lappend_oid(own, relid);
			/*
			 * due now, changed or not: an automatic dictionary whose table
			 * its owner may no longer read in full, to withdraw
			 */
			if ((changed && wait_s <= 0) ||
				(auto_dict && !cx_autodict_owner_may_read(relid)))
			{
				MemoryContextSwitchTo(TopMemoryContext);
				dt->due = lappend_oid(dt->due, relid);
			}
			else if (changed)
			{
				dt->pending = true;
				dt->next_s = Min(dt->next_s, wait_s);
			}
		}
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	AtEOXact_GUC(true, nest);

	foreach(lc, parents)
	{
		ListCell   *pc;

		foreach(pc, find_all_inheritors(lfirst_oid(lc), NoLock, NULL))
		{
			Oid			leaf = lfirst_oid(pc);
			MemoryContext old;

			if (!RELKIND_HAS_STORAGE(get_rel_relkind(leaf)) ||
				list_member_oid(own, leaf) || list_member_oid(dt->due, leaf))
				continue;
			old = MemoryContextSwitchTo(TopMemoryContext);
			dt->due = lappend_oid(dt->due, leaf);
			MemoryContextSwitchTo(old);
		}
	}
}

/*
 * Advertise the database's owner as this process's role (PGPROC.roleId,
 * which a backend sets to its login role and which this worker, connected
 * as the bootstrap superuser without a role, left invalid).  That field is
 * what decides who may signal a process: DROP DATABASE .. WITH (FORCE)
 * (TerminateOtherDBBackends) refused to terminate the worker for the
 * database's non-superuser owner, having checked permissions before the
 * worker could see the drop wanted its database and leave; now the owner,
 * or any role it is a member of, may terminate it, as pg_terminate_backend()
 * may.  Nothing else: the session user, the privileges the worker works
 * with and pg_stat_activity's usesysid stay as they were, and background
 * workers do not count against the role's connection limit
 * (CountUserBackends skips them).  Called in a transaction, at every pass,
 * so that it follows ALTER DATABASE .. OWNER TO.
 */
static void
advertise_database_owner(void)
{
	HeapTuple	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));

	if (!HeapTupleIsValid(tup))
		return;
	/* an aligned Oid store is atomic: readers take no lock, as in InitPostgres */
	MyProc->roleId = ((Form_pg_database) GETSTRUCT(tup))->datdba;
	ReleaseSysCache(tup);
}

/* Log what a step did: LOG for a change, DEBUG1 otherwise. */
static void
log_results(List *results)
{
	ListCell   *lc;

	foreach(lc, results)
	{
		CxAutoResult *r = (CxAutoResult *) lfirst(lc);
		bool		changed = strcmp(r->action, "trained") == 0 ||
			strcmp(r->action, "retrained") == 0 || strcmp(r->action, "pruned") == 0 ||
			strcmp(r->action, "withdrawn") == 0;

		ereport(changed ? LOG : DEBUG1,
				(errmsg("compressx automatic dictionaries: %s column \"%s\" of table \"%s\" as role \"%s\"",
						r->action, r->column ? r->column : "(all)",
						get_rel_name(r->relid), GetUserNameFromId(GetUserId(), false)),
				 errdetail("%s", r->message)));
	}
}

/*
 * One step (prune, or check) on relid in a transaction of its own, as its
 * owner.  An error is logged and, for the check, recorded as the state of
 * the table's automatic columns.
 */
/* what run_step() saw */
#define STEP_WITHDRAWN		0x01	/* the check withdrew a dictionary */
#define STEP_LOCKED			0x02	/* the check found the table locked */

static int
run_step(Oid relid, bool prune, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int			seen = 0;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	PG_TRY();
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
		Oid			owner;
		Oid			save_userid;
		int			save_sec_context;
		int			nest;
		List	   *results;
		ListCell   *lc;

		if (HeapTupleIsValid(tup))
		{
			owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
			ReleaseSysCache(tup);
			pgstat_report_activity(STATE_RUNNING,
								   psprintf("compressx automatic dictionaries: %s %s",
											prune ? "pruning" : "checking", get_rel_name(relid)));
			GetUserIdAndSecContext(&save_userid, &save_sec_context);
			SetUserIdAndSecContext(owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
								   SECURITY_RESTRICTED_OPERATION);
			nest = NewGUCNestLevel();
			(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
									 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
			results = prune ? cx_autodict_prune(relid, true) : cx_autodict_check(relid, true);
			log_results(results);
			foreach(lc, results)
			{
				CxAutoResult *r = (CxAutoResult *) lfirst(lc);

				if (strcmp(r->action, "withdrawn") == 0)
					seen |= STEP_WITHDRAWN;
				/* the one result of a table whose lock was not free */
				if (!prune && r->column == NULL && strcmp(r->action, "skipped") == 0)
					seen |= STEP_LOCKED;
			}
			AtEOXact_GUC(true, nest);
			SetUserIdAndSecContext(save_userid, save_sec_context);
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		ereport(LOG,
				(errmsg("compressx automatic dictionaries: could not %s table with OID %u",
						prune ? "prune the dictionaries of" : "check", relid),
				 errdetail("%s", edata->message)));
		if (!prune)
		{
			SetCurrentStatementStartTimestamp();
			StartTransactionCommand();
			PushActiveSnapshot(GetTransactionSnapshot());
			cx_autodict_record_error(relid, edata->message);
			PopActiveSnapshot();
			CommitTransactionCommand();
		}
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	MemoryContextReset(cxt);
	return seen;
}

/*
 * Look at the database's automatic columns (in a transaction of its own)
 * and work on the tables that are due.  Returns whether anything was due
 * or is pending; *next_s: seconds until the next pending one is due.
 */
static bool
one_pass(MemoryContext cxt, double *next_s)
{
	DueTables	dt = {NIL, false, 0};
	bool		installed;
	bool		busy;
	bool		worked = false;
	int			seen;
	ListCell   *lc;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	advertise_database_owner();
	installed = cx_autodict_installed();
	if (installed)
	{
		cx_autodict_forget_stale();
		due_tables(&dt);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(false);

	foreach(lc, dt.due)
	{
		CHECK_FOR_INTERRUPTS();
		if (cx_autodict_database_wanted())
			proc_exit(0);
		(void) run_step(lfirst_oid(lc), true, cxt);
		CHECK_FOR_INTERRUPTS();
		if (cx_autodict_database_wanted())
			proc_exit(0);
		seen = run_step(lfirst_oid(lc), false, cxt);
		if (!(seen & STEP_LOCKED))
			worked = true;
		/* a withdrawn dictionary that no stored value names goes at once */
		if (seen & STEP_WITHDRAWN)
		{
			CHECK_FOR_INTERRUPTS();
			if (cx_autodict_database_wanted())
				proc_exit(0);
			(void) run_step(lfirst_oid(lc), true, cxt);
		}
	}
	*next_s = dt.next_s;
	/*
	 * Tables whose lock another session holds do not keep the worker: a
	 * pass that found only those counts as quiet, so that a role holding a
	 * lock on its own table cannot keep the worker resident; the next
	 * write starts another.
	 */
	busy = worked || dt.pending;
	list_free(dt.due);
	/* what restores left: values to re-encode, dictionaries to train */
	if (installed)
	{
		double		restored_next;

		MemoryContextSwitchTo(cxt);
		if (cx_restored_pass(cxt, &restored_next))
		{
			*next_s = busy ? Min(*next_s, restored_next) : restored_next;
			busy = true;
		}
		MemoryContextSwitchTo(TopMemoryContext);
		MemoryContextReset(cxt);
	}
	return busy;
}

/*
 * The worker's main loop: passes one naptime apart (sooner when a table
 * checked recently is due earlier) while tables change, and one more after
 * they stopped: the statistics counters that tell a change (see
 * CX_AUTO_ACTIVITY_SQL) reach shared memory up to a second after the
 * write that started the worker.  Then it exits; the next write starts
 * another.
 */
void
compressx_auto_dictionary_main(Datum main_arg)
{
	LOCKTAG		tag;
	MemoryContext cxt;
	int			quiet = 0;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg), InvalidOid, 0);
	cx_autodict_in_worker = true;

	/* one worker per database: the others exit */
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, CX_AUTO_LOCK_KEY, 0, CX_AUTO_LOCK_FIELD4);
	if (LockAcquire(&tag, ExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
	{
		CommitTransactionCommand();
		proc_exit(0);
	}
	CommitTransactionCommand();
	/* named in pg_stat_activity and in log lines (%a) */
	(void) set_config_option("application_name", "compressx auto dictionary",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SET, true, 0, false);
	/*
	 * The worker's session user is a superuser: whatever it runs outside
	 * its owner-identity steps (the restored pass: a CALL of
	 * recompress_online, across the procedure's commits, and its updates of
	 * the settings) must resolve no object another role planted in public
	 * (writable by every role in databases made before PostgreSQL 15), for
	 * the whole session.
	 */
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SET, true, 0, false);

	cxt = AllocSetContextCreate(TopMemoryContext, "compressx auto dictionary worker",
								ALLOCSET_DEFAULT_SIZES);
	while (quiet < 2)
	{
		double		next_s;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		quiet = one_pass(cxt, &next_s) ? 0 : quiet + 1;
		pgstat_report_activity(STATE_IDLE, NULL);
		if (quiet >= 2)
			break;
		/* in slices of a second at most, to leave when the database is wanted */
		for (long wait_ms = (long) (Max(next_s, 0.1) * 1000); wait_ms > 0; wait_ms -= 1000)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Min(wait_ms, 1000), PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			if (cx_autodict_database_wanted())
				proc_exit(0);
		}
	}
	proc_exit(0);
}
