/*-------------------------------------------------------------------------
 *
 * online.c
 *	  recompress_online(): bring the stored values of a table to a codec
 *	  while other sessions keep reading and writing it.
 *
 * In place, in batches (design: doc/online.md).  A compressx table's pages
 * are heap pages, so a row is recompressed by replacing its version with
 * one whose target values are encoded afresh, as an UPDATE would, but
 * without the executor (so no user trigger fires) and without compressx's
 * reuse of unchanged values.  Every batch is a transaction of its own:
 *
 *	  1. (once) Set the target as the columns' setting, so new rows follow:
 *		 compressx's settings under SHARE UPDATE EXCLUSIVE (as
 *		 set_column_codec), heap's attcompression under ACCESS EXCLUSIVE (as
 *		 ALTER COLUMN .. SET COMPRESSION), each taken without queueing
 *		 (conditionally, retried) and held only for the catalog change.
 *	  2. Passes over the table by block.  A batch takes ROW EXCLUSIVE on the
 *		 table (conditionally, retried), reads rows with a fresh snapshot,
 *		 and for each visible row holding a target value in another method
 *		 takes the row lock without waiting (a row a client holds is
 *		 remembered and retried), writes the new version and its index
 *		 entries.  A batch ends after batch_rows rows or half of
 *		 max_lock_wait, whichever comes first, and commits: no client waits
 *		 longer than that for a row this holds.
 *	  3. After a pass, the rows clients held are retried one transaction
 *		 each, waiting for the row at most max_lock_wait (lock_timeout).
 *	  4. Passes repeat until one finds nothing to rewrite and nothing held:
 *		 rows that clients wrote meanwhile with an old encoding (an UPDATE
 *		 keeps unchanged stored values) are caught by the next pass.
 *
 * Values already in the target method are skipped, so a second CALL after a
 * cancel, an error or a crash resumes where the first stopped; every
 * committed batch left whole rows, each in its old or new form.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/stratnum.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/partition.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_publication.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "common/hashfn.h"
#include "commands/progress.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "am/am.h"
#include "am/rewrite.h"
#include "catalog/relation.h"
#include "catalog/settings.h"
#include "sql/inspect.h"
#include "sql/recompress.h"
#include "storage/format.h"

PG_FUNCTION_INFO_V1(compressx_recompress_online);
PG_FUNCTION_INFO_V1(compressx_recompress_online_cleanup);

/*
 * Progress, in the CLUSTER slot (it survives the procedure's commits and is
 * cleared by an abort); compressx.recompress_online_progress reads it.
 */
#define CX_ONLINE_PHASE			1
#define CX_ONLINE_PASS			2
#define CX_ONLINE_BLKS_TOTAL	3
#define CX_ONLINE_BLKS_DONE		4
#define CX_ONLINE_ROWS_TOTAL	5
#define CX_ONLINE_ROWS_CHECKED	6
#define CX_ONLINE_ROWS_DONE		7
#define CX_ONLINE_BYTES_BEFORE	8
#define CX_ONLINE_BYTES_AFTER	9
#define CX_ONLINE_RETRIES		10
#define CX_ONLINE_BATCHES		11
#define CX_ONLINE_TABLE			12	/* the table (partition) being done */
#define CX_ONLINE_TABLES_DONE	13
#define CX_ONLINE_TABLES_TOTAL	14
#define CX_ONLINE_MARKER		19
#define CX_ONLINE_MARKER_VALUE	0x43584F4E	/* "CXON" */

#define CX_ONLINE_PHASE_TARGET	1	/* setting the columns' target */
#define CX_ONLINE_PHASE_REWRITE 2	/* a pass over the table */
#define CX_ONLINE_PHASE_RETRY	3	/* retrying rows clients held */
#define CX_ONLINE_PHASE_WRITERS 4	/* waiting for writers that started before */
#define CX_ONLINE_PHASE_OLD		5	/* waiting for old row versions to die */
#define CX_ONLINE_PHASE_AM		6	/* changing the access method */

/* advisory lock (field4) marking a run on a table, held for the session */
#define CX_ONLINE_LOCK_FIELD4	0x4358

#define CX_ONLINE_DEFAULT_BATCH 1000

/* An access-method change the run makes on the table. */
typedef enum AmMove
{
	CX_MOVE_NONE,
	CX_MOVE_TO_CX,				/* heap -> compressx: relam first, then passes */
	CX_MOVE_TO_HEAP				/* compressx -> heap: passes, then relam */
} AmMove;

typedef struct OnlineRun
{
	Oid			top_relid;		/* the table named in the call */
	Oid			relid;			/* the table being done (a partition) */
	char	   *relname;		/* its name, for messages once it is gone */
	Oid			filenumber;		/* its file when the pass began, or invalid */
	bool		file_replaced;	/* ... and it changed since: tids are stale */
	int64		progress[PGSTAT_NUM_PROGRESS_PARAM];	/* as reported */
	bool		is_cx;
	AmMove		move;
	Oid			target_am;		/* InvalidOid: keep each table's */
	CxRecompressRequest req;
	ArrayType  *columns;		/* NULL: every compressible column */
	int			batch_rows;
	int64		max_wait_ms;
	/* totals, reported as progress */
	int64		pass;
	int64		rows_checked;
	int64		rows_rewritten;
	int64		bytes_before;
	int64		bytes_after;
	int64		retries;
	int64		batches;
	/* the current pass: rows clients held, and whether anything moved */
	ItemPointerData *held;
	int			nheld;
	int			maxheld;
	bool		pass_changed;
	bool		has_dicts;		/* compressx: dictionaries serve the table */
	TransactionId relevel_xid;	/* compressx, a level named: values in the
								 * target codec of row versions written by
								 * older transactions are re-encoded */
	int64		pending;		/* moving to heap: compressx values in row
								 * versions the pass could not rewrite */
	Snapshot	waited;			/* moving to heap: taken as the last wait for
								 * old snapshots began (a copy), or NULL */
	OffsetNumber next_off;		/* a full batch stopped in a block: from here */
	BlockNumber done_from[2];	/* the blocks of the last two batches, */
	BlockNumber done_to[2];		/* [from, to), [0] the older */
	BlockNumber pass_blocks;	/* the table's size when the pass began */
	BlockNumber pass_toast_blocks;	/* its TOAST relation's, then */
	MemoryContext cxt;			/* lives as long as the call */
} OnlineRun;

/* What one batch (transaction) needs. */
typedef struct Batch
{
	Relation	rel;
	TupleDesc	desc;
	bool	   *target;			/* attno-1: a target column */
	CxStoredMethod *method;		/* attno-1: its stored target method */
	char	   *cmethod;		/* heap: attno-1: core method char */
	CxColumnSetting *settings;	/* compressx: the columns' settings */
	bool		check_dicts;	/* compressx: compare values' dictionaries */
	TransactionId relevel_xid;	/* see OnlineRun */
	Snapshot	snapshot;
	TransactionId horizon;		/* moving to heap: older versions are dead */
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	MemoryContext batchcxt;		/* freed with the batch */
	MemoryContext rowcxt;		/* reset per row */
	MemoryContext oldcxt;
} Batch;

/* Report one progress figure, remembering it for progress_restart(). */
static void
progress(OnlineRun *run, int idx, int64 val)
{
	run->progress[idx] = val;
	pgstat_progress_update_param(idx, val);
}

static void
report(OnlineRun *run, int phase)
{
	progress(run, CX_ONLINE_PHASE, phase);
	progress(run, CX_ONLINE_PASS, run->pass);
	progress(run, CX_ONLINE_ROWS_CHECKED, run->rows_checked);
	progress(run, CX_ONLINE_ROWS_DONE, run->rows_rewritten);
	progress(run, CX_ONLINE_BYTES_BEFORE, run->bytes_before);
	progress(run, CX_ONLINE_BYTES_AFTER, run->bytes_after);
	progress(run, CX_ONLINE_RETRIES, run->retries);
	progress(run, CX_ONLINE_BATCHES, run->batches);
}

/*
 * (Re)start reporting progress with every figure reported so far: an
 * aborted subtransaction (a lock wait that timed out) ends the backend's
 * progress reporting.
 */
static void
progress_restart(OnlineRun *run)
{
	int			idx[PGSTAT_NUM_PROGRESS_PARAM];

	pgstat_progress_start_command(PROGRESS_COMMAND_CLUSTER, run->top_relid);
	run->progress[PROGRESS_CLUSTER_COMMAND] = 0;
	run->progress[CX_ONLINE_MARKER] = CX_ONLINE_MARKER_VALUE;
	for (int i = 0; i < PGSTAT_NUM_PROGRESS_PARAM; i++)
		idx[i] = i;
	pgstat_progress_update_multi_param(PGSTAT_NUM_PROGRESS_PARAM, idx, run->progress);
}

