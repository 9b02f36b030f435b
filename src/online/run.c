/*-------------------------------------------------------------------------
 *
 * run.c
 *	  What every step of recompress_online shares: its progress report,
 *	  naps, the locks it takes (queued at most max_lock_wait, never
 *	  upgraded), the checks made again after each lock, running as the
 *	  table's owner, and its commits.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"
#include "catalog/catalog.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/wait_event.h"
#include "am/am.h"
#include "online/run.h"


/* What lock_table_fn() takes, in a subtransaction. */
typedef struct LockArg
{
	Oid			relid;
	LOCKMODE	mode;
} LockArg;

/* Report one progress figure, remembering it for cx_online_progress_restart(). */
void
cx_online_progress(OnlineRun *run, int idx, int64 val)
{
	run->progress[idx] = val;
	pgstat_progress_update_param(idx, val);
}

void
cx_online_report(OnlineRun *run, int phase)
{
	cx_online_progress(run, CX_ONLINE_PHASE, phase);
	cx_online_progress(run, CX_ONLINE_PASS, run->pass);
	cx_online_progress(run, CX_ONLINE_ROWS_CHECKED, run->rows_checked);
	cx_online_progress(run, CX_ONLINE_ROWS_DONE, run->rows_rewritten);
	cx_online_progress(run, CX_ONLINE_BYTES_BEFORE, run->bytes_before);
	cx_online_progress(run, CX_ONLINE_BYTES_AFTER, run->bytes_after);
	cx_online_progress(run, CX_ONLINE_RETRIES, run->retries);
	cx_online_progress(run, CX_ONLINE_BATCHES, run->batches);
}

/*
 * (Re)start reporting progress with every figure reported so far: an
 * aborted subtransaction (a lock wait that timed out) ends the backend's
 * progress reporting.
 */
void
cx_online_progress_restart(OnlineRun *run)
{
	int			idx[PGSTAT_NUM_PROGRESS_PARAM];

	pgstat_progress_start_command(CX_PROGRESS_COMMAND, run->top_relid);
	run->progress[0] = 0;
	run->progress[CX_ONLINE_MARKER] = CX_ONLINE_MARKER_VALUE;
	for (int i = 0; i < PGSTAT_NUM_PROGRESS_PARAM; i++)
		idx[i] = i;
	pgstat_progress_update_multi_param(PGSTAT_NUM_PROGRESS_PARAM, idx, run->progress);
}

/* Sleep ms, waking for interrupts. */
int64		cx_online_wait_budget_ms = -1;

void
cx_online_nap(int64 ms)
{
	if (cx_online_wait_budget_ms >= 0)
	{
		if (cx_online_wait_budget_ms < ms)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("recompress_online gave up waiting for other sessions"),
					 errdetail("Its caller allows it to wait only so long for locks, rows and snapshots other sessions hold.")));
		cx_online_wait_budget_ms -= ms;
	}
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Lock the table in mode without ever queueing: a conditional attempt,
 * retried with a growing nap (10 ms to 200 ms), each failure counted.  A
 * queued request would make every later conflicting request of a client
 * wait behind it; a conditional one makes nobody wait.
 */
void
cx_online_lock_table(OnlineRun *run, LOCKMODE mode)
{
	int64		wait = 10;

	while (!ConditionalLockRelationOid(run->relid, mode))
	{
		run->retries++;
		cx_online_report(run, CX_ONLINE_PHASE_REWRITE);
		cx_online_nap(wait);
		wait = Min(wait * 2, 200);
	}
}

/*
 * Open the locked table and check it is still what the run started on: it
 * exists, is a table, the caller owns it, and its access method has not
 * changed.  The rest of the transaction runs as its owner.  Every step
 * calls this after taking its lock in a transaction of its own: a lock is
 * never upgraded (one held while queueing for a stronger one deadlocks
 * with a client that read the table and then alters it), so what the run
 * learnt in an earlier transaction is checked again here.
 */
