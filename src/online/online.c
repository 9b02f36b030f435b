/*-------------------------------------------------------------------------
 *
 * online.c
 *	  recompress_online(): bring the stored values of a table to a codec
 *	  while other sessions keep reading and writing it.
 *
 * In place, in batches (design: doc/design/online.md).  A compressx table's pages
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
 *	  5. The compaction (compact.c) moves the rows and TOAST values left at
 *		 the end of the files into the room the rewrite freed, so that a
 *		 plain VACUUM truncates the end.
 *
 * Every step is a transaction of its own that locks the table once (never
 * a stronger lock after a weaker one: that deadlocks with a client that
 * read the table and then alters it), checks it again and runs as its
 * owner (cx_online_open_checked), as core's CLUSTER does: index
 * expressions, predicates and exclusion operators never run as the caller.
 *
 * Values already in the target method are skipped, so a second CALL after a
 * cancel, an error or a crash resumes where the first stopped; every
 * committed batch left whole rows, each in its old or new form.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/toast_internals.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "citus/citus.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/procarray.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "am/am.h"
#include "am/rewrite.h"
#include "catalog/generation.h"
#include "online/move.h"
#include "online/runs.h"
#include "storage/format.h"

PG_FUNCTION_INFO_V1(compressx_recompress_online);


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

	cx_online_progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_TARGET);
	if (run->is_cx)
	{
		/* as set_column_codec: self-exclusive, does not block DML */
		cx_online_lock_exclusive(run, run->relid, ShareUpdateExclusiveLock,
							 CX_ONLINE_PHASE_TARGET);
		rel = cx_online_open_checked(run);
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

	/*
	 * heap: only when some attcompression differs (ACCESS EXCLUSIVE).  The
	 * look is under ACCESS SHARE, released before the stronger lock is
	 * queued for (no upgrade), and the targets are resolved again under it.
	 */
	rel = try_relation_open(run->relid, AccessShareLock);
	if (rel == NULL)
		return;					/* cx_online_open_checked() reports it later */
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

	cx_online_lock_exclusive(run, run->relid, AccessExclusiveLock, CX_ONLINE_PHASE_TARGET);
	rel = cx_online_open_checked(run);
	targets = cx_recompress_resolve_targets(rel, run->columns,
											cx_recompress_heap_method(&run->req),
											&ntargets);
	cx_set_column_compression(run->relid, targets, ntargets);
	table_close(rel, NoLock);
}