/* Sleep ms, waking for interrupts. */
static void
nap(int64 ms)
{
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
static void
lock_table(OnlineRun *run, LOCKMODE mode)
{
	int64		wait = 10;

	while (!ConditionalLockRelationOid(run->relid, mode))
	{
		run->retries++;
		report(run, CX_ONLINE_PHASE_REWRITE);
		nap(wait);
		wait = Min(wait * 2, 200);
	}
}

/*
 * Open the locked table and check it is still what the run started on: it
 * exists, the user owns it, and its access method has not changed.
 */
static Relation
open_checked(OnlineRun *run)
{
	Relation	rel = try_relation_open(run->relid, NoLock);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table \"%s\" (OID %u) was dropped during recompress_online",
						run->relname ? run->relname : "?", run->relid),
				 errdetail("The rows rewritten before stay as they are; nothing else is left behind.")));
	if (!cx_relation_ownercheck(run->relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	if (cx_is_compressx_relation(rel) != run->is_cx)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" changed its access method during recompress_online",
						RelationGetRelationName(rel)),
				 errhint("CALL compressx.recompress_online again.")));
	return rel;
}

/*
 * Run fn(arg) in a subtransaction with lock_timeout = max_lock_wait, so a
 * lock it waits for makes clients queue behind this for at most that long.
 * Returns false, the subtransaction rolled back, when the wait timed out;
 * other errors propagate.
 */
static bool
with_lock_timeout(OnlineRun *run, void (*fn) (void *), void *arg)
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
		progress_restart(run);
		if (edata->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(edata);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

typedef struct LockArg
{
	Oid			relid;
	LOCKMODE	mode;
} LockArg;

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
static void
lock_table_exclusive(OnlineRun *run, Oid relid, LOCKMODE mode, int phase)
{
	LockArg		la = {relid, mode};

	while (!with_lock_timeout(run, lock_table_fn, &la))
	{
		run->retries++;
		report(run, phase);
		nap(Min(Max(run->max_wait_ms, 10), 1000));
	}
}

/*
 * Step 1: make the target the columns' setting, so rows written from now
 * on follow it.  Nothing to do when no codec is named (each column keeps
 * its own) or when the setting is already the target.
 */
static void
set_target(OnlineRun *run)
{
	Relation	rel;
	TargetColumn *targets;
	int			ntargets;
	bool		change = false;

	if (run->req.codec == NULL)
		return;

	progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_TARGET);
	if (run->is_cx)
	{
		/* as set_column_codec: self-exclusive, does not block DML */
		lock_table_exclusive(run, run->relid, ShareUpdateExclusiveLock,
							 CX_ONLINE_PHASE_TARGET);
		rel = open_checked(run);
		targets = cx_recompress_resolve_targets(rel, run->columns,
												InvalidCompressionMethod,
												&ntargets);
		for (int t = 0; t < ntargets; t++)
		{
			AttrNumber	attnum = get_attnum(run->relid, targets[t].name);

			cx_store_column_setting(run->relid, targets[t].name, attnum,
									run->req.codec, run->req.level_isnull,
									run->req.level, true, 0, true);
		}
		table_close(rel, NoLock);
		return;
	}

	/* heap: only when some attcompression differs (ACCESS EXCLUSIVE) */
	rel = try_relation_open(run->relid, AccessShareLock);
	if (rel == NULL)
		return;					/* open_checked() reports it later */
	targets = cx_recompress_resolve_targets(rel, run->columns,
											cx_recompress_heap_method(&run->req),
											&ntargets);
	for (int t = 0; t < ntargets; t++)
	{
		AttrNumber	attnum = get_attnum(run->relid, targets[t].name);

		if (TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attcompression !=
			targets[t].method)
			change = true;
	}
	relation_close(rel, AccessShareLock);
	if (!change)
		return;

	lock_table_exclusive(run, run->relid, AccessExclusiveLock, CX_ONLINE_PHASE_TARGET);
	rel = open_checked(run);
	cx_set_column_compression(run->relid, targets, ntargets);
	table_close(rel, NoLock);
}

/* Open a batch: ROW EXCLUSIVE on the table, a fresh snapshot, indexes. */
static void
begin_batch(OnlineRun *run, Batch *b)
{
	TargetColumn *targets;
	int			ntargets;
	int			natts;

	b->batchcxt = AllocSetContextCreate(run->cxt, "recompress_online batch",
										ALLOCSET_DEFAULT_SIZES);
	b->oldcxt = MemoryContextSwitchTo(b->batchcxt);
	lock_table(run, RowExclusiveLock);
	b->rel = open_checked(run);
	b->desc = RelationGetDescr(b->rel);

	/*
	 * TRUNCATE, VACUUM FULL or CLUSTER between batches replaced the table's
	 * file: the blocks this pass read and the rows it remembered were the
	 * old file's.  Forget those rows, and make another pass read the new
	 * file from its start.
	 */
	if (!OidIsValid(run->filenumber))
		run->filenumber = cx_rel_filenumber(b->rel);
	else if (run->filenumber != cx_rel_filenumber(b->rel))
	{
		run->filenumber = cx_rel_filenumber(b->rel);
		run->pass_changed = true;
		run->nheld = 0;
		run->file_replaced = true;
	}
	natts = b->desc->natts;

	targets = cx_recompress_resolve_targets(b->rel, run->columns,
											cx_recompress_heap_method(&run->req),
											&ntargets);
	b->target = palloc0(sizeof(bool) * Max(natts, 1));
	b->method = palloc0(sizeof(CxStoredMethod) * Max(natts, 1));
	b->cmethod = palloc0(sizeof(char) * Max(natts, 1));
	b->settings = NULL;
	b->check_dicts = run->is_cx && run->has_dicts;
	b->relevel_xid = run->is_cx ? run->relevel_xid : InvalidTransactionId;
	if (run->is_cx)
	{
		b->settings = palloc(sizeof(CxColumnSetting) * Max(natts, 1));
		cx_resolve_settings(b->rel, b->settings);
	}
	for (int t = 0; t < ntargets; t++)
	{
		AttrNumber	attnum = get_attnum(run->relid, targets[t].name);

		b->target[attnum - 1] = true;
		if (run->is_cx)
			b->method[attnum - 1] = cx_stored_method_of_codec(b->settings[attnum - 1].codec);
		else
		{
			b->cmethod[attnum - 1] = targets[t].method;
			b->method[attnum - 1] = cx_stored_method_of_char(targets[t].method);
		}
	}

	b->snapshot = RegisterSnapshot(GetTransactionSnapshot());
	PushActiveSnapshot(b->snapshot);
	b->horizon = run->move == CX_MOVE_TO_HEAP ?
		GetOldestNonRemovableTransactionId(b->rel) : InvalidTransactionId;

	b->estate = CreateExecutorState();
	b->estate->es_snapshot = b->snapshot;
	b->estate->es_output_cid = GetCurrentCommandId(true);
	b->rri = makeNode(ResultRelInfo);
	/* range table index 0: no permission info, no updated-columns list */
	InitResultRelInfo(b->rri, b->rel, 0, NULL, 0);
	ExecOpenIndices(b->rri, false);
	b->slot = table_slot_create(b->rel, NULL);
	b->rowcxt = AllocSetContextCreate(b->batchcxt, "recompress_online row",
									  ALLOCSET_DEFAULT_SIZES);
	run->batches++;
}

/*
 * Make the room the rewrite freed reusable by the rows it writes next.
 * The old versions of the rows a batch rewrote die when it commits; the
 * pages of the batch before the last are pruned (heap_page_prune_opt:
 * only if it has dead tuples no snapshot sees, under a cleanup lock taken
 * without waiting, as any scan does) and their free space is recorded in
 * the free space map, which VACUUM alone does otherwise.  Then new
 * versions go there instead of to new pages at the table's end: without
 * this a run grows a table by about its own size (bench-results/online).
 */
static void
prune_range(Relation rel, BlockNumber from, BlockNumber to)
{
	to = Min(to, RelationGetNumberOfBlocks(rel));
	for (BlockNumber blk = from; blk < to; blk++)
	{
		Buffer		buf = ReadBuffer(rel, blk);
		Page		page = BufferGetPage(buf);
		Size		avail;

		CHECK_FOR_INTERRUPTS();

		/*
		 * heap_page_prune_opt() prunes a page with a prunable xid only when
		 * it looks full: PD_PAGE_FULL (a hint heap_update sets when a new
		 * version does not fit) or less than a tenth free.  A TOAST page
		 * whose chunks were deleted, not updated, often has more room than
		 * that; set the hint, which pruning clears.
		 */
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		if (!PageIsFull(page) && TransactionIdIsValid(((PageHeader) page)->pd_prune_xid))
		{
			PageSetFull(page);
			MarkBufferDirtyHint(buf, true);
		}
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		heap_page_prune_opt(rel, buf);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		avail = PageGetHeapFreeSpace(page);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		ReleaseBuffer(buf);
		RecordPageWithFreeSpace(rel, blk, avail);
	}
	if (from < to)
		FreeSpaceMapVacuumRange(rel, from, to);
}

