/*-------------------------------------------------------------------------
 *
 * am_index.c
 *	  Index build and validation scans of the compressx access method.
 *
 * Heap's versions store each tuple in a BufferHeapTuple slot and evaluate
 * index expressions and predicates on it: they would hand compressx-format
 * values to core functions.  These scans classify tuple versions the same
 * way (what an index build must include, HOT chains indexed at their root,
 * broken chains flagged, waits on in-progress transactions when uniqueness
 * is checked) but present each tuple through a compressx slot, so
 * expressions, predicates and FormIndexDatum see decoded values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/genam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "am/am.h"
#include "am/slot.h"

/* Blocks a (possibly synchronized or parallel) heap scan has passed. */
static BlockNumber
scan_blocks_done(HeapScanDesc hscan)
{
	ParallelBlockTableScanDesc pscan =
		(ParallelBlockTableScanDesc) hscan->rs_base.rs_parallel;
	BlockNumber start = pscan ? pscan->phs_startblock : hscan->rs_startblock;
	BlockNumber nblocks = pscan ? pscan->phs_nblocks : hscan->rs_nblocks;

	if (hscan->rs_cblock >= start)
		return hscan->rs_cblock - start;
	return nblocks - start + hscan->rs_cblock;
}

static BlockNumber
scan_blocks_total(HeapScanDesc hscan)
{
	ParallelBlockTableScanDesc pscan =
		(ParallelBlockTableScanDesc) hscan->rs_base.rs_parallel;

	return pscan ? pscan->phs_nblocks : hscan->rs_nblocks;
}

typedef struct BuildScan
{
	Relation	rel;
	IndexInfo  *indexInfo;
	TransactionId OldestXmin;
	bool		anyvisible;
	bool		checking_uniqueness;
	double		reltuples;
} BuildScan;

/*
 * Decide whether a tuple version seen by a SnapshotAny scan goes into the
 * index, and whether it is alive.  May wait for another transaction to end
 * and look again.  The buffer is pinned, not locked.
 */
static bool
include_in_build(BuildScan *bs, HeapTuple tuple, Buffer buf, bool *alive)
{
	for (;;)
	{
		TransactionId xwait = InvalidTransactionId;
		bool		include = false;

		*alive = false;
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		switch (HeapTupleSatisfiesVacuum(tuple, bs->OldestXmin, buf))
		{
			case HEAPTUPLE_DEAD:
				break;

			case HEAPTUPLE_LIVE:
				include = *alive = true;
				bs->reltuples += 1;
				break;

			case HEAPTUPLE_RECENTLY_DEAD:
				/*
				 * Old snapshots may still see it.  A HOT-updated one cannot
				 * be indexed (its chain is broken for the new index).
				 */
				if (HeapTupleIsHotUpdated(tuple))
					bs->indexInfo->ii_BrokenHotChain = true;
				else
					include = true;
				break;

			case HEAPTUPLE_INSERT_IN_PROGRESS:
				if (bs->anyvisible)
				{
					include = *alive = true;
					bs->reltuples += 1;
					break;
				}
				xwait = HeapTupleHeaderGetXmin(tuple->t_data);
				if (TransactionIdIsCurrentTransactionId(xwait))
				{
					xwait = InvalidTransactionId;
					bs->reltuples += 1;
				}
				else
				{
					/* (compressx never stores system catalogs) */
					elog(WARNING, "concurrent insert in progress within table \"%s\"",
						 RelationGetRelationName(bs->rel));
					/* uniqueness needs the final state: wait for it */
					if (!bs->checking_uniqueness)
						xwait = InvalidTransactionId;
				}
				if (!TransactionIdIsValid(xwait))
					include = *alive = true;
				break;

			case HEAPTUPLE_DELETE_IN_PROGRESS:
				if (bs->anyvisible)
				{
					include = true;
					bs->reltuples += 1;
					break;
				}
				xwait = HeapTupleHeaderGetUpdateXid(tuple->t_data);
				if (TransactionIdIsCurrentTransactionId(xwait))
				{
					xwait = InvalidTransactionId;
					if (HeapTupleIsHotUpdated(tuple))
						bs->indexInfo->ii_BrokenHotChain = true;
					else
						include = true;
				}
				else
				{
					elog(WARNING, "concurrent delete in progress within table \"%s\"",
						 RelationGetRelationName(bs->rel));
					if (!bs->checking_uniqueness && !HeapTupleIsHotUpdated(tuple))
						xwait = InvalidTransactionId;
					if (!TransactionIdIsValid(xwait))
					{
						include = true;
						bs->reltuples += 1;
					}
				}
				break;

			default:
				elog(ERROR, "unexpected HeapTupleSatisfiesVacuum result");
		}
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);

		if (!TransactionIdIsValid(xwait))
			return include;
		XactLockTableWait(xwait, bs->rel, &tuple->t_self, XLTW_InsertIndexUnique);
		CHECK_FOR_INTERRUPTS();
	}
}