/* Open a batch: ROW EXCLUSIVE on the table, a fresh snapshot, indexes. */
void
cx_online_begin_batch(OnlineRun *run, Batch *b)
{
	TargetColumn *targets;
	int			ntargets;
	int			natts;

	/*
	 * Serializable, before the transaction's first snapshot: each rewrite
	 * or move is an UPDATE, and SSI sees a serializable transaction's
	 * UPDATEs.  A client's SERIALIZABLE transaction that read a row's old
	 * version, before or after this one replaced it, gets a read-write
	 * conflict with this transaction (heap_update's check against its
	 * predicate locks, or its own read of a version this one replaced),
	 * and this one commits first; so a write skew through a moved row is
	 * caught as without the move.  Not serializable, the moves broke that
	 * chain: the reader's predicate lock stayed on the old version while
	 * the next writer changed the new one, and both committed (issue 33,
	 * B7).  This transaction reads the table through no scan that takes
	 * predicate locks (only compressx's settings so), so it is hardly ever
	 * the one SSI cancels: a 40001 here ends the call like any error, and
	 * the next CALL resumes.
	 */
	if (!FirstSnapshotSet && !IsSubTransaction() && !RecoveryInProgress())
		XactIsoLevel = XACT_SERIALIZABLE;
	else if (!IsolationIsSerializable())
		elog(ERROR, "recompress_online batch begun after a snapshot was taken");

	b->batchcxt = AllocSetContextCreate(run->cxt, "recompress_online batch",
										ALLOCSET_DEFAULT_SIZES);
	b->oldcxt = MemoryContextSwitchTo(b->batchcxt);
	cx_online_lock_table(run, RowExclusiveLock);
	b->rel = cx_online_open_checked(run);
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
	b->relevel = palloc0(sizeof(bool) * Max(natts, 1));
	if (run->is_cx)
	{
		b->settings = palloc(sizeof(CxColumnSetting) * Max(natts, 1));
		cx_resolve_settings(b->rel, b->settings);
	}
	for (int t = 0; t < ntargets; t++)
	{
		AttrNumber	attnum = get_attnum(run->relid, targets[t].name);

		b->target[attnum - 1] = true;
		/* a level named: every target; else those whose setting changed */
		b->relevel[attnum - 1] = (run->req.codec != NULL && !run->req.level_isnull) ||
			cx_setting_pending(run->settings_pending, attnum);
		if (run->is_cx)
			b->method[attnum - 1] = cx_stored_method_of_setting(&b->settings[attnum - 1]);
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
	b->visible = palloc(sizeof(HeapTupleData) * MaxHeapTuplesPerPage);
	b->pagecopy = palloc(BLCKSZ);	/* maxaligned */
	run->batches++;
}

/*
 * Make the room the rewrite freed reusable by the rows it writes next.
 * The old versions of the rows a batch rewrote die when it commits; the
 * pages [from, to) of rel are pruned (heap_page_prune_opt: only if they
 * have dead tuples no snapshot sees, under a cleanup lock taken without
 * waiting, as any scan does) and their free space is recorded in the free
 * space map, which VACUUM alone does otherwise.  Then new versions go
 * there instead of to new pages at the table's end: without this a run
 * grows a table by about its own size (bench-results/online).
 */
void
cx_online_prune_range(Relation rel, BlockNumber from, BlockNumber to)
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
		cx_heap_page_prune_opt(rel, buf);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		avail = PageGetHeapFreeSpace(page);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		ReleaseBuffer(buf);
		RecordPageWithFreeSpace(rel, blk, avail);
	}
	if (from < to)
		FreeSpaceMapVacuumRange(rel, from, to);
}

/*
 * Prune the pages of a batch (blocks [from, to) of rel) and the share of
 * the TOAST relation its chunks are guessed to lie in.
 */
static void
prune_batch_range(OnlineRun *run, Relation rel, BlockNumber from, BlockNumber to)
{
	cx_online_prune_range(rel, from, to);

	/*
	 * The TOAST chunks of the values replaced are deleted too.  Where they
	 * are is not known without an index scan per value; chunks are mostly
	 * laid down in the order of their rows, so the same share of the TOAST
	 * relation as of the table (as both were when the pass began) is
	 * pruned: a guess that costs a page read where wrong, and lets new
	 * chunks reuse old ones' room where right.  The compaction at the end
	 * (compact.c) gets the rest.
	 */
	if (OidIsValid(rel->rd_rel->reltoastrelid) && run->pass_blocks > 0 && from < to)
	{
		Relation	toast = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);
		uint64		tb = run->pass_toast_blocks;

		cx_online_prune_range(toast, (BlockNumber) (from * tb / run->pass_blocks),
							  (BlockNumber) Min((uint64) to * tb / run->pass_blocks + 1, tb));
		table_close(toast, AccessShareLock);
	}
}

/*
 * Before a batch: prune the pages of the last batch, whose old versions
 * are dead to everyone once no client's snapshot is older than its commit
 * (pruning skips a page otherwise), and again those of the batch before,
 * for the versions a client's snapshot kept alive the first time.  So the
 * next versions go to room the rewrite freed, at most two batches behind.
 */