static void
reuse_freed_space(OnlineRun *run, Relation rel)
{
	BlockNumber from = run->done_from[0];
	BlockNumber to = run->done_to[0];

	prune_range(rel, from, to);

	/*
	 * The TOAST chunks of the values replaced are deleted too.  Where they
	 * are is not known without an index scan per value; chunks are mostly
	 * laid down in the order of their rows, so the same share of the TOAST
	 * relation as of the table (as both were when the pass began) is
	 * pruned: a guess that costs a page read where wrong, and lets new
	 * chunks reuse old ones' room where right.  VACUUM gets the rest.
	 */
	if (OidIsValid(rel->rd_rel->reltoastrelid) && run->pass_blocks > 0 && from < to)
	{
		Relation	toast = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);
		uint64		tb = run->pass_toast_blocks;

		prune_range(toast, (BlockNumber) (from * tb / run->pass_blocks),
					(BlockNumber) Min((uint64) to * tb / run->pass_blocks + 1, tb));
		table_close(toast, AccessShareLock);
	}
	run->done_from[0] = run->done_from[1];
	run->done_to[0] = run->done_to[1];
	run->done_from[1] = run->done_to[1] = 0;
}

/* Close a batch (the caller commits). */
static void
end_batch(Batch *b)
{
	ExecDropSingleTupleTableSlot(b->slot);
	ExecCloseIndices(b->rri);
	FreeExecutorState(b->estate);
	PopActiveSnapshot();
	UnregisterSnapshot(b->snapshot);
	/* ROW EXCLUSIVE stays until the commit */
	table_close(b->rel, NoLock);
	MemoryContextSwitchTo(b->oldcxt);
	MemoryContextDelete(b->batchcxt);
}

/*
 * compressx: whether an uncompressed value of column i is one the column's
 * setting would compress (its codec, min_size, storage), as a new row's
 * would be: heap leaves values below 2 kB alone, compressx need not.  The
 * row is rewritten only if the codec shrinks it (cx_reencode_locked_row),
 * so a value it cannot shrink is tried once per pass and left as it is.
 */
static bool
plain_to_compress(Batch *b, int i, const CxStoredValue *sv)
{
	const CxColumnSetting *s;
	char		storage = TupleDescAttr(b->desc, i)->attstorage;

	if (b->settings == NULL || sv->method != CX_STORED_NONE)
		return false;
	s = &b->settings[i];
	return s->codec->id != CX_CODEC_NONE && sv->raw_bytes >= s->min_size &&
		(storage == TYPSTORAGE_EXTENDED || storage == TYPSTORAGE_MAIN);
}

/*
 * compressx: whether a zstd value of column i, set to zstd, names another
 * dictionary than the column's current one (or none where it has one, or
 * one where it has none): the dictionary is part of the target.
 */
static bool
other_dictionary(Batch *b, int i, const CxStoredValue *sv, Datum d)
{
	if (!b->check_dicts || sv->method != CX_STORED_ZSTD ||
		b->method[i] != CX_STORED_ZSTD)
		return false;
	return cx_own_dict_id((const struct varlena *) DatumGetPointer(d),
						  RelationGetRelid(b->rel)) != b->settings[i].dict_id;
}

/*
 * Look at the target values of a stored row: returns whether one is in
 * another method than the target (or, compressx, uncompressed where its
 * setting would compress it); with reencode, marks those columns;
 * with bytes, adds their stored sizes (of every target value).
 */
static bool
scan_targets(Batch *b, HeapTuple tuple, bool *reencode, int64 *bytes)
{
	bool		needs = false;
	bool		older = TransactionIdIsValid(b->relevel_xid) &&
		(HeapTupleHeaderXminFrozen(tuple->t_data) ||
		 TransactionIdPrecedes(HeapTupleHeaderGetXmin(tuple->t_data), b->relevel_xid));

	for (int i = 0; i < b->desc->natts; i++)
	{
		bool		isnull;
		Datum		d;
		CxStoredValue sv;

		if (!b->target[i])
			continue;
		d = heap_getattr(tuple, i + 1, b->desc, &isnull);
		if (isnull)
			continue;
		cx_inspect_datum(d, &sv);
		if (bytes)
			*bytes += sv.stored_bytes;
		if (cx_value_needs_rewrite(&sv, b->method[i]) || plain_to_compress(b, i, &sv) ||
			other_dictionary(b, i, &sv, d) ||
			(older && sv.method == b->method[i] && sv.method != CX_STORED_NONE))
		{
			needs = true;
			if (reencode)
				reencode[i] = true;
			else if (!bytes)
				break;
		}
	}
	return needs;
}

/*
 * Whether a stored row version holds a value in compressx's own format in a
 * target column (moving to heap, every compressible column is one): heap
 * cannot read it.
 */
static bool
holds_own_value(Batch *b, HeapTuple tuple)
{
	for (int i = 0; i < b->desc->natts; i++)
	{
		bool		isnull;
		Datum		d;

		if (!b->target[i])
			continue;
		d = heap_getattr(tuple, i + 1, b->desc, &isnull);
		if (!isnull && cx_is_own_datum(DatumGetPointer(d)))
			return true;
	}
	return false;
}

/*
 * Moving to heap: whether the recently dead row version tuple is visible
 * to no snapshot: its deleter committed before the last wait for old
 * snapshots began, and every snapshot of that time has ended since.
 * (HeapTupleSatisfiesVacuum's horizon is coarser: a transaction that
 * merely has an xid, with no snapshot, holds it back.)
 */
static bool
gone_for_all(OnlineRun *run, HeapTuple tuple)
{
	TransactionId xmax = HeapTupleHeaderGetUpdateXid(tuple->t_data);

	return run->waited != NULL && TransactionIdIsNormal(xmax) &&
		!XidInMVCCSnapshot(xmax, run->waited) && TransactionIdDidCommit(xmax);
}

/*
 * Heap: the new version of oldtup, target values in another method
 * decompressed and compressed with the target (as recompress_table does),
 * written by heap_update(), whose toaster moves and deletes out-of-line
 * values as for any UPDATE.
 */