/* TID under which a tuple is indexed: the root of its HOT chain. */
static void
index_tid(Relation rel, HeapTuple tuple, Buffer buf, OffsetNumber *root_offsets,
		  ItemPointer tid)
{
	OffsetNumber offnum = ItemPointerGetOffsetNumber(&tuple->t_self);

	*tid = tuple->t_self;
	if (!HeapTupleIsHeapOnly(tuple))
		return;
	if (root_offsets[offnum - 1] == InvalidOffsetNumber)
	{
		/* the chain grew since we mapped the page: map it again */
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		heap_get_root_tuples(BufferGetPage(buf), root_offsets);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	}
	if (!OffsetNumberIsValid(root_offsets[offnum - 1]))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("failed to find parent tuple for heap-only tuple at (%u,%u) in table \"%s\"",
								 ItemPointerGetBlockNumber(&tuple->t_self), offnum,
								 RelationGetRelationName(rel))));
	ItemPointerSetOffsetNumber(tid, root_offsets[offnum - 1]);
}

double
cx_index_build_range_scan(Relation rel, Relation indexRelation,
						  IndexInfo *indexInfo, bool allow_sync,
						  bool anyvisible, bool progress,
						  BlockNumber start_blockno, BlockNumber numblocks,
						  IndexBuildCallback callback, void *callback_state,
						  TableScanDesc scan)
{
	BuildScan	bs;
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	ExprState  *predicate;
	Snapshot	snapshot;
	bool		own_snapshot = false;
	HeapScanDesc hscan;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	OffsetNumber root_offsets[MaxHeapTuplesPerPage];
	BlockNumber mapped_block = InvalidBlockNumber;
	BlockNumber reported = InvalidBlockNumber;

	bs.rel = rel;
	bs.indexInfo = indexInfo;
	bs.anyvisible = anyvisible;
	bs.checking_uniqueness = indexInfo->ii_Unique || indexInfo->ii_ExclusionOps != NULL;
	bs.reltuples = 0;
	Assert(!(anyvisible && bs.checking_uniqueness));

	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(indexInfo->ii_Predicate, estate);

	/*
	 * A plain build sees every version (SnapshotAny) and decides itself; a
	 * concurrent build indexes what its MVCC snapshot sees.
	 */
	bs.OldestXmin = InvalidTransactionId;
	if (!indexInfo->ii_Concurrent)
		bs.OldestXmin = GetOldestNonRemovableTransactionId(rel);

	if (scan == NULL)
	{
		if (TransactionIdIsValid(bs.OldestXmin))
			snapshot = SnapshotAny;
		else
		{
			snapshot = RegisterSnapshot(GetTransactionSnapshot());
			own_snapshot = true;
		}
		scan = table_beginscan_strat(rel, snapshot, 0, NULL, true, allow_sync);
	}
	else
		snapshot = scan->rs_snapshot;
	hscan = (HeapScanDesc) scan;

	if (progress)
		pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL,
									 scan_blocks_total(hscan));
	if (!allow_sync)
		heap_setscanlimits(scan, start_blockno, numblocks);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		HeapTuple	tuple = &hscan->rs_ctup;
		Buffer		buf = hscan->rs_cbuf;
		bool		alive = true;
		ItemPointerData tid;

		CHECK_FOR_INTERRUPTS();

		if (progress && scan_blocks_done(hscan) != reported)
		{
			reported = scan_blocks_done(hscan);
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE, reported);
		}

		/* Map HOT chains of the page before any tuple of it is judged. */
		if (hscan->rs_cblock != mapped_block)
		{
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			heap_get_root_tuples(BufferGetPage(buf), root_offsets);
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			mapped_block = hscan->rs_cblock;
		}

		if (snapshot == SnapshotAny)
		{
			if (!include_in_build(&bs, tuple, buf, &alive))
				continue;
		}
		else
			bs.reltuples += 1;

		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(indexInfo, slot, estate, values, isnull);

		index_tid(rel, tuple, buf, root_offsets, &tid);
		callback(indexRelation, &tid, values, isnull, alive, callback_state);
	}

	if (progress)
		pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE,
									 scan_blocks_total(hscan));

	table_endscan(scan);
	if (own_snapshot)
		UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	/* they pointed into the estate just freed */
	indexInfo->ii_ExpressionsState = NIL;
	indexInfo->ii_PredicateState = NULL;

	return bs.reltuples;
}