static void
reuse_freed_space(OnlineRun *run, Relation rel)
{
	prune_batch_range(run, rel, run->done_from[0], run->done_to[0]);
	prune_batch_range(run, rel, run->done_from[1], run->done_to[1]);
	run->done_from[0] = run->done_from[1];
	run->done_to[0] = run->done_to[1];
	run->done_from[1] = run->done_to[1] = 0;
}

/* Close a batch (the caller commits). */
void
cx_online_end_batch(Batch *b)
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
 * compressx: whether a zstd value of column i, set to zstd (or an lz4 value
 * with a dictionary, set to lz4 with one), names another
 * dictionary than the column's current one (or none where it has one, or
 * one where it has none): the dictionary is part of the target.
 */
static bool
other_dictionary(Batch *b, int i, const CxStoredValue *sv, Datum d)
{
	if (!b->check_dicts ||
		(sv->method != CX_STORED_ZSTD && sv->method != CX_STORED_LZ4_DICT) ||
		b->method[i] != sv->method)
		return false;

	/*
	 * This reads a reference's TOAST chunk and the catalogs: never under a
	 * buffer content lock (an LWLock holds interrupts while it is held).
	 */
	Assert(InterruptHoldoffCount == 0);
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
			(older && b->relevel[i] && sv.method == b->method[i] &&
			 sv.method != CX_STORED_NONE))
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
 * The tuple lock heap_update() takes for a new version of a row in which
 * the columns marked in changed[] (may be NULL: none) get other stored
 * bytes: LockTupleExclusive when one of them is a key column (one a unique
 * index or a foreign key can reference, INDEX_ATTR_BITMAP_KEY), else
 * LockTupleNoKeyExclusive.  A rewrite or a move taking the stronger lock
 * for a non-key change would mark the old version HEAP_KEYS_UPDATED: a
 * foreign key check of an older REPEATABLE READ transaction then fails
 * (40001), and FOR KEY SHARE waits (issue 33, B8).
 */
LockTupleMode
cx_online_update_lock_mode(Relation rel, const bool *changed)
{
	Bitmapset  *keys;
	int			member = -1;
	LockTupleMode mode = LockTupleNoKeyExclusive;

	if (changed == NULL)
		return mode;
	keys = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_KEY);
	while ((member = bms_next_member(keys, member)) >= 0)
	{
		AttrNumber	attnum = member + FirstLowInvalidHeapAttributeNumber;

		if (attnum > 0 && attnum <= RelationGetDescr(rel)->natts && changed[attnum - 1])
			mode = LockTupleExclusive;
	}
	bms_free(keys);
	return mode;
}

/*
 * Lock the row version at tid with mode (wait_policy), if it is still one
 * the batch's snapshot sees.  Returns heap_lock_tuple's answer (TM_Deleted
 * when the version is gone); on TM_Ok, *oldtup is a copy of the locked
 * version, in the current memory context.  Called again with a stronger
 * mode for a version this transaction locked, it upgrades the lock.
 */
TM_Result
cx_online_lock_row(Batch *b, ItemPointer tid, LockWaitPolicy wait_policy,
				   LockTupleMode mode, HeapTuple *oldtup)
{
	HeapTupleData locked;
	Buffer		buf;
	Buffer		pin;
	Page		page;
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	bool		present;
	TM_FailureData tmfd;
	TM_Result	result;
	CommandId	cid = GetCurrentCommandId(true);

	*oldtup = NULL;
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
	 * The mode heap_update() takes for the change the caller makes
	 * (cx_online_update_lock_mode): then heap_update() finds the row locked
	 * by this transaction, and by no client in a conflicting mode, and
	 * neither waits nor fails.
	 */
	result = heap_lock_tuple(b->rel, &locked, cid, mode, wait_policy,
							 false, &buf, &tmfd);
	ReleaseBuffer(pin);
	if (result != TM_Ok)
	{
		if (BufferIsValid(buf))
			ReleaseBuffer(buf);
		return result;
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	*oldtup = heap_copytuple(&locked);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buf);
	return TM_Ok;
}