static TM_Result
reencode_heap_row(Batch *b, HeapTuple oldtup, CommandId cid, ItemPointer newtid,
				  CxUpdateIndexes *update_indexes)
{
	int			natts = b->desc->natts;
	Datum	   *values = palloc(sizeof(Datum) * Max(natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(natts, 1));
	HeapTuple	newtup;
	TM_FailureData tmfd;
	LockTupleMode lockmode;
	TM_Result	result;

	heap_deform_tuple(oldtup, b->desc, values, isnull);
	for (int i = 0; i < natts; i++)
	{
		CxStoredValue sv;

		/* as an UPDATE does: a dropped column's value (and its TOAST) goes */
		if (TupleDescAttr(b->desc, i)->attisdropped)
			isnull[i] = true;
		if (!b->target[i] || isnull[i])
			continue;
		cx_inspect_datum(values[i], &sv);
		if (cx_value_needs_rewrite(&sv, b->method[i]))
		{
			struct varlena *raw = detoast_attr((struct varlena *) DatumGetPointer(values[i]));
			Datum		packed = toast_compress_datum(PointerGetDatum(raw), b->cmethod[i]);

			values[i] = DatumGetPointer(packed) != NULL ? packed : PointerGetDatum(raw);
		}
	}
	newtup = heap_form_tuple(b->desc, values, isnull);
	newtup->t_tableOid = RelationGetRelid(b->rel);
	result = cx_heap_update(b->rel, &oldtup->t_self, newtup, cid, InvalidSnapshot,
							true, &tmfd, &lockmode, update_indexes);
	if (result == TM_Ok)
		*newtid = newtup->t_self;
	return result;
}

/*
 * Rewrite the row version at tid if it still needs it.  The row lock is
 * taken with wait_policy (LockWaitSkip in passes: a row a client holds is
 * left for the retry).  Returns heap_lock_tuple's answer; *rewritten says
 * whether a new version was written.  Runs in the batch's row context.
 */
static TM_Result
rewrite_row(OnlineRun *run, Batch *b, ItemPointer tid, LockWaitPolicy wait_policy,
			bool *rewritten)
{
	HeapTupleData locked;
	HeapTuple	oldtup;
	HeapTuple	stored;
	Buffer		buf;
	Buffer		pin;
	Page		page;
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	bool		present;
	TM_FailureData tmfd;
	TM_Result	result;
	CommandId	cid = GetCurrentCommandId(true);
	ItemPointerData newtid;
	CxUpdateIndexes update_indexes;

	*rewritten = false;
	locked.t_self = *tid;

	/*
	 * A retried tid comes from an earlier transaction: its row may have been
	 * deleted and pruned since, leaving a line pointer heap_lock_tuple()
	 * must not be given.  Check it holds a row this snapshot sees, and keep
	 * the pin until the row is locked: a pinned page is not pruned.
	 */
	if (ItemPointerGetBlockNumber(tid) >= RelationGetNumberOfBlocks(b->rel))
		return TM_Deleted;		/* the table shrank (VACUUM truncated it) */
	pin = ReadBuffer(b->rel, ItemPointerGetBlockNumber(tid));
	LockBuffer(pin, BUFFER_LOCK_SHARE);
	page = BufferGetPage(pin);
	present = off <= PageGetMaxOffsetNumber(page) &&
		ItemIdIsNormal(PageGetItemId(page, off));
	if (present)
	{
		HeapTupleData tuple;

		tuple.t_data = (HeapTupleHeader) PageGetItem(page, PageGetItemId(page, off));
		tuple.t_len = ItemIdGetLength(PageGetItemId(page, off));
		tuple.t_tableOid = RelationGetRelid(b->rel);
		tuple.t_self = *tid;
		present = HeapTupleSatisfiesVisibility(&tuple, b->snapshot, pin);
	}
	LockBuffer(pin, BUFFER_LOCK_UNLOCK);
	if (!present)
	{
		ReleaseBuffer(pin);
		return TM_Deleted;		/* a newer version, if any: the next pass */
	}

	/*
	 * LockTupleExclusive, the mode heap_update() needs when a key column's
	 * stored bytes change: then heap_update() finds the row locked by this
	 * transaction alone and neither waits nor fails.
	 */
	result = heap_lock_tuple(b->rel, &locked, cid, LockTupleExclusive, wait_policy,
							 false, &buf, &tmfd);
	ReleaseBuffer(pin);
	if (result != TM_Ok)
	{
		if (BufferIsValid(buf))
			ReleaseBuffer(buf);
		return result;
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	oldtup = heap_copytuple(&locked);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buf);

	/* the version read before the lock may have been replaced meanwhile */
	if (!scan_targets(b, oldtup, NULL, NULL))
		return TM_Ok;

	if (run->is_cx)
	{
		bool	   *reencode = palloc0(sizeof(bool) * Max(b->desc->natts, 1));

		/* only the values in another method: the others keep their bytes */
		(void) scan_targets(b, oldtup, reencode, NULL);
		result = cx_reencode_locked_row(b->rel, oldtup, b->settings, reencode,
										cid, &newtid, &update_indexes);
		if (result == TM_Ok && !ItemPointerIsValid(&newtid))
			return TM_Ok;		/* uncompressed, and it would stay so */
	}
	else
		result = reencode_heap_row(b, oldtup, cid, &newtid, &update_indexes);

	if (result != TM_Ok)
		elog(ERROR, "could not update locked tuple (%u,%u) of relation \"%s\"",
			 ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			 RelationGetRelationName(b->rel));

	/*
	 * The stored bytes of indexed columns changed, so heap_update() did not
	 * update in place (HOT) and every index needs an entry for the new
	 * version; its values are the old ones, decoded as a query reads them.
	 */
	if (cx_update_needs_indexes(update_indexes) && b->rri->ri_NumIndices > 0)
	{
		List	   *recheck;

		if (!table_tuple_fetch_row_version(b->rel, &newtid, SnapshotAny, b->slot))
			elog(ERROR, "could not fetch new tuple version (%u,%u) of relation \"%s\"",
				 ItemPointerGetBlockNumber(&newtid), ItemPointerGetOffsetNumber(&newtid),
				 RelationGetRelationName(b->rel));
		recheck = cx_insert_update_index_tuples(b->rri, b->slot, b->estate,
												update_indexes);
		list_free(recheck);
		ExecClearTuple(b->slot);
		ResetPerTupleExprContext(b->estate);
	}

	stored = cx_fetch_stored_tuple(b->rel, &newtid);
	(void) scan_targets(b, oldtup, NULL, &run->bytes_before);
	if (stored)
		(void) scan_targets(b, stored, NULL, &run->bytes_after);
	run->rows_rewritten++;
	*rewritten = true;
	return TM_Ok;
}

/* Remember a row a client held, for the retry after the pass. */
static void
remember_held(OnlineRun *run, ItemPointer tid)
{
	if (run->nheld == run->maxheld)
	{
		run->maxheld = Max(64, run->maxheld * 2);
		run->held = run->held == NULL ?
			MemoryContextAlloc(run->cxt, sizeof(ItemPointerData) * run->maxheld) :
			repalloc(run->held, sizeof(ItemPointerData) * run->maxheld);
	}
	run->held[run->nheld++] = *tid;
}

/*
 * One batch of a pass, from block *blk: returns when the batch is full
 * (batch_rows rows rewritten, or half of max_lock_wait spent), or at the
 * table's end as it is now (returns true then).  The caller commits.
 */
static bool
run_batch(OnlineRun *run, BlockNumber *blk)
{
	Batch		b;
	BlockNumber nblocks;
	BlockNumber first_blk;
	TimestampTz start = GetCurrentTimestamp();
	int64		budget_ms = run->max_wait_ms / 2;
	int			done = 0;
	bool		full = false;

	begin_batch(run, &b);
	if (!run->file_replaced)
		reuse_freed_space(run, b.rel);
	nblocks = RelationGetNumberOfBlocks(b.rel);
	progress(run, CX_ONLINE_BLKS_TOTAL, nblocks);
	first_blk = *blk;
	if (*blk == 0 && run->next_off == InvalidOffsetNumber)
	{
		run->pass_blocks = nblocks;
		run->pass_toast_blocks = 0;
		if (OidIsValid(b.rel->rd_rel->reltoastrelid))
		{
			Relation	toast = table_open(b.rel->rd_rel->reltoastrelid, AccessShareLock);

			run->pass_toast_blocks = RelationGetNumberOfBlocks(toast);
			table_close(toast, AccessShareLock);
		}
	}

	while (*blk < nblocks && !full)
	{
		OffsetNumber offs[MaxHeapTuplesPerPage];
		int			noffs = 0;
		Buffer		buf;
		Page		page;
		OffsetNumber maxoff;
		int			k;

		CHECK_FOR_INTERRUPTS();

		/* the rows of this block that need a new version, as of the snapshot */
		buf = ReadBufferExtended(b.rel, MAIN_FORKNUM, *blk, RBM_NORMAL, NULL);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		maxoff = PageGetMaxOffsetNumber(page);
		for (OffsetNumber off = Max(run->next_off, FirstOffsetNumber); off <= maxoff; off++)
		{
			ItemId		itemid = PageGetItemId(page, off);
			HeapTupleData tuple;

			if (!ItemIdIsNormal(itemid))
				continue;
			tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
			tuple.t_len = ItemIdGetLength(itemid);
			tuple.t_tableOid = RelationGetRelid(b.rel);
			ItemPointerSet(&tuple.t_self, *blk, off);
			if (!HeapTupleSatisfiesVisibility(&tuple, b.snapshot, buf))
			{
				/*
				 * Moving to heap: a version this snapshot does not see may
				 * still be seen by another (being inserted, recently
				 * deleted).  One holding a compressx value keeps the table
				 * from moving until it is dead (or its row rewritten).
				 */
				if (run->move == CX_MOVE_TO_HEAP && holds_own_value(&b, &tuple))
				{
					HTSV_Result vis = HeapTupleSatisfiesVacuum(&tuple, b.horizon, buf);

					if (vis != HEAPTUPLE_DEAD &&
						!(vis == HEAPTUPLE_RECENTLY_DEAD && gone_for_all(run, &tuple)))
						run->pending++;
				}
				continue;
			}
			run->rows_checked++;
			if (scan_targets(&b, &tuple, NULL, NULL))
				offs[noffs++] = off;
		}
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		ReleaseBuffer(buf);

		for (k = 0; k < noffs; k++)
		{
			ItemPointerData tid;
			MemoryContext oldcxt;
			TM_Result	result;
			bool		rewritten;

			CHECK_FOR_INTERRUPTS();
			ItemPointerSet(&tid, *blk, offs[k]);
			oldcxt = MemoryContextSwitchTo(b.rowcxt);
			result = rewrite_row(run, &b, &tid, LockWaitSkip, &rewritten);
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(b.rowcxt);

			if (result == TM_WouldBlock)
			{
				/* a client holds the row: retried after the pass */
				remember_held(run, &tid);
				run->retries++;
			}
			else if (result == TM_Updated || result == TM_Deleted)
				run->pass_changed = true;	/* its new version: next pass */
			if (rewritten)
			{
				run->pass_changed = true;
				done++;
			}
			if (done >= run->batch_rows ||
				TimestampDifferenceExceeds(start, GetCurrentTimestamp(), (int) budget_ms))
			{
				full = true;
				k++;
				break;
			}
		}

		/* a full batch ends inside a block: the next one goes on from there */
		run->next_off = InvalidOffsetNumber;
		if (full && k < noffs)
			run->next_off = offs[k];
		else
			(*blk)++;
		/* ROW EXCLUSIVE makes DDL wait: hold it no longer than a batch's time */
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), (int) budget_ms))
			full = true;
		progress(run, CX_ONLINE_BLKS_DONE, *blk);
	}

	/* this batch's pages: pruned two batches from now */
	run->done_from[1] = first_blk;
	run->done_to[1] = Min(*blk + 1, nblocks);

	/* compressx.debug_rewrite_delay: lets tests cancel a batch in flight */
	if (cx_debug_rewrite_delay_ms > 0)
		nap(cx_debug_rewrite_delay_ms);

	end_batch(&b);
	report(run, CX_ONLINE_PHASE_REWRITE);
	return *blk >= nblocks;
}

