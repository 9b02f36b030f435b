/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Version shims for PostgreSQL 15 to 19, one line of reason each.
 *
 * PostgreSQL 19's table AM (access/tableam.h) adds or removes no callback;
 * what changed for a wrapper of heap like compressx:
 *  - tuple_insert, tuple_insert_speculative, multi_insert and
 *    finish_bulk_insert take their options as uint32 (an AM may define bits
 *    of its own that do not collide; compressx defines none);
 *  - tuple_delete takes options (TABLE_DELETE_CHANGING_PARTITION, which was
 *    the changingPart argument, and TABLE_DELETE_NO_LOGICAL) and
 *    tuple_update takes options (TABLE_UPDATE_NO_LOGICAL): "no logical"
 *    asks for no logical decoding information for the change, for table
 *    rewrites whose new relation is not yet known as logically logged
 *    (REPACK (CONCURRENTLY) applying the changes it decoded); compressx
 *    passes them to heap and then logs no body messages either;
 *  - relation_copy_for_cluster takes a snapshot: non-NULL when REPACK
 *    (CONCURRENTLY) copies, meaning "leave out what this MVCC snapshot does
 *    not see" (the decoded changes are applied afterwards).  Core allows
 *    REPACK (CONCURRENTLY) on heap's own routine only, so compressx never
 *    gets one; it refuses one anyway rather than copy too much;
 *  - scan_analyze_next_tuple lost OldestXmin (heap computes it);
 *  - index_fetch_begin and the table_beginscan*() family take ScanOptions
 *    flags (SO_NONE; SO_HINT_REL_READ_ONLY lets on-access pruning set the
 *    visibility map; SO_SCAN_INSTRUMENT); compressx passes SO_NONE, as the
 *    calls of 15 to 18 meant;
 *  - the "scan started during logical decoding" check moved from the
 *    per-tuple calls to scan begin (compressx's decoder reads TOAST through
 *    systable_beginscan(), which is allowed).
 * 19 also stopped including some headers from others (storage/proc.h,
 * storage/latch.h, storage/lock.h, utils/tuplestore.h, utils/wait_event.h):
 * the files using them include them themselves.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_COMPAT_H
#define COMPRESSX_COMPAT_H

#include "utils/acl.h"

/* 16 replaced pg_class_ownercheck() with object_ownercheck(). */
#if PG_VERSION_NUM >= 160000
#define cx_relation_ownercheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define cx_relation_ownercheck(relid, roleid) \
	pg_class_ownercheck((relid), (roleid))
#endif

/*
 * 17 runs the owner's code in maintenance commands with a safe search_path
 * (RestrictSearchPath()); compressx's maintenance does as core's does.
 */
#include "utils/guc.h"
#if PG_VERSION_NUM >= 170000
#define cx_restrict_search_path() RestrictSearchPath()
#else
#define cx_restrict_search_path() ((void) 0)
#endif

/* 17 moved the backend's local transaction id into PGPROC.vxid. */
#if PG_VERSION_NUM >= 170000
#define CX_MY_LXID (MyProc->vxid.lxid)
#else
#define CX_MY_LXID (MyProc->lxid)
#endif

/* 16 moved the varlena macros to varatt.h. */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 16 replaced vacuum_set_xid_limits() with vacuum_get_cutoffs(). */
#include "commands/vacuum.h"
#if PG_VERSION_NUM >= 160000
static inline void
cx_vacuum_cutoffs(Relation rel, TransactionId *oldest_xmin,
				  MultiXactId *oldest_mxact, TransactionId *freeze_limit,
				  MultiXactId *multi_cutoff)
{
	struct VacuumCutoffs cutoffs;
	VacuumParams params = {0};

	params.freeze_min_age = 0;
	params.freeze_table_age = 0;
	params.multixact_freeze_min_age = 0;
	params.multixact_freeze_table_age = 0;
	(void) vacuum_get_cutoffs(rel, &params, &cutoffs);
	*oldest_xmin = cutoffs.OldestXmin;
	*oldest_mxact = cutoffs.OldestMxact;
	*freeze_limit = cutoffs.FreezeLimit;
	*multi_cutoff = cutoffs.MultiXactCutoff;
}
#else
#define cx_vacuum_cutoffs(rel, oldest_xmin, oldest_mxact, freeze_limit, multi_cutoff) \
	((void) vacuum_set_xid_limits((rel), 0, 0, 0, 0, (oldest_xmin), \
								  (oldest_mxact), (freeze_limit), (multi_cutoff)))