/*
 * The index entries of the new version at newtid that the update which
 * wrote it calls for (update_indexes): the stored bytes of indexed columns
 * changed, or the version left its page, so heap_update() did not update
 * in place (HOT).  Its values are the old ones, decoded as a query reads
 * them.
 */
void
cx_online_index_new_version(Batch *b, ItemPointer newtid, CxUpdateIndexes update_indexes)
{
	List	   *recheck;

	if (!cx_update_needs_indexes(update_indexes) || b->rri->ri_NumIndices == 0)
		return;
	if (!table_tuple_fetch_row_version(b->rel, newtid, SnapshotAny, b->slot))
		elog(ERROR, "could not fetch new tuple version (%u,%u) of relation \"%s\"",
			 ItemPointerGetBlockNumber(newtid), ItemPointerGetOffsetNumber(newtid),
			 RelationGetRelationName(b->rel));
	recheck = cx_insert_update_index_tuples(b->rri, b->slot, b->estate,
											update_indexes);
	list_free(recheck);
	ExecClearTuple(b->slot);
	ResetPerTupleExprContext(b->estate);
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
	HeapTuple	oldtup;
	HeapTuple	stored;
	TM_Result	result;
	CommandId	cid = GetCurrentCommandId(true);
	ItemPointerData newtid;
	CxUpdateIndexes update_indexes;

	bool	   *reencode = palloc0(sizeof(bool) * Max(b->desc->natts, 1));

	*rewritten = false;
	result = cx_online_lock_row(b, tid, wait_policy, LockTupleNoKeyExclusive, &oldtup);
	if (result != TM_Ok)
		return result;

	/* the version read before the lock may have been replaced meanwhile */
	if (!scan_targets(b, oldtup, reencode, NULL))
		return TM_Ok;

	/* a key column's stored bytes change: heap_update()'s stronger lock */
	if (cx_online_update_lock_mode(b->rel, reencode) == LockTupleExclusive)
	{
		result = cx_online_lock_row(b, tid, wait_policy, LockTupleExclusive, &oldtup);
		if (result != TM_Ok)
			return result;
	}

	if (run->is_cx)
	{
		/* only the values in another method: the others keep their bytes */
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

	/* the stored bytes of indexed columns changed: no HOT update */
	cx_online_index_new_version(b, &newtid, update_indexes);

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

	cx_online_begin_batch(run, &b);
	if (!run->file_replaced)
		reuse_freed_space(run, b.rel);
	nblocks = RelationGetNumberOfBlocks(b.rel);
	cx_online_progress(run, CX_ONLINE_BLKS_TOTAL, nblocks);
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
		int			nvisible = 0;
		Size		copied = 0;
		Buffer		buf;
		Page		page;
		OffsetNumber maxoff;
		int			k;

		CHECK_FOR_INTERRUPTS();

		/*
		 * The rows of this block the snapshot sees, copied under the buffer
		 * lock; which need a new version is decided once it is released:
		 * that can read a value's TOAST chunk and the catalogs (the
		 * dictionary an out-of-line value names), which must not happen
		 * while writers of the page wait, deaf to interrupts.
		 */
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
						!(vis == HEAPTUPLE_RECENTLY_DEAD && cx_online_gone_for_all(run, &tuple)))
						run->pending++;
				}
				continue;
			}
			run->rows_checked++;
			/* the rows of a page do not overlap: their copies fit in a page */
			if (copied + MAXALIGN(tuple.t_len) > BLCKSZ)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("rows of block %u of relation \"%s\" overlap",
								*blk, RelationGetRelationName(b.rel))));
			b.visible[nvisible] = tuple;
			b.visible[nvisible].t_data = (HeapTupleHeader) (b.pagecopy + copied);
			memcpy(b.pagecopy + copied, tuple.t_data, tuple.t_len);
			copied += MAXALIGN(tuple.t_len);
			nvisible++;
		}
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		ReleaseBuffer(buf);

		for (int v = 0; v < nvisible; v++)
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(b.rowcxt);

			if (scan_targets(&b, &b.visible[v], NULL, NULL))
				offs[noffs++] = ItemPointerGetOffsetNumber(&b.visible[v].t_self);
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(b.rowcxt);
		}

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
		cx_online_progress(run, CX_ONLINE_BLKS_DONE, *blk);
	}

	/* this batch's pages: pruned two batches from now */
	run->done_from[1] = first_blk;
	run->done_to[1] = Min(*blk + 1, nblocks);

	/* compressx.debug_rewrite_delay: lets tests cancel a batch in flight */
	if (cx_debug_rewrite_delay_ms > 0)
		cx_online_nap(cx_debug_rewrite_delay_ms);

	cx_online_end_batch(&b);
	cx_online_report(run, CX_ONLINE_PHASE_REWRITE);
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

	cx_online_begin_batch(run, &b);
	if (run->file_replaced)
	{
		/* the tid named a row of the old file: the next pass reads the new */
		cx_online_end_batch(&b);
		return;
	}
	ra.run = run;
	ra.b = &b;
	ra.tid = tid;
	ra.rewritten = false;
	if (!cx_online_with_lock_timeout(run, retry_row_fn, &ra))
		ra.result = TM_WouldBlock;
	MemoryContextReset(b.rowcxt);

	if (ra.result == TM_WouldBlock)
	{
		remember_held(run, tid);
		run->retries++;
	}
	else if (ra.result == TM_Updated || ra.result == TM_Deleted || ra.rewritten)
		run->pass_changed = true;
	cx_online_end_batch(&b);
	cx_online_report(run, CX_ONLINE_PHASE_RETRY);
}