typedef struct RetryArg
{
	OnlineRun  *run;
	Batch	   *b;
	ItemPointer tid;
	TM_Result	result;
	bool		rewritten;
} RetryArg;

static void
retry_row_fn(void *arg)
{
	RetryArg   *ra = (RetryArg *) arg;
	MemoryContext oldcxt = MemoryContextSwitchTo(ra->b->rowcxt);

	ra->result = rewrite_row(ra->run, ra->b, ra->tid, LockWaitBlock, &ra->rewritten);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Retry a row a client held, in a transaction of its own, waiting for the
 * row at most max_lock_wait (as lock_timeout).  A wait that times out is
 * counted and the row stays for the next pass.  The caller commits.
 */
static void
retry_held(OnlineRun *run, ItemPointer tid)
{
	Batch		b;
	RetryArg	ra;

	begin_batch(run, &b);
	if (run->file_replaced)
	{
		/* the tid named a row of the old file: the next pass reads the new */
		end_batch(&b);
		return;
	}
	ra.run = run;
	ra.b = &b;
	ra.tid = tid;
	ra.rewritten = false;
	if (!with_lock_timeout(run, retry_row_fn, &ra))
		ra.result = TM_WouldBlock;
	MemoryContextReset(b.rowcxt);

	if (ra.result == TM_WouldBlock)
	{
		remember_held(run, tid);
		run->retries++;
	}
	else if (ra.result == TM_Updated || ra.result == TM_Deleted || ra.rewritten)
		run->pass_changed = true;
	end_batch(&b);
	report(run, CX_ONLINE_PHASE_RETRY);
}

/*
 * Step 1 on a partitioned table in the tree (it has no rows): the target
 * becomes its setting, so partitions created later follow it.  compressx's
 * setting under SHARE UPDATE EXCLUSIVE; attcompression, for pglz and lz4,
 * under ACCESS EXCLUSIVE (queued at most max_lock_wait, retried), as
 * recompress_table does.
 */
static void
set_parent_target(OnlineRun *run, Oid parentid)
{
	Relation	rel;
	TargetColumn *targets;
	int			ntargets;
	char		method = cx_recompress_heap_method(&run->req);

	if (run->req.codec == NULL)
		return;
	progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_TARGET);
	lock_table_exclusive(run, parentid, ShareUpdateExclusiveLock, CX_ONLINE_PHASE_TARGET);
	rel = try_relation_open(parentid, NoLock);
	if (rel == NULL)
		return;					/* dropped meanwhile: nothing to set */
	targets = cx_recompress_resolve_targets(rel, run->columns, method, &ntargets);
	for (int t = 0; t < ntargets; t++)
		cx_store_column_setting(parentid, targets[t].name,
								get_attnum(parentid, targets[t].name),
								run->req.codec, run->req.level_isnull,
								run->req.level, true, 0, true);
	relation_close(rel, NoLock);
	if (method == InvalidCompressionMethod)
		return;
	lock_table_exclusive(run, parentid, AccessExclusiveLock, CX_ONLINE_PHASE_TARGET);
	if (get_rel_relkind(parentid) == RELKIND_PARTITIONED_TABLE)
		cx_set_column_compression(parentid, targets, ntargets);
}

/*
 * Moving to heap, step 1: every compressible column gets a setting of its
 * own (a row of compressx.column_settings) that heap can read: the codec
 * asked for, else the column's current codec when it is pglz, lz4 or none,
 * else the method heap would use for it (attcompression, else
 * default_toast_compression).  Own rows, so that no session's
 * compressx.default_codec can bring zstd back.  Under SHARE UPDATE
 * EXCLUSIVE, as set_column_codec.
 */
static void
set_target_for_heap(OnlineRun *run)
{
	Relation	rel;
	TargetColumn *targets;
	int			ntargets;
	CxColumnSetting *settings;

	progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_TARGET);
	lock_table_exclusive(run, run->relid, ShareUpdateExclusiveLock, CX_ONLINE_PHASE_TARGET);
	rel = open_checked(run);
	settings = palloc(sizeof(CxColumnSetting) * Max(RelationGetDescr(rel)->natts, 1));
	cx_resolve_settings(rel, settings);
	targets = cx_recompress_resolve_targets(rel, NULL, cx_recompress_heap_method(&run->req),
											&ntargets);
	for (int t = 0; t < ntargets; t++)
	{
		AttrNumber	attnum = get_attnum(run->relid, targets[t].name);
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
		const CxColumnSetting *cur = &settings[attnum - 1];
		const CxCodec *codec = run->req.codec;
		bool		level_isnull = run->req.level_isnull;
		int			level = run->req.level;

		if (codec == NULL && cur->codec->id != CX_CODEC_ZSTD)
		{
			codec = cur->codec;
			level_isnull = false;
			level = cur->level;
		}
		else if (codec == NULL)
		{
			char		m = CompressionMethodIsValid(att->attcompression) ?
				att->attcompression : default_toast_compression;

			codec = cx_codec_by_id(m == TOAST_LZ4_COMPRESSION ? CX_CODEC_LZ4 : CX_CODEC_PGLZ);
			level_isnull = true;
		}
		cx_store_column_setting(run->relid, targets[t].name, attnum, codec,
								level_isnull, level, true, 0, true);
	}
	table_close(rel, NoLock);
}

/*
 * A mark of the rows of compressx.column_settings for relid (their row
 * versions): any change to them since changes the mark.
 */
static uint64
settings_mark(Oid relid)
{
	Oid			setid = cx_extension_table_oid("column_settings");
	Relation	srel;
	Snapshot	snap;
	ScanKeyData key;
	TableScanDesc scan;
	HeapTuple	tup;
	uint64		mark = 0;

	if (!OidIsValid(setid))
		return 0;
	srel = table_open(setid, AccessShareLock);
	snap = RegisterSnapshot(GetLatestSnapshot());
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = table_beginscan(srel, snap, 1, &key);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		uint64		v[2];

		v[0] = HeapTupleHeaderGetXmin(tup->t_data);
		v[1] = ((uint64) ItemPointerGetBlockNumber(&tup->t_self) << 16) |
			ItemPointerGetOffsetNumber(&tup->t_self);
		mark += hash_bytes_extended((const unsigned char *) v, sizeof(v), 0x4358);
	}
	table_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(srel, AccessShareLock);
	return mark;
}

/*
 * Moving to heap: wait until every transaction that held a lock on the table
 * conflicting with SHARE (every writer) when the settings changed has ended.
 * Writers after that read the new settings when they lock the table, so
 * they write no compressx value: new values follow the settings, and an
 * UPDATE re-encodes an unchanged zstd value once its column is no longer
 * zstd (am_write.c).  The wait holds no lock on the table: nobody queues
 * behind it.
 */
static void
wait_for_writers(OnlineRun *run)
{
	LOCKTAG		tag;
	VirtualTransactionId *holders;
	VirtualTransactionId *others;
	int			nothers;

	progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_WRITERS);
	SET_LOCKTAG_RELATION(tag, MyDatabaseId, run->relid);

	/*
	 * As WaitForLockers(ShareLock), but not for a (auto)vacuum, which holds
	 * a lock conflicting with SHARE and writes no row: a vacuum of a large
	 * table may take hours.  The holders list ends with an invalid one.
	 */
	holders = GetLockConflicts(&tag, ShareLock, NULL);
	others = GetCurrentVirtualXIDs(InvalidTransactionId, false, false,
								   PROC_IS_AUTOVACUUM | PROC_IN_VACUUM, &nothers);
	for (; VirtualTransactionIdIsValid(*holders); holders++)
	{
		for (int i = 0; i < nothers; i++)
		{
			if (VirtualTransactionIdEquals(*holders, others[i]))
			{
				(void) VirtualXactLock(*holders, true);
				break;
			}
		}
	}
	pfree(others);
}

/*
 * Moving to heap, after a pass that found compressx values only in row
 * versions its snapshot does not see (being inserted, or replaced but still
 * visible to older snapshots): wait for every transaction of this database
 * that has a snapshot now to end, as CREATE INDEX CONCURRENTLY waits for
 * old snapshots.  Then those versions are either visible to all or dead,
 * and the next pass rewrites or skips them.  Holds no table lock.
 */