#endif

/*
 * 16: tuple_update's TU_UpdateIndexes is set by heap_update() (15: a bool).
 * 19: heap_update() takes options (TABLE_UPDATE_NO_LOGICAL); compressx's own
 * updates pass none (decoded as before), cx_heap_update_options() passes
 * those core gave tuple_update.
 */
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#if PG_VERSION_NUM >= 190000
typedef TU_UpdateIndexes CxUpdateIndexes;
#define cx_heap_update_options(rel, otid, newtup, cid, options, crosscheck, wait, tmfd, lockmode, update_indexes) \
	heap_update((rel), (otid), (newtup), (cid), (options), (crosscheck), \
				(wait), (tmfd), (lockmode), (update_indexes))
#elif PG_VERSION_NUM >= 160000
typedef TU_UpdateIndexes CxUpdateIndexes;
#define cx_heap_update_options(rel, otid, newtup, cid, options, crosscheck, wait, tmfd, lockmode, update_indexes) \
	heap_update((rel), (otid), (newtup), (cid), (crosscheck), (wait), (tmfd), \
				(lockmode), (update_indexes))
#else
typedef bool CxUpdateIndexes;
static inline TM_Result
cx_heap_update_options(Relation rel, ItemPointer otid, HeapTuple newtup,
					   CommandId cid, uint32 options, Snapshot crosscheck,
					   bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
					   CxUpdateIndexes *update_indexes)
{
	TM_Result	result = heap_update(rel, otid, newtup, cid, crosscheck, wait,
									 tmfd, lockmode);

	*update_indexes = result == TM_Ok && !HeapTupleIsHeapOnly(newtup);
	return result;
}
#endif
#define cx_heap_update(rel, otid, newtup, cid, crosscheck, wait, tmfd, lockmode, update_indexes) \
	cx_heap_update_options((rel), (otid), (newtup), (cid), 0, (crosscheck), \
						   (wait), (tmfd), (lockmode), (update_indexes))

/*
 * tuple_update and tuple_delete callbacks: 19 added options after cid (and
 * moved tuple_delete's changingPart into them).  The macros name the extra
 * parameter; cx_update_no_logical() / cx_delete_no_logical() read it.
 */
#if PG_VERSION_NUM >= 190000
#define CX_TUPLE_UPDATE_PARAMS(rel, otid, slot, cid, snapshot, crosscheck, wait, tmfd, lockmode, update_indexes) \
	Relation rel, ItemPointer otid, TupleTableSlot *slot, CommandId cid, \
	uint32 cx_update_options, Snapshot snapshot, Snapshot crosscheck, \
	bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode, \
	CxUpdateIndexes *update_indexes
#define cx_update_options_given() cx_update_options
#define cx_update_no_logical() ((cx_update_options & TABLE_UPDATE_NO_LOGICAL) != 0)
#define CX_TUPLE_DELETE_PARAMS(rel, tid, cid, snapshot, crosscheck, wait, tmfd) \
	Relation rel, ItemPointer tid, CommandId cid, uint32 cx_delete_options, \
	Snapshot snapshot, Snapshot crosscheck, bool wait, TM_FailureData *tmfd
#define CX_TUPLE_DELETE_ARGS(rel, tid, cid, snapshot, crosscheck, wait, tmfd) \
	(rel), (tid), (cid), cx_delete_options, (snapshot), (crosscheck), (wait), (tmfd)
