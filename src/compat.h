/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Version shims for PostgreSQL 15 to 18, one line of reason each.
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

/* 16: tuple_update's TU_UpdateIndexes is set by heap_update() (15: a bool). */
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#if PG_VERSION_NUM >= 160000
typedef TU_UpdateIndexes CxUpdateIndexes;
#define cx_heap_update(rel, otid, newtup, cid, crosscheck, wait, tmfd, lockmode, update_indexes) \
	heap_update((rel), (otid), (newtup), (cid), (crosscheck), (wait), (tmfd), \
				(lockmode), (update_indexes))
#else
typedef bool CxUpdateIndexes;
static inline TM_Result
cx_heap_update(Relation rel, ItemPointer otid, HeapTuple newtup, CommandId cid,
			   Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
			   LockTupleMode *lockmode, CxUpdateIndexes *update_indexes)
{
	TM_Result	result = heap_update(rel, otid, newtup, cid, crosscheck, wait,
									 tmfd, lockmode);

	*update_indexes = result == TM_Ok && !HeapTupleIsHeapOnly(newtup);
	return result;
}
#endif

/*
 * 16: ExecInsertIndexTuples() takes onlySummarizing, which heap_update()'s
 * TU_UpdateIndexes answers (15: a bool, every index or none).
 */
#include "executor/executor.h"
#if PG_VERSION_NUM >= 160000
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

/* 18 added an instrumentation argument to index_beginscan(). */
#include "access/genam.h"
#if PG_VERSION_NUM >= 180000
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
/* logical/decoder.c copies reorderbuffer.c's private ReorderBufferToastEnt:
 * the same in 15.18 and 18.6 (16, 17: no source here; 19: unknown). */
#if PG_VERSION_NUM >= 150000 && PG_VERSION_NUM < 190000
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

/* 16 renamed relation_set_new_filenode (RelFileNode) to ..._filelocator. */
#if PG_VERSION_NUM >= 160000
#define CX_SET_NEW_FILE_CALLBACK relation_set_new_filelocator
typedef RelFileLocator CxRelFileLocator;
#else
#define CX_SET_NEW_FILE_CALLBACK relation_set_new_filenode
typedef RelFileNode CxRelFileLocator;
#endif

#endif							/* COMPRESSX_COMPAT_H */