static void
wait_for_old_snapshots(OnlineRun *run)
{
	int			n;
	VirtualTransactionId *vxids;
	Snapshot	snap;
	MemoryContext oldcxt;

	report(run, CX_ONLINE_PHASE_OLD);

	/* first what has committed now, then who has a snapshot now */
	snap = GetLatestSnapshot();
	oldcxt = MemoryContextSwitchTo(run->cxt);
	if (run->waited)
	{
		pfree(run->waited->xip);
		pfree(run->waited->subxip);
		pfree(run->waited);
	}
	run->waited = palloc(sizeof(SnapshotData));
	memcpy(run->waited, snap, sizeof(SnapshotData));
	run->waited->xip = palloc(sizeof(TransactionId) * Max(snap->xcnt, 1));
	memcpy(run->waited->xip, snap->xip, sizeof(TransactionId) * snap->xcnt);
	run->waited->subxip = palloc(sizeof(TransactionId) * Max(snap->subxcnt, 1));
	memcpy(run->waited->subxip, snap->subxip, sizeof(TransactionId) * snap->subxcnt);
	run->waited->copied = true;
	run->waited->active_count = run->waited->regd_count = 0;
	MemoryContextSwitchTo(oldcxt);

	vxids = GetCurrentVirtualXIDs(ReadNextTransactionId(), true, false,
								  PROC_IS_AUTOVACUUM | PROC_IN_VACUUM, &n);
	for (int i = 0; i < n; i++)
		(void) VirtualXactLock(vxids[i], true);
	pfree(vxids);

	/*
	 * Nobody to wait for: the horizon is held by something without a
	 * transaction here (a replication slot, a standby's feedback).  The
	 * next pass comes after a nap.
	 */
	if (n == 0)
		nap(1000);
}

/*
 * Error if a publication would publish relid: directly, through a
 * partition ancestor, through its schema or an ancestor's, or FOR ALL
 * TABLES.  compressx tables cannot be published (the publication guard of
 * the install script says why).
 */
static void
check_not_published(Oid relid)
{
	List	   *rels = list_make1_oid(relid);
	List	   *pubs = GetAllTablesPublications();
	ListCell   *lc;

	if (get_rel_relispartition(relid))
		rels = list_concat(rels, get_partition_ancestors(relid));
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		pubs = list_concat(pubs, GetRelationPublications(r));
		pubs = list_concat(pubs, GetSchemaPublications(get_rel_namespace(r)));
	}
	if (pubs != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("compressx table \"%s\" cannot be part of publication \"%s\"",
						get_rel_name(relid), get_publication_name(linitial_oid(pubs), false)),
				 errdetail("Logical replication decodes WAL, not the table access method, so it cannot read values compressx stores in its own format."),
				 errhint("Leave the table out of the publication, or keep it stored by heap.")));
}

/*
 * Point relid at access method amoid: pg_class.relam and its dependency,
 * as ALTER TABLE .. SET ACCESS METHOD leaves them, without a rewrite (the
 * stored rows suit both: see move_to_compressx and move_to_heap).  The
 * caller holds ACCESS EXCLUSIVE, so no statement spans the change; the
 * update invalidates every backend's relcache entry.
 */
static void
set_relam(Oid relid, Oid amoid)
{
	Relation	classrel = table_open(RelationRelationId, RowExclusiveLock);
	HeapTuple	tup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(relid));
	Form_pg_class form;
	Oid			oldam;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	form = (Form_pg_class) GETSTRUCT(tup);
	oldam = form->relam;
	form->relam = amoid;
	CatalogTupleUpdate(classrel, &tup->t_self, tup);
	if (changeDependencyFor(RelationRelationId, relid, AccessMethodRelationId,
							oldam, amoid) != 1)
		elog(ERROR, "failed to change access method dependency for relation \"%s\"",
			 get_rel_name(relid));
	InvokeObjectPostAlterHook(RelationRelationId, relid, 0);
	heap_freetuple(tup);
	table_close(classrel, RowExclusiveLock);
	CommandCounterIncrement();
}

/*
 * heap -> compressx, before any pass: compressx reads every value heap
 * stores (core's formats), so only relam changes, under ACCESS EXCLUSIVE
 * (queued at most max_lock_wait, retried).  The passes that follow bring
 * the values to the settings (which start from attcompression).
 */
static void
move_to_compressx(OnlineRun *run)
{
	Relation	rel;

	progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_AM);
	check_not_published(run->relid);
	lock_table_exclusive(run, run->relid, AccessExclusiveLock, CX_ONLINE_PHASE_AM);
	rel = open_checked(run);
	check_not_published(run->relid);
	table_close(rel, NoLock);
	set_relam(run->relid, run->target_am);
	run->is_cx = true;
	run->move = CX_MOVE_NONE;
}

/*
 * compressx -> heap, after a pass that found no compressx value in any row
 * version still visible to anyone, begun after wait_for_writers(): from
 * then on no writer stores one (see there), so the table holds none.
 * Under ACCESS EXCLUSIVE, checks the settings are those the pass ran with
 * (each column its own, none zstd, none changed since: set_column_codec
 * meanwhile would void the proof), sets attcompression to the codec asked
 * for, and changes relam.  Returns false, changing nothing, when the
 * settings changed: the caller starts over.
 */
static bool
move_to_heap(OnlineRun *run, uint64 mark)
{
	Relation	rel;
	TargetColumn *targets;
	int			ntargets;
	CxColumnSetting *settings;
	bool		ok;

	progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_AM);
	lock_table_exclusive(run, run->relid, AccessExclusiveLock, CX_ONLINE_PHASE_AM);
	rel = open_checked(run);
	settings = palloc(sizeof(CxColumnSetting) * Max(RelationGetDescr(rel)->natts, 1));
	cx_resolve_settings(rel, settings);
	targets = cx_recompress_resolve_targets(rel, NULL, cx_recompress_heap_method(&run->req),
											&ntargets);
	ok = settings_mark(run->relid) == mark;
	for (int t = 0; ok && t < ntargets; t++)
	{
		const CxColumnSetting *cs = &settings[get_attnum(run->relid, targets[t].name) - 1];

		ok = cs->explicit_setting && cs->codec->id != CX_CODEC_ZSTD;
	}
	table_close(rel, NoLock);
	if (!ok)
	{
		run->retries++;
		return false;
	}
	if (run->req.codec != NULL)
		cx_set_column_compression(run->relid, targets, ntargets);
	set_relam(run->relid, HEAP_TABLE_AM_OID);
	run->is_cx = false;
	run->move = CX_MOVE_NONE;
	return true;
}

/*
 * The access method the argument names (heap or compressx), InvalidOid for
 * NULL.
 */
static Oid
target_access_method(FunctionCallInfo fcinfo, int argno)
{
	const char *name;

	if (PG_ARGISNULL(argno))
		return InvalidOid;
	name = NameStr(*PG_GETARG_NAME(argno));
	if (strcmp(name, "heap") == 0)
		return HEAP_TABLE_AM_OID;
	if (strcmp(name, "compressx") == 0)
		return get_table_am_oid("compressx", false);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("access method \"%s\" is not supported by recompress_online", name),
			 errhint("Use heap or compressx, or NULL to keep the table's access method.")));
	return InvalidOid;			/* keep compiler quiet */
}

/*
 * Record a run on relid in compressx.online_runs, with the table's settings
 * as they are (compressx's rows, attcompression), unless a run interrupted
 * earlier recorded it already: then the settings of before that run stay,
 * for recompress_online_cleanup.  Rows of tables that no longer exist go.
 */
static void
record_run(OnlineRun *run, Oid relid)
{
	Oid			types[5] = {OIDOID, TEXTOID, INT4OID, NAMEARRAYOID, TEXTOID};
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};

	if (!OidIsValid(cx_extension_table_oid("online_runs")))
		return;					/* extension not updated to 0.2.0 yet */
	values[0] = ObjectIdGetDatum(relid);
	values[1] = run->req.codec ? CStringGetTextDatum(run->req.codec->name) : (Datum) 0;
	nulls[1] = run->req.codec ? ' ' : 'n';
	values[2] = Int32GetDatum(run->req.level);
	nulls[2] = run->req.level_isnull ? 'n' : ' ';
	values[3] = PointerGetDatum(run->columns);
	nulls[3] = run->columns ? ' ' : 'n';
	values[4] = OidIsValid(run->target_am) ?
		CStringGetTextDatum(run->target_am == HEAP_TABLE_AM_OID ? "heap" : "compressx") : (Datum) 0;
	nulls[4] = OidIsValid(run->target_am) ? ' ' : 'n';
	cx_settings_exec("DELETE FROM compressx.online_runs r WHERE NOT EXISTS "
					 "(SELECT FROM pg_class c WHERE c.oid = r.relid::oid)",
					 0, NULL, NULL, NULL);
	cx_settings_exec("INSERT INTO compressx.online_runs "
					 "SELECT $1::oid::regclass, now(), $2, $3, $4, $5, "
					 "(SELECT jsonb_agg(to_jsonb(s) - 'relid' ORDER BY s.attnum) "
					 " FROM compressx.column_settings s WHERE s.relid = $1), "
					 "(SELECT string_agg(a.attnum || ':' || a.attcompression::text, ',' ORDER BY a.attnum) "
					 " FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 "
					 " AND NOT a.attisdropped AND a.attlen = -1) "
					 "ON CONFLICT (relid) DO NOTHING",
					 5, types, values, nulls);
}