/*
 * Second pass of CREATE INDEX CONCURRENTLY: insert every tuple visible to
 * snapshot whose root TID is not among the index's TIDs (state->tuplesort,
 * sorted).  Both are walked in TID order.
 */
void
cx_index_validate_scan(Relation rel, Relation indexRelation,
					   IndexInfo *indexInfo, Snapshot snapshot,
					   ValidateIndexState *state)
{
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	ExprState  *predicate;
	TableScanDesc scan;
	HeapScanDesc hscan;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	OffsetNumber root_offsets[MaxHeapTuplesPerPage];
	bool		in_index[MaxHeapTuplesPerPage];
	BlockNumber mapped_block = InvalidBlockNumber;
	ItemPointerData indexed;	/* current TID from the index */
	bool		have_indexed = false;
	bool		index_done = false;

	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(indexInfo->ii_Predicate, estate);

	scan = table_beginscan_strat(rel, snapshot, 0, NULL, true, false);
	hscan = (HeapScanDesc) scan;
	pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL, hscan->rs_nblocks);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		HeapTuple	tuple = &hscan->rs_ctup;
		Buffer		buf = hscan->rs_cbuf;
		ItemPointerData root;
		OffsetNumber root_off;

		CHECK_FOR_INTERRUPTS();
		state->htups += 1;

		if (hscan->rs_cblock != mapped_block)
		{
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE, hscan->rs_cblock);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			heap_get_root_tuples(BufferGetPage(buf), root_offsets);
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			memset(in_index, 0, sizeof(in_index));
			mapped_block = hscan->rs_cblock;
		}

		index_tid(rel, tuple, buf, root_offsets, &root);
		root_off = ItemPointerGetOffsetNumber(&root);

		/* Advance the index side up to this root, noting TIDs on this page. */
		while (!index_done && (!have_indexed || ItemPointerCompare(&indexed, &root) < 0))
		{
			Datum		d;
			bool		dnull;

			if (have_indexed && ItemPointerGetBlockNumber(&indexed) == mapped_block)
				in_index[ItemPointerGetOffsetNumber(&indexed) - 1] = true;
			if (cx_tuplesort_getdatum(state->tuplesort, true, &d, &dnull, NULL))
			{
				itemptr_decode(&indexed, DatumGetInt64(d));
				have_indexed = true;
#ifndef USE_FLOAT8_BYVAL
				pfree(DatumGetPointer(d));
#endif
			}
			else
			{
				index_done = true;
				have_indexed = false;
			}
		}

		if ((index_done || ItemPointerCompare(&indexed, &root) > 0) &&
			!in_index[root_off - 1])
		{
			MemoryContextReset(econtext->ecxt_per_tuple_memory);
			if (predicate != NULL && !ExecQual(predicate, econtext))
				continue;
			FormIndexDatum(indexInfo, slot, estate, values, isnull);
			index_insert(indexRelation, values, isnull, &root, rel,
						 indexInfo->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
						 false, indexInfo);
			state->tups_inserted += 1;
		}
	}

	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	indexInfo->ii_ExpressionsState = NIL;
	indexInfo->ii_PredicateState = NULL;
}
