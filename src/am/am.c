/*-------------------------------------------------------------------------
 *
 * am.c
 *	  The compressx table access method: handler and read paths.
 *
 * compressx is a thin wrapper of heap.  Pages, visibility, WAL, vacuum and
 * TOAST are heap's; what differs is how values are encoded (am_write.c),
 * how tuples reach the executor (slot.c: every tuple-returning callback
 * runs heap's callback on the slot's child and presents the result with
 * lazy decoding), and the paths where heap would hand stored values to
 * core code: index builds (am_index.c) and CLUSTER / VACUUM FULL
 * (rewrite.c, am_write.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
#include "fmgr.h"
#include "storage/bufmgr.h"

#include "am/am.h"
#include "catalog/relation.h"
#include "am/slot.h"

PG_FUNCTION_INFO_V1(compressx_tableam_handler);

const TableAmRoutine *cx_heap = NULL;
static TableAmRoutine cx_routine;

static const TupleTableSlotOps *
cx_slot_callbacks(Relation rel)
{
	return &TTSOpsCompressx;
}

/*
 * The two callbacks every row of a scan or an index scan runs: the case of
 * a slot the previous row left clean is handled apart, so that only the
 * slot lives across heap's call (issue 37).
 */
static pg_noinline bool
scan_getnextslot_slow(TableScanDesc scan, ScanDirection direction,
					  TupleTableSlot *slot)
{
	TupleTableSlot *child = cx_slot_begin_fetch(slot);

	return cx_slot_end_fetch(slot,
							 cx_heap->scan_getnextslot(scan, direction, child));
}

static bool
cx_scan_getnextslot(TableScanDesc scan, ScanDirection direction,
					TupleTableSlot *slot)
{
	if (unlikely(!cx_slot_fetch_ready(slot)))
		return scan_getnextslot_slow(scan, direction, slot);
	return cx_slot_end_fetch(slot,
							 cx_heap->scan_getnextslot(scan, direction,
													   cx_slot_begin_ready_fetch(slot)));
}

static bool
cx_scan_getnextslot_tidrange(TableScanDesc scan, ScanDirection direction,
							 TupleTableSlot *slot)
{
	TupleTableSlot *child = cx_slot_begin_fetch(slot);

	return cx_slot_end_fetch(slot,
							 cx_heap->scan_getnextslot_tidrange(scan, direction, child));
}

static pg_noinline bool
index_fetch_tuple_slow(struct IndexFetchTableData *scan, ItemPointer tid,
					   Snapshot snapshot, TupleTableSlot *slot,
					   bool *call_again, bool *all_dead)
{
	TupleTableSlot *child = cx_slot_begin_fetch(slot);

	return cx_slot_end_fetch(slot,
							 cx_heap->index_fetch_tuple(scan, tid, snapshot, child,
														call_again, all_dead));
}

static bool
cx_index_fetch_tuple(struct IndexFetchTableData *scan, ItemPointer tid,
					 Snapshot snapshot, TupleTableSlot *slot,
					 bool *call_again, bool *all_dead)
{
	if (unlikely(!cx_slot_fetch_ready(slot)))
		return index_fetch_tuple_slow(scan, tid, snapshot, slot, call_again,
									  all_dead);
	return cx_slot_end_fetch(slot,
							 cx_heap->index_fetch_tuple(scan, tid, snapshot,
														cx_slot_begin_ready_fetch(slot),
														call_again, all_dead));
}

static bool
cx_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
						   TupleTableSlot *slot)
{
	TupleTableSlot *child = cx_slot_begin_fetch(slot);

	return cx_slot_end_fetch(slot,
							 cx_heap->tuple_fetch_row_version(rel, tid, snapshot, child));
}

static TM_Result
cx_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
			  TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
			  LockWaitPolicy wait_policy, uint8 flags, TM_FailureData *tmfd)
{
	TupleTableSlot *child = cx_slot_begin_fetch(slot);
	TM_Result	result;

	result = cx_heap->tuple_lock(rel, tid, snapshot, child, cid, mode,
								 wait_policy, flags, tmfd);
	/* heap stores the tuple version it looked at, whatever the result */
	(void) cx_slot_end_fetch(slot, true);
	return result;
}