#define cx_delete_no_logical() ((cx_delete_options & TABLE_DELETE_NO_LOGICAL) != 0)
#else
#define CX_TUPLE_UPDATE_PARAMS(rel, otid, slot, cid, snapshot, crosscheck, wait, tmfd, lockmode, update_indexes) \
	Relation rel, ItemPointer otid, TupleTableSlot *slot, CommandId cid, \
	Snapshot snapshot, Snapshot crosscheck, bool wait, TM_FailureData *tmfd, \
	LockTupleMode *lockmode, CxUpdateIndexes *update_indexes
#define cx_update_options_given() 0
#define cx_update_no_logical() false
#define CX_TUPLE_DELETE_PARAMS(rel, tid, cid, snapshot, crosscheck, wait, tmfd) \
	Relation rel, ItemPointer tid, CommandId cid, Snapshot snapshot, \
	Snapshot crosscheck, bool wait, TM_FailureData *tmfd, bool cx_changing_part
#define CX_TUPLE_DELETE_ARGS(rel, tid, cid, snapshot, crosscheck, wait, tmfd) \
	(rel), (tid), (cid), (snapshot), (crosscheck), (wait), (tmfd), cx_changing_part
#define cx_delete_no_logical() false
#endif

/* 19: the insert callbacks' options are uint32 (int before). */
#if PG_VERSION_NUM >= 190000
typedef uint32 CxInsertOptions;
#else
typedef int CxInsertOptions;
#endif

/* 19: heap_delete() takes options where changingPart was (none here). */
#if PG_VERSION_NUM >= 190000
#define cx_heap_delete(rel, tid, cid, crosscheck, wait, tmfd) \
	heap_delete((rel), (tid), (cid), 0, (crosscheck), (wait), (tmfd))
#else
#define cx_heap_delete(rel, tid, cid, crosscheck, wait, tmfd) \
	heap_delete((rel), (tid), (cid), (crosscheck), (wait), (tmfd), false)
#endif

/*
 * 16: ExecInsertIndexTuples() takes onlySummarizing, which heap_update()'s
 * TU_UpdateIndexes answers (15: a bool, every index or none).  19: its
 * booleans became flags (EIIT_IS_UPDATE, EIIT_ONLY_SUMMARIZING), the slot
 * moved after them.
 */
#include "executor/executor.h"
#if PG_VERSION_NUM >= 190000
#define cx_update_needs_indexes(u) ((u) != TU_None)
#define cx_insert_update_index_tuples(rri, slot, estate, u) \
	ExecInsertIndexTuples((rri), (estate), \
						  EIIT_IS_UPDATE | ((u) == TU_Summarizing ? EIIT_ONLY_SUMMARIZING : 0), \
						  (slot), NIL, NULL)
#elif PG_VERSION_NUM >= 160000
#define cx_update_needs_indexes(u) ((u) != TU_None)
#define cx_insert_update_index_tuples(rri, slot, estate, u) \
	ExecInsertIndexTuples((rri), (slot), (estate), true, false, NULL, NIL, \
						  (u) == TU_Summarizing)
#else
#define cx_update_needs_indexes(u) (u)
#define cx_insert_update_index_tuples(rri, slot, estate, u) \
	ExecInsertIndexTuples((rri), (slot), (estate), true, false, NULL, NIL)
#endif

/* 16 added tuplesort_getdatum()'s copy argument (15 always copies). */
#include "utils/tuplesort.h"
#if PG_VERSION_NUM >= 160000
#define cx_tuplesort_getdatum(state, forward, val, isnull, abbrev) \
	tuplesort_getdatum((state), (forward), true, (val), (isnull), (abbrev))
#else
#define cx_tuplesort_getdatum(state, forward, val, isnull, abbrev) \
	tuplesort_getdatum((state), (forward), (val), (isnull), (abbrev))
#endif

/*
 * CheckRelationOidLockedByMe() is in 15.x and 17+, but only in late 16
 * minor releases (16.2 lacks it): on 16, ask the lock manager directly.
 */