/*
 * A level named on a compressx table: the stored form does not record the
 * level, so values already in the target codec are re-encoded when their
 * row version was written by a transaction older than the run.  After the
 * setting changed and the writers that started before have ended, every
 * transaction with a newer xid encodes with the new level; the first xid
 * after that is the run's epoch, kept in compressx.online_runs so that a
 * resumed call (with the same codec and level) goes on from it instead of
 * re-encoding what it rewrote already.
 */
static void
start_relevel(OnlineRun *run)
{
	Oid			types[4] = {OIDOID, INT8OID, TEXTOID, INT4OID};
	Datum		values[4];
	text	   *epoch;
	FullTransactionId next;

	run->relevel_xid = InvalidTransactionId;
	if (!run->is_cx || run->req.codec == NULL || run->req.level_isnull ||
		!OidIsValid(cx_extension_table_oid("online_runs")))
		return;
	wait_for_writers(run);
	next = ReadNextFullTransactionId();
	values[0] = ObjectIdGetDatum(run->relid);
	values[1] = Int64GetDatum((int64) U64FromFullTransactionId(next));
	values[2] = CStringGetTextDatum(run->req.codec->name);
	values[3] = Int32GetDatum(run->req.level);
	epoch = cx_settings_exec_text("UPDATE compressx.online_runs SET "
								  "epoch = CASE WHEN epoch IS NULL OR codec IS DISTINCT FROM $3 "
								  "  OR level IS DISTINCT FROM $4 THEN $2 ELSE epoch END, "
								  "codec = $3, level = $4 "
								  "WHERE relid = $1 RETURNING epoch::text",
								  4, types, values, NULL);
	if (epoch != NULL)
		next = FullTransactionIdFromU64((uint64) strtou64(text_to_cstring(epoch), NULL, 10));
	run->relevel_xid = XidFromFullTransactionId(next);
}

/* The run on relid completed: forget it. */
static void
forget_run(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	if (OidIsValid(cx_extension_table_oid("online_runs")))
		cx_settings_exec("DELETE FROM compressx.online_runs WHERE relid = $1",
						 1, types, values, NULL);
}

/* Bad input that needs no lock: refused before anything happens. */
static void
check_target(Oid relid, bool partitioned_ok)
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

/*
 * Whether a dictionary of compressx.dictionaries serves relid (trained on it
 * or on a partitioned ancestor): only then can a stored zstd value name
 * one, so only then are values' dictionaries compared (a reference's needs
 * a TOAST chunk read).
 */
static bool
table_has_dictionaries(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	if (!OidIsValid(cx_extension_table_oid("dictionaries")))
		return false;
	return cx_settings_exec("SELECT count(*)::int4 FROM compressx.dictionaries d "
							"WHERE d.relid = $1 OR d.relid IN "
							"(SELECT p.relid FROM pg_partition_ancestors($1) p)",
							1, types, values, NULL) > 0;
}

/*
 * The passes over the table, until one finds nothing to rewrite and no row
 * held (and, moving to heap, no compressx value in a row version someone
 * may still see).
 */
static void
run_passes(OnlineRun *run)
{
	run->has_dicts = run->is_cx && table_has_dictionaries(run->relid);
	for (;;)
	{
		BlockNumber blk = 0;
		int			nheld;
		ItemPointerData *held;

		run->pass++;
		run->filenumber = InvalidOid;
		run->file_replaced = false;
		run->next_off = InvalidOffsetNumber;
		run->nheld = 0;
		run->pending = 0;
		run->pass_changed = false;
		report(run, CX_ONLINE_PHASE_REWRITE);
		while (!run_batch(run, &blk))
			SPI_commit();
		SPI_commit();

		/* the rows clients held during the pass, one transaction each */
		nheld = run->nheld;
		held = run->held;
		run->held = NULL;
		run->nheld = run->maxheld = 0;
		for (int i = 0; i < nheld; i++)
		{
			retry_held(run, &held[i]);
			SPI_commit();
		}
		if (held)
			pfree(held);

		/* done when a pass found nothing to do and no row is still held */
		if (!run->pass_changed && run->nheld == 0 && nheld == 0 && run->pending == 0)
			break;
		if (run->pass_changed)
			continue;
		if (run->pending > 0)
		{
			wait_for_old_snapshots(run);
			SPI_commit();
			continue;
		}
		/* rows still held after a wait: another pass, after a short nap */
		report(run, CX_ONLINE_PHASE_RETRY);
		nap(Min(Max(run->max_wait_ms, 10), 1000));
	}
}

/* One table (a partition of a partitioned one): checks, target, passes. */
static void
run_online(OnlineRun *run)
{
	Relation	rel;
	float4		reltuples;

	/* the checks that need the relation, under a lock nobody waits for */
	lock_table(run, AccessShareLock);
	rel = try_relation_open(run->relid, NoLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", run->relid)));
	cx_check_table_relkind(rel);
	run->relname = MemoryContextStrdup(run->cxt, RelationGetRelationName(rel));
	run->is_cx = cx_is_compressx_relation(rel);
	run->move = CX_MOVE_NONE;
	if (OidIsValid(run->target_am) && run->target_am != rel->rd_rel->relam)
		run->move = run->target_am == HEAP_TABLE_AM_OID ? CX_MOVE_TO_HEAP : CX_MOVE_TO_CX;
	cx_recompress_check_request_for(rel, &run->req,
									run->move == CX_MOVE_NONE ? !run->is_cx :
									run->move == CX_MOVE_TO_HEAP);
	{
		int			n;

		/* unknown or uncompressible columns */
		(void) cx_recompress_resolve_targets(rel, run->columns,
											 cx_recompress_heap_method(&run->req), &n);
	}
	reltuples = rel->rd_rel->reltuples;
	relation_close(rel, NoLock);
	if (run->move == CX_MOVE_TO_CX)
		check_not_published(run->relid);
	progress(run, CX_ONLINE_TABLE, run->relid);
	progress(run, CX_ONLINE_ROWS_TOTAL, reltuples < 0 ? 0 : (int64) reltuples);

	record_run(run, run->relid);
	if (run->move == CX_MOVE_TO_CX)
	{
		move_to_compressx(run);
		SPI_commit();
	}
	if (run->move != CX_MOVE_TO_HEAP)
	{
		set_target(run);
		SPI_commit();
		start_relevel(run);
		SPI_commit();
		run_passes(run);
		forget_run(run->relid);
		SPI_commit();
		return;
	}

	/*
	 * compressx -> heap: settings heap can read, a wait for the writers
	 * that started before them, passes until no row version anyone may see
	 * holds a compressx value, then relam.  Settings changed meanwhile void
	 * the proof: again from the settings.
	 */
	for (;;)
	{
		uint64		mark;

		set_target_for_heap(run);
		SPI_commit();
		wait_for_writers(run);
		mark = settings_mark(run->relid);
		SPI_commit();
		run_passes(run);
		if (move_to_heap(run, mark))
			break;
		SPI_commit();
	}
	forget_run(run->relid);
	SPI_commit();
}

/* The advisory lock marking a run on relid, taken without waiting. */
static void
claim_table(LOCKTAG *tag, Oid relid)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, relid, 0, CX_ONLINE_LOCK_FIELD4);
	if (LockAcquire(tag, ExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("recompress_online is already running on table \"%s\"",
						get_rel_name(relid)),
				 errhint("Wait for it to finish, or cancel it (see compressx.recompress_online_progress).")));
}

/*
 * Every table of the run: relid itself, or for a partitioned table its
 * partitioned tables first (their settings), then its leaf partitions in
 * turn, each a run of its own under its own advisory lock.
 */
static void
run_tables(OnlineRun *run, Oid relid, List *rels)
{
	ListCell   *lc;
	int64		done = 0;

	progress(run, CX_ONLINE_TABLES_TOTAL, list_length(rels));
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		if (get_rel_relkind(r) == RELKIND_PARTITIONED_TABLE)
		{
			record_run(run, r);
			set_parent_target(run, r);
			SPI_commit();
			progress(run, CX_ONLINE_TABLES_DONE, ++done);
		}
	}
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);
		LOCKTAG		tag;

		if (get_rel_relkind(r) != RELKIND_RELATION)
			continue;			/* dropped or detached meanwhile */
		if (r != relid)
			claim_table(&tag, r);
		PG_TRY();
		{
			run->relid = r;
			run_online(run);
		}
		PG_FINALLY();
		{
			if (r != relid)
				LockRelease(&tag, ExclusiveLock, true);
		}
		PG_END_TRY();
		progress(run, CX_ONLINE_TABLES_DONE, ++done);
	}
	foreach(lc, rels)
	{
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_PARTITIONED_TABLE)
			forget_run(lfirst_oid(lc));
	}
	SPI_commit();
	run->relid = relid;
}