/*
 * When the slot holds a decoded copy, check the stored version by TID.
 */
static bool
cx_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
							Snapshot snapshot)
{
	TupleTableSlot *child = cx_slot_valid_child(slot);
	HeapTupleData tuple;
	Buffer		buf = InvalidBuffer;
	bool		result;

	/* the child still holds the stored tuple with its buffer */
	if (child != NULL)
		return cx_heap->tuple_satisfies_snapshot(rel, child, snapshot);

	/* otherwise the stored version at the slot's tid */
	tuple.t_self = slot->tts_tid;
	result = heap_fetch(rel, snapshot, &tuple, &buf, false);
	if (BufferIsValid(buf))
		ReleaseBuffer(buf);
	return result;
}

/*
 * Heap's scan_bitmap_next_block (before 18) needs no wrapper: it stores no
 * tuple.
 */
static bool
cx_scan_bitmap_next_tuple(CX_BITMAP_NEXT_TUPLE_PARAMS(scan, slot))
{
	TupleTableSlot *child = cx_slot_begin_fetch(slot);

	return cx_slot_end_fetch(slot,
							 cx_heap->scan_bitmap_next_tuple(CX_BITMAP_NEXT_TUPLE_ARGS(scan, child)));
}

static bool
cx_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
						  TupleTableSlot *slot)
{
	TupleTableSlot *child = cx_slot_begin_fetch(slot);

	return cx_slot_end_fetch(slot,
							 cx_heap->scan_sample_next_tuple(scan, scanstate, child));
}

static bool
cx_scan_analyze_next_tuple(CX_ANALYZE_NEXT_TUPLE_PARAMS(scan),
						   double *liverows, double *deadrows,
						   TupleTableSlot *slot)
{
	TupleTableSlot *child = cx_slot_begin_fetch(slot);

	cx_slot_set_analyze(slot);
	return cx_slot_end_fetch(slot,
							 cx_heap->scan_analyze_next_tuple(CX_ANALYZE_NEXT_TUPLE_ARGS(scan),
															  liverows, deadrows,
															  child));
}

/*
 * The TOAST relation of a compressx table is a plain heap: it holds core's
 * chunks and compressx's uncompressed out-of-line bodies, both read by
 * core's detoasting code.  (Heap's own callback answers the table's access
 * method, which would make it a compressx table whose chunks get encoded.)
 */
static Oid
cx_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;
}

Datum
compressx_tableam_handler(PG_FUNCTION_ARGS)
{
	if (cx_heap == NULL)
	{
		cx_heap = GetHeapamTableAmRoutine();
		cx_routine = *cx_heap;

		cx_routine.slot_callbacks = cx_slot_callbacks;
		cx_routine.scan_getnextslot = cx_scan_getnextslot;
		cx_routine.scan_getnextslot_tidrange = cx_scan_getnextslot_tidrange;
		cx_routine.index_fetch_tuple = cx_index_fetch_tuple;
		cx_routine.tuple_fetch_row_version = cx_tuple_fetch_row_version;
		cx_routine.tuple_satisfies_snapshot = cx_tuple_satisfies_snapshot;
		cx_routine.tuple_lock = cx_tuple_lock;
		cx_routine.scan_bitmap_next_tuple = cx_scan_bitmap_next_tuple;
		cx_routine.scan_sample_next_tuple = cx_scan_sample_next_tuple;
		cx_routine.scan_analyze_next_tuple = cx_scan_analyze_next_tuple;

		cx_routine.tuple_insert = cx_tuple_insert;
		cx_routine.tuple_insert_speculative = cx_tuple_insert_speculative;
		cx_routine.tuple_complete_speculative = cx_tuple_complete_speculative;
		cx_routine.multi_insert = cx_multi_insert;
		cx_routine.tuple_delete = cx_tuple_delete;
		cx_routine.tuple_update = cx_tuple_update;

		cx_routine.index_build_range_scan = cx_index_build_range_scan;
		cx_routine.index_validate_scan = cx_index_validate_scan;
		cx_routine.relation_copy_for_cluster = cx_relation_copy_for_cluster;
		cx_routine.relation_toast_am = cx_relation_toast_am;
		cx_am_routine = &cx_routine;
	}
	PG_RETURN_POINTER(&cx_routine);
}