#include "storage/lmgr.h"
#if PG_VERSION_NUM >= 160000 && PG_VERSION_NUM < 170000
#include "catalog/catalog.h"
#include "miscadmin.h"
#include "storage/lock.h"
static inline bool
cx_relation_oid_locked_by_me(Oid relid, LOCKMODE lockmode, bool orstronger)
{
	LOCKTAG		tag;
	LOCKMODE	m;

	SET_LOCKTAG_RELATION(tag, IsSharedRelation(relid) ? InvalidOid : MyDatabaseId,
						 relid);
	for (m = lockmode; m <= (orstronger ? MaxLockMode : lockmode); m++)
		if (LockHeldByMe(&tag, m))
			return true;
	return false;
}
#else
#define cx_relation_oid_locked_by_me(relid, lockmode, orstronger) \
	CheckRelationOidLockedByMe((relid), (lockmode), (orstronger))
#endif

/* 17 added TupleTableSlotOps.is_current_xact_tuple, called by RI triggers. */
#if PG_VERSION_NUM >= 170000
#define CX_HAVE_IS_CURRENT_XACT_TUPLE 1
#endif

/*
 * 18 added an instrumentation argument to index_beginscan(); 19 ScanOptions
 * flags (SO_NONE: as before).
 */
#include "access/genam.h"
#if PG_VERSION_NUM >= 190000
#define cx_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys), SO_NONE)
#elif PG_VERSION_NUM >= 180000
#define cx_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#else
#define cx_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#endif

/* 18 dropped scan_bitmap_next_block; scan_bitmap_next_tuple has new arguments. */
#if PG_VERSION_NUM >= 180000
#define CX_BITMAP_NEXT_TUPLE_PARAMS(scan, slot) \
	TableScanDesc scan, TupleTableSlot *slot, bool *cx_recheck, \
	uint64 *cx_lossy_pages, uint64 *cx_exact_pages
#define CX_BITMAP_NEXT_TUPLE_ARGS(scan, slot) \
	(scan), (slot), cx_recheck, cx_lossy_pages, cx_exact_pages
#else
#define CX_BITMAP_NEXT_TUPLE_PARAMS(scan, slot) \
	TableScanDesc scan, struct TBMIterateResult *cx_tbmres, TupleTableSlot *slot
#define CX_BITMAP_NEXT_TUPLE_ARGS(scan, slot) \
	(scan), cx_tbmres, (slot)
#endif

/* 18: heap_form_minimal_tuple() and copy_minimal_tuple take extra bytes. */
#if PG_VERSION_NUM >= 180000
#define CX_COPY_MINIMAL_TUPLE_PARAMS(slot, extra) TupleTableSlot *slot, Size extra
#define cx_heap_form_minimal_tuple(desc, values, isnull, extra) \
	heap_form_minimal_tuple((desc), (values), (isnull), (extra))
#else
#define CX_COPY_MINIMAL_TUPLE_PARAMS(slot, extra) TupleTableSlot *slot
#define cx_heap_form_minimal_tuple(desc, values, isnull, extra) \
	heap_form_minimal_tuple((desc), (values), (isnull))
#endif

/* The relation's current file (relfilenode), to notice it was replaced. */
#if PG_VERSION_NUM >= 160000
#define cx_rel_filenumber(rel) ((Oid) (rel)->rd_locator.relNumber)
#else
#define cx_rel_filenumber(rel) ((rel)->rd_node.relNode)
#endif

/* The subtransaction that gave the relation its current file (16 renamed it). */
#if PG_VERSION_NUM >= 160000
#define cx_rel_new_file_subid(rel) ((rel)->rd_newRelfilelocatorSubid)
#else
#define cx_rel_new_file_subid(rel) ((rel)->rd_newRelfilenodeSubid)
#endif

/*
 * Logical decoding (logical/decoder.c).  17 replaced ReorderBufferTupleBuf
 * by a plain HeapTuple in ReorderBufferChange; 16 added rbtxn_get_toptxn();
 * 17 added LogLogicalMessage()'s flush argument.
 */