/*
 * Open the partitioned table parentid (locked by the caller) and check it
 * is still one the caller owns; the rest of the transaction runs as its
 * owner.  NULL when it was dropped meanwhile.
 */
static Relation
open_parent_checked(OnlineRun *run, Oid parentid)
{
	Relation	rel = try_relation_open(parentid, NoLock);

	if (rel == NULL)
		return NULL;
	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
	{
		relation_close(rel, NoLock);
		return NULL;			/* not the table the run started on */
	}
	if (!cx_relation_ownercheck(parentid, run->caller))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	cx_online_as_owner(run, rel);
	return rel;
}

/*
 * Step 1 on a partitioned table in the tree (it has no rows): the target
 * becomes its setting, so partitions created later follow it.  compressx's
 * setting under SHARE UPDATE EXCLUSIVE; attcompression, for pglz and lz4,
 * under ACCESS EXCLUSIVE (each queued at most max_lock_wait, retried), as
 * recompress_table does.  Two transactions: the stronger lock is queued
 * for holding none on the table (see cx_online_open_checked).
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
	cx_online_progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_TARGET);
	cx_online_lock_exclusive(run, parentid, ShareUpdateExclusiveLock, CX_ONLINE_PHASE_TARGET);
	rel = open_parent_checked(run, parentid);
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

	cx_online_commit(run);
	cx_online_lock_exclusive(run, parentid, AccessExclusiveLock, CX_ONLINE_PHASE_TARGET);
	rel = open_parent_checked(run, parentid);
	if (rel == NULL)
		return;
	targets = cx_recompress_resolve_targets(rel, run->columns, method, &ntargets);
	cx_set_column_compression(parentid, targets, ntargets);
	relation_close(rel, NoLock);
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
 * The passes over the table, until one finds nothing to rewrite and no row
 * held (and, moving to heap, no compressx value in a row version someone
 * may still see).
 */