/*
 * CALL compressx.recompress_online(rel regclass, codec text, level int,
 *		columns name[], access_method name, batch_rows int,
 *		max_lock_wait interval)
 */
Datum
compressx_recompress_online(PG_FUNCTION_ARGS)
{
	OnlineRun	run;
	LOCKTAG		tag;
	bool		nonatomic;
	List	   *rels;

	nonatomic = fcinfo->context && IsA(fcinfo->context, CallContext) &&
		!castNode(CallContext, fcinfo->context)->atomic;
	if (!nonatomic)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("recompress_online cannot run inside a transaction block"),
				 errdetail("It commits after every batch."),
				 errhint("Run CALL compressx.recompress_online(...) on its own, outside BEGIN .. COMMIT and outside functions.")));

	memset(&run, 0, sizeof(run));
	run.cxt = CurrentMemoryContext;	/* the procedure's: survives commits */
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	run.relid = PG_GETARG_OID(0);
	cx_recompress_parse_request(PG_ARGISNULL(1), PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1),
								PG_ARGISNULL(2), PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2),
								&run.req);
	run.columns = PG_ARGISNULL(3) ? NULL : PG_GETARG_ARRAYTYPE_P_COPY(3);
	run.target_am = target_access_method(fcinfo, 4);
	if (run.target_am == HEAP_TABLE_AM_OID && run.columns != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("columns must be NULL when access_method is heap"),
				 errdetail("Every column of a table stored by heap must hold values heap can read.")));
	run.batch_rows = CX_ONLINE_DEFAULT_BATCH;
	if (!PG_ARGISNULL(5))
	{
		run.batch_rows = PG_GETARG_INT32(5);
		if (run.batch_rows <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("batch_rows must be positive")));
	}
	if (PG_ARGISNULL(6))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("max_lock_wait must not be null")));
	{
		Interval   *iv = PG_GETARG_INTERVAL_P(6);
		int64		us = iv->time + (int64) iv->day * USECS_PER_DAY +
			(int64) iv->month * DAYS_PER_MONTH * USECS_PER_DAY;

		if (us < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_lock_wait must not be negative")));
		/* lock_timeout's range */
		run.max_wait_ms = Min(us / 1000, (int64) INT_MAX);
	}

	/* privileges and kinds before any lock, for every partition too */
	check_target(run.relid, true);
	if (get_rel_relkind(run.relid) == RELKIND_PARTITIONED_TABLE)
	{
		ListCell   *lc;

		rels = find_all_inheritors(run.relid, NoLock, NULL);
		foreach(lc, rels)
			check_target(lfirst_oid(lc), true);
	}
	else
		rels = list_make1_oid(run.relid);

	/*
	 * One run per table: a session-level lock (an advisory lock on the
	 * table's OID, shown in pg_locks), released when the run ends, fails,
	 * or the session ends.  A partition's is taken when its turn comes.
	 */
	claim_table(&tag, run.relid);
	PG_TRY();
	{
		SPI_connect_ext(SPI_OPT_NONATOMIC);
		run.top_relid = run.relid;
		progress_restart(&run);
		run_tables(&run, run.relid, rels);
		pgstat_progress_end_command();
		SPI_finish();
	}
	PG_FINALLY();
	{
		LockRelease(&tag, ExclusiveLock, true);
	}
	PG_END_TRY();

	ereport(NOTICE,
			(errmsg("recompress_online rewrote %lld rows of \"%s\" in %lld passes",
					(long long) run.rows_rewritten, get_rel_name(run.relid),
					(long long) run.pass),
			 errdetail("Stored bytes of the target values of those rows: %lld before, %lld after; %lld retries.",
					   (long long) run.bytes_before, (long long) run.bytes_after,
					   (long long) run.retries)));
	PG_RETURN_VOID();
}

/*
 * Restore the settings relid had before its interrupted run and forget the
 * run; false when no run of relid is recorded.  compressx's rows under
 * SHARE UPDATE EXCLUSIVE (as set_column_codec), attcompression, where it
 * differs, under ACCESS EXCLUSIVE (as ALTER COLUMN .. SET COMPRESSION),
 * both waited for as those commands wait.
 */
static bool
cleanup_table(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	text	   *before;
	char	   *list;
	char	   *item;
	char	   *save;
	TargetColumn *targets;
	int			ntargets = 0;
	int			maxtargets = 8;

	LockRelationOid(relid, ShareUpdateExclusiveLock);
	if (cx_settings_exec("SELECT count(*)::int4 FROM compressx.online_runs WHERE relid = $1",
						 1, types, values, NULL) == 0)
		return false;
	cx_settings_exec("DELETE FROM compressx.column_settings WHERE relid = $1",
					 1, types, values, NULL);
	cx_settings_exec("INSERT INTO compressx.column_settings "
					 "(relid, attname, attnum, codec, level, min_size, dict_id) "
					 "SELECT $1::oid::regclass, a.attname, a.attnum, x.codec, x.level, "
					 "       x.min_size, x.dict_id "
					 "FROM compressx.online_runs r, "
					 "     jsonb_to_recordset(r.settings_before) AS x(attnum smallint, codec text, "
					 "         level int, min_size int, dict_id int) "
					 "JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = x.attnum "
					 "     AND NOT a.attisdropped "
					 "WHERE r.relid = $1",
					 1, types, values, NULL);
	before = cx_settings_exec_text("SELECT compression_before FROM compressx.online_runs "
								   "WHERE relid = $1", 1, types, values, NULL);

	/* attcompression: "attnum:method,..." (method empty: the default) */
	targets = palloc(sizeof(TargetColumn) * maxtargets);
	list = before ? text_to_cstring(before) : pstrdup("");
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save))
	{
		char	   *colon = strchr(item, ':');
		AttrNumber	attnum = (AttrNumber) atoi(item);
		char		method = colon && colon[1] ? colon[1] : InvalidCompressionMethod;
		HeapTuple	tup = SearchSysCacheAttNum(relid, attnum);

		if (!HeapTupleIsValid(tup))
			continue;
		if (!((Form_pg_attribute) GETSTRUCT(tup))->attisdropped &&
			((Form_pg_attribute) GETSTRUCT(tup))->attcompression != method)
		{
			if (ntargets == maxtargets)
			{
				maxtargets *= 2;
				targets = repalloc(targets, sizeof(TargetColumn) * maxtargets);
			}
			memset(&targets[ntargets], 0, sizeof(TargetColumn));
			namestrcpy((Name) targets[ntargets].name,
					   NameStr(((Form_pg_attribute) GETSTRUCT(tup))->attname));
			targets[ntargets].method = method;
			ntargets++;
		}
		ReleaseSysCache(tup);
	}
	if (ntargets > 0)
	{
		LockRelationOid(relid, AccessExclusiveLock);
		cx_set_column_compression(relid, targets, ntargets);
	}
	forget_run(relid);
	return true;
}

/*
 * compressx.recompress_online_cleanup(rel regclass) RETURNS text
 *
 * Abandon the interrupted run of rel (of each of its partitions, for a
 * partitioned table): the column settings it changed are restored as they
 * were before the first interrupted CALL; the rows it rewrote stay as they
 * are (each whole, in a codec the table reads), and so does the access
 * method.  Refused while a run is active on the table.
 */
Datum
compressx_recompress_online_cleanup(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	List	   *rels;
	ListCell   *lc;
	int			n = 0;
	List	   *tags = NIL;

	check_target(relid, true);
	if (!OidIsValid(cx_extension_table_oid("online_runs")))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension compressx must be updated to version 0.2.0"),
				 errhint("ALTER EXTENSION compressx UPDATE")));
	rels = get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE ?
		find_all_inheritors(relid, NoLock, NULL) : list_make1_oid(relid);
	foreach(lc, rels)
		check_target(lfirst_oid(lc), true);

	/* no run may be active on any of them (nor on an ancestor) */
	foreach(lc, rels)
	{
		LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

		claim_table(tag, lfirst_oid(lc));
		tags = lappend(tags, tag);
	}
	if (get_rel_relispartition(relid))
	{
		foreach(lc, get_partition_ancestors(relid))
		{
			LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

			claim_table(tag, lfirst_oid(lc));
			tags = lappend(tags, tag);
		}
	}
	PG_TRY();
	{
		foreach(lc, rels)
			n += cleanup_table(lfirst_oid(lc)) ? 1 : 0;
	}
	PG_FINALLY();
	{
		foreach(lc, tags)
			LockRelease((LOCKTAG *) lfirst(lc), ExclusiveLock, true);
	}
	PG_END_TRY();
	if (n == 0)
		PG_RETURN_TEXT_P(cstring_to_text(psprintf("no interrupted recompress_online run on \"%s\"",
												  get_rel_name(relid))));
	PG_RETURN_TEXT_P(cstring_to_text(psprintf("restored the settings of %d table%s of \"%s\" as they were before the interrupted run",
											  n, n == 1 ? "" : "s", get_rel_name(relid))));
}