#include "replication/message.h"
#include "replication/reorderbuffer.h"
#if PG_VERSION_NUM >= 170000
#define cx_change_tuple(tup) (tup)
typedef HeapTuple CxChangeTuple;
static inline CxChangeTuple
cx_make_change_tuple(HeapTuple tup)
{
	return tup;
}
#define cx_log_message(prefix, data, size) \
	LogLogicalMessage((prefix), (data), (size), true, false)
#else
#define cx_change_tuple(tup) ((tup) ? &(tup)->tuple : NULL)
typedef ReorderBufferTupleBuf *CxChangeTuple;
static inline CxChangeTuple
cx_make_change_tuple(HeapTuple tup)
{
	ReorderBufferTupleBuf *buf = palloc0(sizeof(ReorderBufferTupleBuf));

	buf->tuple = *tup;
	buf->alloc_tuple_size = tup->t_len;
	return buf;
}
#define cx_log_message(prefix, data, size) \
	LogLogicalMessage((prefix), (data), (size), true)
#endif
/*
 * logical/decoder.c copies reorderbuffer.c's private ReorderBufferToastEnt:
 * the same in 15.18 and 18.6 (16, 17: no source here).  19~rc1: the same
 * (its source has Oid chunk_id, and its binary creates the toast hash with
 * keysize 4 and entrysize 48, as 18's does; some development branches had
 * an Oid8 chunk_id, 56 bytes, which 19 did not take).
 */
#if PG_VERSION_NUM >= 150000 && PG_VERSION_NUM < 200000
#define CX_TOAST_ENT_CHECKED 1
#endif
#if PG_VERSION_NUM >= 160000
#define cx_top_txn(txn) rbtxn_get_toptxn(txn)
#else
#define cx_top_txn(txn) ((txn)->toptxn ? (txn)->toptxn : (txn))
#endif

/* 16 renamed pgstat_fetch_stat_local_beentry() (by index, from 1). */
#include "utils/backend_status.h"
#if PG_VERSION_NUM >= 160000
#define cx_local_beentry(idx) pgstat_get_local_beentry_by_index(idx)
#else
#define cx_local_beentry(idx) pgstat_fetch_stat_local_beentry(idx)
#endif

/* 18 dropped PortalRun's run_once argument (it was always true) */
#if PG_VERSION_NUM >= 180000
#define cx_portal_run(portal, count, top, dest, altdest, qc) \
	PortalRun(portal, count, top, dest, altdest, qc)
#else
#define cx_portal_run(portal, count, top, dest, altdest, qc) \
	PortalRun(portal, count, top, true, dest, altdest, qc)
#endif

/* 16 gave stringToQualifiedNameList a soft-error context (NULL: throw) */
#if PG_VERSION_NUM >= 160000
#define cx_qualified_name_list(s) stringToQualifiedNameList(s, NULL)
#else
#define cx_qualified_name_list(s) stringToQualifiedNameList(s)
#endif

/*
 * PostgreSQL 19 (scans, slots, pruning, REPACK).
 *
 * table_beginscan() takes ScanOptions flags (SO_NONE: as 15 to 18).
 */
#if PG_VERSION_NUM >= 190000
#define cx_table_beginscan(rel, snapshot, nkeys, key) \
	table_beginscan((rel), (snapshot), (nkeys), (key), SO_NONE)
#else
#define cx_table_beginscan(rel, snapshot, nkeys, key) \
	table_beginscan((rel), (snapshot), (nkeys), (key))
#endif

/*
 * 19: MakeTupleTableSlot() takes tts_flags to set; 0 is what it set before
 * (TTS_FLAG_OBEYS_NOT_NULL_CONSTRAINTS would let deforming skip null checks
 * the encoded form does not promise).
 */
#include "executor/tuptable.h"
#if PG_VERSION_NUM >= 190000
#define cx_make_tuple_table_slot(desc, ops) MakeTupleTableSlot((desc), (ops), 0)
#else
#define cx_make_tuple_table_slot(desc, ops) MakeTupleTableSlot((desc), (ops))
#endif