static void
run_passes(OnlineRun *run)
{
	run->has_dicts = run->is_cx && cx_online_table_has_dictionaries(run->relid);
	/* that read took a snapshot: each batch starts a transaction without one */
	cx_online_commit(run);
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
		cx_online_report(run, CX_ONLINE_PHASE_REWRITE);
		while (!run_batch(run, &blk))
			cx_online_commit(run);
		cx_online_commit(run);

		/* the rows clients held during the pass, one transaction each */
		nheld = run->nheld;
		held = run->held;
		run->held = NULL;
		run->nheld = run->maxheld = 0;
		for (int i = 0; i < nheld; i++)
		{
			retry_held(run, &held[i]);
			cx_online_commit(run);
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
			cx_online_wait_for_old_snapshots(run);
			cx_online_commit(run);
			continue;
		}
		/* rows still held after a wait: another pass, after a short nap */
		cx_online_report(run, CX_ONLINE_PHASE_RETRY);
		cx_online_nap(Min(Max(run->max_wait_ms, 10), 1000));
	}
}

/*
 * The columns of a compressx table whose setting changed since their last
 * rewrite, as the run begins (after its own change of the setting, if any),
 * in the run's memory: the passes re-encode their values and the end of
 * the run records those settings applied.
 */
static void
read_pending_settings(OnlineRun *run)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(run->cxt);

	run->settings_pending = run->is_cx ? cx_pending_settings(run->relid) : NULL;
	MemoryContextSwitchTo(oldcxt);
}

/* The target columns' numbers (NULL: every compressible column is one). */
static Bitmapset *
target_attnums(OnlineRun *run)
{
	Datum	   *names;
	bool	   *nulls;
	int			n;
	Bitmapset  *attnums = NULL;

	if (run->columns == NULL)
		return NULL;
	deconstruct_array(run->columns, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
					  &names, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		AttrNumber	attnum = nulls[i] ? InvalidAttrNumber :
			get_attnum(run->relid, NameStr(*DatumGetName(names[i])));

		if (attnum > 0)
			attnums = bms_add_member(attnums, attnum);
	}
	/* none left (all dropped meanwhile): an empty set, not "every column" */
	return attnums ? attnums : bms_make_singleton(0);
}