Relation
cx_online_open_checked(OnlineRun *run)
{
	Relation	rel = try_relation_open(run->relid, NoLock);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table \"%s\" (OID %u) was dropped during recompress_online",
						run->relname ? run->relname : "?", run->relid),
				 errdetail("The rows rewritten before stay as they are; nothing else is left behind.")));
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is no longer a table", RelationGetRelationName(rel))));
	if (!cx_relation_ownercheck(run->relid, run->caller))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	if (cx_is_compressx_relation(rel) != run->is_cx)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" changed its access method during recompress_online",
						RelationGetRelationName(rel)),
				 errhint("CALL compressx.recompress_online again.")));
	cx_online_as_owner(run, rel);
	return rel;
}

/*
 * Run the rest of this transaction as rel's owner (locked by the caller):
 * new index entries evaluate the owner's index expressions, predicates and
 * exclusion operators, which must not run with the caller's rights (as
 * core's CLUSTER and REINDEX, see cx_owner_scope_enter()).  Undone by
 * cx_online_commit(), or by the abort on an error.
 */
void
cx_online_as_owner(OnlineRun *run, Relation rel)
{
	if (run->owner.active && run->owner.owner == rel->rd_rel->relowner)
		return;
	cx_owner_scope_leave(&run->owner);
	cx_owner_scope_enter(&run->owner, rel->rd_rel->relowner);
}

/*
 * Commit the procedure's transaction and start the next, as the caller: a
 * transaction never starts inside a security-restricted operation (core
 * asserts so), and the next step switches to its table's owner once it
 * holds its lock.
 */
void
cx_online_commit(OnlineRun *run)
{
	cx_owner_scope_leave(&run->owner);
	SPI_commit();
}

/*
 * Run fn(arg) in a subtransaction with lock_timeout = max_lock_wait, so a
 * lock it waits for makes clients queue behind this for at most that long.
 * Returns false, the subtransaction rolled back, when the wait timed out;
 * other errors propagate.
 */
bool
cx_online_with_lock_timeout(OnlineRun *run, void (*fn) (void *), void *arg)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	char		timeout[32];
	bool		ok = true;

	snprintf(timeout, sizeof(timeout), INT64_FORMAT, Max(run->max_wait_ms, 1));
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		(void) set_config_option("lock_timeout", timeout, PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
		fn(arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		/*
		 * Whatever the error, the subtransaction goes first, with the locks
		 * it took; only a lock timeout is not an error of the run.
		 */
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		cx_online_progress_restart(run);
		if (edata->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(edata);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

static void
lock_table_fn(void *arg)
{
	LockArg    *la = (LockArg *) arg;

	LockRelationOid(la->relid, la->mode);
}

/*
 * Lock the table for a short exclusive step: queue for the lock at most
 * max_lock_wait (clients that come later queue behind it no longer), and
 * on a timeout count a retry, nap and queue again.
 */
void
cx_online_lock_exclusive(OnlineRun *run, Oid relid, LOCKMODE mode, int phase)
{
	LockArg		la = {relid, mode};

	while (!cx_online_with_lock_timeout(run, lock_table_fn, &la))
	{
		run->retries++;
		cx_online_report(run, phase);
		cx_online_nap(Min(Max(run->max_wait_ms, 10), 1000));
	}
}

/* Bad input that needs no lock: refused before anything happens. */
void
cx_online_check_target(Oid relid, bool partitioned_ok)
{
	char		relkind = get_rel_relkind(relid);
	Oid			nsp = get_rel_namespace(relid);
	char	   *name;

	cx_recompress_check_owner(relid);
	name = get_rel_name(relid);
	cx_check_not_own_table(relid);
	if (IsCatalogRelationOid(relid) || IsCatalogNamespace(nsp) || IsToastNamespace(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot recompress system catalog \"%s\"", name)));
	if (relkind == RELKIND_PARTITIONED_TABLE && partitioned_ok)
		return;
	if (relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", name),
				 errdetail("recompress_online rewrites tables stored by heap or compressx, and partitioned tables partition by partition.")));
	if (get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("recompress_online does not support temporary tables"),
				 errhint("No other session can use a temporary table: use recompress_table.")));
}

/* The advisory lock marking a run on relid, taken without waiting. */
void
cx_online_claim_table(LOCKTAG *tag, Oid relid)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, relid, 0, CX_ONLINE_LOCK_FIELD4);
	if (LockAcquire(tag, ExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("recompress_online is already running on table \"%s\"",
						get_rel_name(relid)),
				 errhint("Wait for it to finish, or cancel it (see compressx.recompress_online_progress).")));
}