/*
 * 19: heap_page_prune_opt() keeps a visibility map buffer pinned for the
 * caller and, for a relation the statement only reads, may set the page
 * all-visible.  compressx prunes in statements that write the relation:
 * not read-only, and the pin is dropped at once.
 */
#include "storage/bufmgr.h"
#if PG_VERSION_NUM >= 190000
static inline void
cx_heap_page_prune_opt(Relation rel, Buffer buf)
{
	Buffer		vmbuffer = InvalidBuffer;

	heap_page_prune_opt(rel, buf, &vmbuffer, false);
	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
}
#else
#define cx_heap_page_prune_opt(rel, buf) heap_page_prune_opt((rel), (buf))
#endif

/* 19: scan_analyze_next_tuple lost OldestXmin (heap computes its own). */
#if PG_VERSION_NUM >= 190000
#define CX_ANALYZE_NEXT_TUPLE_PARAMS(scan) TableScanDesc scan
#define CX_ANALYZE_NEXT_TUPLE_ARGS(scan) (scan)
#else
#define CX_ANALYZE_NEXT_TUPLE_PARAMS(scan) TableScanDesc scan, TransactionId cx_oldest_xmin
#define CX_ANALYZE_NEXT_TUPLE_ARGS(scan) (scan), cx_oldest_xmin
#endif

/*
 * 19: CLUSTER and VACUUM FULL became REPACK: commands/repack.h instead of
 * commands/cluster.h, PROGRESS_REPACK_* instead of PROGRESS_CLUSTER_* (same
 * numbers; HEAP_TUPLES_WRITTEN is HEAP_TUPLES_INSERTED), finish_heap_swap()
 * takes reindex (true: rebuild the indexes, as before), and
 * relation_copy_for_cluster a snapshot (REPACK (CONCURRENTLY), see the head
 * comment): CX_CLUSTER_SNAPSHOT_PARAM names it, cx_cluster_concurrent()
 * tests it.
 */
#include "commands/progress.h"
#if PG_VERSION_NUM >= 190000
#include "commands/repack.h"
#define CX_PROGRESS_CLUSTER_COMMAND PROGRESS_REPACK_COMMAND
#define CX_PROGRESS_CLUSTER_PHASE PROGRESS_REPACK_PHASE
#define CX_PROGRESS_CLUSTER_INDEX_RELID PROGRESS_REPACK_INDEX_RELID
#define CX_PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED PROGRESS_REPACK_HEAP_TUPLES_SCANNED
#define CX_PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN PROGRESS_REPACK_HEAP_TUPLES_INSERTED
#define CX_PROGRESS_CLUSTER_TOTAL_HEAP_BLKS PROGRESS_REPACK_TOTAL_HEAP_BLKS
#define CX_PROGRESS_CLUSTER_HEAP_BLKS_SCANNED PROGRESS_REPACK_HEAP_BLKS_SCANNED
#define CX_PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP PROGRESS_REPACK_PHASE_SEQ_SCAN_HEAP
#define CX_PROGRESS_CLUSTER_PHASE_INDEX_SCAN_HEAP PROGRESS_REPACK_PHASE_INDEX_SCAN_HEAP
#define CX_PROGRESS_CLUSTER_PHASE_SORT_TUPLES PROGRESS_REPACK_PHASE_SORT_TUPLES
#define CX_PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP PROGRESS_REPACK_PHASE_WRITE_NEW_HEAP
#define cx_finish_heap_swap(oldheap, newheap, is_system_catalog, swap_toast_by_content, check_constraints, is_internal, frozen_xid, cutoff_multi, persistence) \
	finish_heap_swap((oldheap), (newheap), (is_system_catalog), \
					 (swap_toast_by_content), (check_constraints), \
					 (is_internal), true, (frozen_xid), (cutoff_multi), \
					 (persistence))