/* One table (a partition of a partitioned one): checks, target, passes. */
static void
run_online(OnlineRun *run)
{
	Relation	rel;
	float4		reltuples;

	/* the checks that need the relation, under a lock nobody waits for */
	cx_online_lock_table(run, AccessShareLock);
	rel = try_relation_open(run->relid, NoLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", run->relid)));
	cx_check_table_relkind(rel);
	if (!cx_relation_ownercheck(run->relid, run->caller))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	cx_online_as_owner(run, rel);
	run->relname = MemoryContextStrdup(run->cxt, RelationGetRelationName(rel));
	/* the previous partition's pages are not this one's */
	memset(run->done_from, 0, sizeof(run->done_from));
	memset(run->done_to, 0, sizeof(run->done_to));
	run->pass_blocks = run->pass_toast_blocks = 0;
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
	cx_online_progress(run, CX_ONLINE_TABLE, run->relid);
	cx_online_progress(run, CX_ONLINE_ROWS_TOTAL, reltuples < 0 ? 0 : (int64) reltuples);

	/*
	 * The checks' ACCESS SHARE goes with their transaction: the steps that
	 * follow take stronger locks, each in a transaction of its own.
	 */
	cx_online_record_run(run, run->relid);
	cx_online_commit(run);
	if (run->move == CX_MOVE_TO_CX)
	{
		cx_online_move_to_compressx(run);
		cx_online_commit(run);
	}
	if (run->move != CX_MOVE_TO_HEAP)
	{
		set_target(run);
		cx_online_commit(run);
		read_pending_settings(run);
		cx_online_start_relevel(run);
		cx_online_commit(run);
		run_passes(run);

		/*
		 * Every value of the targets is as the settings the run began with
		 * say: recorded applied, except for a column whose setting changed
		 * since (catalog/generation.c).
		 */
		if (run->is_cx && run->settings_pending)
			cx_mark_settings_applied(run->relid, run->settings_pending,
									 target_attnums(run));

		/*
		 * Every row is in the target now: the run is no longer one to
		 * abandon (recompress_online_cleanup would put back the settings of
		 * before over rewritten rows, should the compaction fail; issue 33,
		 * B11).  Then the room the rewrite freed, given back (compact.c); on
		 * every call, so that a call with nothing left to rewrite compacts
		 * (after a cancel, or once the clients that held rows or old
		 * snapshots are gone).
		 */
		cx_online_forget_run(run->relid);
		cx_online_commit(run);
		cx_online_compact(run);
		cx_online_commit(run);
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

		cx_online_set_target_for_heap(run);
		cx_online_commit(run);
		cx_online_wait_for_writers(run);
		mark = cx_online_settings_mark(run->relid);
		cx_online_commit(run);
		run_passes(run);
		if (cx_online_move_to_heap(run, mark))
			break;
		cx_online_commit(run);
	}
	/* as above; the table is a heap table now */
	cx_online_forget_run(run->relid);
	/* the settings it keeps, pending: said, with how to drop them */
	cx_notice_settings_left(run->relid);
	cx_online_commit(run);
	cx_online_compact(run);
	cx_online_commit(run);
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

	cx_online_progress(run, CX_ONLINE_TABLES_TOTAL, list_length(rels));
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		if (get_rel_relkind(r) == RELKIND_PARTITIONED_TABLE)
		{
			cx_online_record_run(run, r);
			set_parent_target(run, r);
			cx_online_commit(run);
			cx_online_progress(run, CX_ONLINE_TABLES_DONE, ++done);
		}
	}
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);
		LOCKTAG		tag;

		if (get_rel_relkind(r) != RELKIND_RELATION)
			continue;			/* dropped or detached meanwhile */
		if (r != relid)
			cx_online_claim_table(&tag, r);
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
		cx_online_progress(run, CX_ONLINE_TABLES_DONE, ++done);
	}
	foreach(lc, rels)
	{
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_PARTITIONED_TABLE)
			cx_online_forget_run(lfirst_oid(lc));
	}
	cx_online_commit(run);
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

	cx_prevent_if_read_only("recompress_online", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
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
	run.caller = GetUserId();
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
	cx_online_check_target(run.relid, true);
	if (cx_citus_is_table(run.relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("compressx.recompress_online() does not run on Citus table \"%s\"",
						get_rel_name(run.relid)),
				 errhint("Use recompress_table() on the coordinator (every shard, each locked while it is rewritten), or VACUUM FULL.")));
	if (get_rel_relkind(run.relid) == RELKIND_PARTITIONED_TABLE)
	{
		ListCell   *lc;

		rels = find_all_inheritors(run.relid, NoLock, NULL);
		foreach(lc, rels)
			cx_online_check_target(lfirst_oid(lc), true);
	}
	else
		rels = list_make1_oid(run.relid);

	/*
	 * One run per table: a session-level lock (an advisory lock on the
	 * table's OID, shown in pg_locks), released when the run ends, fails,
	 * or the session ends.  A partition's is taken when its turn comes.
	 */
	cx_online_claim_table(&tag, run.relid);
	PG_TRY();
	{
		SPI_connect_ext(SPI_OPT_NONATOMIC);
		run.top_relid = run.relid;
		cx_online_progress_restart(&run);
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
			(errmsg("recompress_online of \"%s\": rows rewritten: %lld, passes: %lld",
					get_rel_name(run.relid), (long long) run.rows_rewritten,
					(long long) run.pass),
			 errdetail("Stored bytes of the target values of those rows: %lld before, %lld after; %lld retries.",
					   (long long) run.bytes_before, (long long) run.bytes_after,
					   (long long) run.retries)));
	/* VACUUM and REINDEX CONCURRENTLY: what finishes the call (compact.c) */
	cx_online_followup_notice(&run);
	PG_RETURN_VOID();
}