#define CX_CLUSTER_SNAPSHOT_PARAM Snapshot cx_cluster_snapshot,
#define cx_cluster_concurrent() (cx_cluster_snapshot != NULL)
/* REPACK (CONCURRENTLY) exists: am/rewrite.c refuses it on compressx tables */
#define CX_HAVE_REPACK_CONCURRENTLY 1
#else
#include "commands/cluster.h"
#define CX_PROGRESS_CLUSTER_COMMAND PROGRESS_CLUSTER_COMMAND
#define CX_PROGRESS_CLUSTER_PHASE PROGRESS_CLUSTER_PHASE
#define CX_PROGRESS_CLUSTER_INDEX_RELID PROGRESS_CLUSTER_INDEX_RELID
#define CX_PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED
#define CX_PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN
#define CX_PROGRESS_CLUSTER_TOTAL_HEAP_BLKS PROGRESS_CLUSTER_TOTAL_HEAP_BLKS
#define CX_PROGRESS_CLUSTER_HEAP_BLKS_SCANNED PROGRESS_CLUSTER_HEAP_BLKS_SCANNED
#define CX_PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP
#define CX_PROGRESS_CLUSTER_PHASE_INDEX_SCAN_HEAP PROGRESS_CLUSTER_PHASE_INDEX_SCAN_HEAP
#define CX_PROGRESS_CLUSTER_PHASE_SORT_TUPLES PROGRESS_CLUSTER_PHASE_SORT_TUPLES
#define CX_PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP
#define cx_finish_heap_swap(oldheap, newheap, is_system_catalog, swap_toast_by_content, check_constraints, is_internal, frozen_xid, cutoff_multi, persistence) \
	finish_heap_swap((oldheap), (newheap), (is_system_catalog), \
					 (swap_toast_by_content), (check_constraints), \
					 (is_internal), (frozen_xid), (cutoff_multi), (persistence))
#define CX_CLUSTER_SNAPSHOT_PARAM
#define cx_cluster_concurrent() false
#endif

/*
 * 19 also renumbered REPACK's progress parameters after HEAP_TUPLES_INSERTED
 * (4, was WRITTEN): UPDATED 5 and DELETED 6 are new, TOTAL_HEAP_BLKS is 7
 * (was 5), HEAP_BLKS_SCANNED 8 (6), INDEX_REBUILD_COUNT 9 (7); and its
 * phases: CATCH_UP 5 is new, SWAP_REL_FILES is 6 (was 5), REBUILD_INDEX 7
 * (6), FINAL_CLEANUP 8 (7).  recompress_table reports with them (rewrite.c
 * and core's finish_heap_swap()) under compressx's own command, and its
 * view (compressx.recompress_progress) reads 15 to 18's numbers:
 * cx_progress_as_cluster() turns a slot's parameters into those.
 */
static inline void
cx_progress_as_cluster(int64 *p)
{
#if PG_VERSION_NUM >= 190000
	int64		phase = p[PROGRESS_REPACK_PHASE];

	if (phase >= PROGRESS_REPACK_PHASE_SWAP_REL_FILES)
		p[PROGRESS_REPACK_PHASE] = phase - 1;
	p[5] = p[PROGRESS_REPACK_TOTAL_HEAP_BLKS];
	p[6] = p[PROGRESS_REPACK_HEAP_BLKS_SCANNED];
	p[7] = p[PROGRESS_REPACK_INDEX_REBUILD_COUNT];
	p[8] = 0;
	p[9] = 0;
#endif
}

/* 16 renamed relation_set_new_filenode (RelFileNode) to ..._filelocator. */
#if PG_VERSION_NUM >= 160000
#define CX_SET_NEW_FILE_CALLBACK relation_set_new_filelocator
typedef RelFileLocator CxRelFileLocator;
#else
#define CX_SET_NEW_FILE_CALLBACK relation_set_new_filenode
typedef RelFileNode CxRelFileLocator;
#endif

#endif							/* COMPRESSX_COMPAT_H */
