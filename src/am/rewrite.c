/*-------------------------------------------------------------------------
 *
 * rewrite.c
 *	  The copy loop shared by recompress_table() and by CLUSTER / VACUUM
 *	  FULL on compressx tables (relation_copy_for_cluster).
 *
 * Each tuple version is classified with HeapTupleSatisfiesVacuum against
 * OldestXmin: dead ones are dropped (rewrite_heap_dead_tuple keeps update
 * chains consistent), the others are reformed by the caller's callback and
 * written with rewrite_heap_tuple, which keeps xmin, xmax and ctid chains,
 * so snapshots older than the rewrite read the same rows afterwards.  With
 * use_sort the tuples are sorted by OldIndex first; they are sorted in
 * their decoded form, so index keys are computed on decoded values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/rewriteheap.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "storage/bufmgr.h"
#include "tcop/utility.h"
#include "utils/syscache.h"

#include "am/am.h"
#include "am/rewrite.h"
#include "am/slot.h"
#include "catalog/generation.h"

/* GUC compressx.debug_rewrite_delay: test aid, sleep per 64 tuples copied */
int			cx_debug_rewrite_delay_ms = 0;

#ifdef CX_HAVE_REPACK_CONCURRENTLY
/*
 * REPACK (CONCURRENTLY), PostgreSQL 19: core copies the table as of a
 * snapshot, then applies the changes it decoded from the table's WAL
 * meanwhile to the new table through heap's routine, tuples as decoded.
 * Core allows it on tables with heap's own routine only and refuses others
 * with a message that knows nothing of compressx.  Refuse it on a compressx
 * table first, before any lock, slot or copy, naming the way compressx
 * rewrites a table without blocking writers.  REPACK without CONCURRENTLY
 * (and CLUSTER, VACUUM FULL) go through relation_copy_for_cluster below and
 * keep every column's codec, level and dictionary.
 *
 * Reads only pg_class and pg_am rows (no lock: a table that changes access
 * method meanwhile meets core's own check); nothing derived from row data.
 */
static ProcessUtility_hook_type prev_process_utility = NULL;

/* Whether the table relid is stored by compressx's access method. */
static bool
relid_is_compressx(Oid relid)
{
	HeapTuple	tup;
	Oid			relam;
	regproc		handler = InvalidOid;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return false;
	relam = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
	if (!OidIsValid(relam))
		return false;
	tup = SearchSysCache1(AMOID, ObjectIdGetDatum(relam));
	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_am) GETSTRUCT(tup))->amtype == AMTYPE_TABLE)
		handler = ((Form_pg_am) GETSTRUCT(tup))->amhandler;
	ReleaseSysCache(tup);
	/* the handler sets cx_am_routine when it is compressx's */
	return OidIsValid(handler) && GetTableAmRoutine(handler) == cx_am_routine &&
		cx_am_routine != NULL;
}

static void
check_repack(RepackStmt *stmt)
{
	bool		concurrently = false;
	Oid			relid;

	foreach_node(DefElem, opt, stmt->params)
	{
		if (strcmp(opt->defname, "concurrently") == 0)
			concurrently = defGetBoolean(opt);
	}
	if (!concurrently || stmt->relation == NULL || stmt->relation->relation == NULL)
		return;
	relid = RangeVarGetRelid(stmt->relation->relation, NoLock, true);
	if (!OidIsValid(relid) || !relid_is_compressx(relid))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot execute %s on compressx table \"%s\"",
					"REPACK (CONCURRENTLY)", stmt->relation->relation->relname),
			 errdetail("REPACK (CONCURRENTLY) applies the changes made during the copy through heap's access method, which does not store compressx's values."),
			 errhint("To rewrite a compressx table while other sessions write to it, use CALL compressx.recompress_online(...) and then VACUUM; REPACK without CONCURRENTLY rewrites it keeping every column's codec, level and dictionary.")));
}

static void
cx_repack_utility(PlannedStmt *pstmt, const char *queryString,
				  bool readOnlyTree, ProcessUtilityContext context,
				  ParamListInfo params, QueryEnvironment *queryEnv,
				  DestReceiver *dest, QueryCompletion *qc)
{
	if (IsA(pstmt->utilityStmt, RepackStmt))
		check_repack((RepackStmt *) pstmt->utilityStmt);
	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}
#endif

void
cx_rewrite_init(void)
{
#ifdef CX_HAVE_REPACK_CONCURRENTLY
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = cx_repack_utility;
#endif
	DefineCustomIntVariable("compressx.debug_rewrite_delay",
							"Sleeps this long after every 64 tuples a rewrite copies (testing aid).",
							"Used by compressx's crash tests to stop the server mid-rewrite.",
							&cx_debug_rewrite_delay_ms,
							0, 0, 60000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);
}

/*
 * The stored tuple and buffer behind a slot filled by a scan: compressx
 * slots hold it in their child.
 */
static HeapTuple
stored_tuple(TupleTableSlot *slot, Buffer *buf)
{
	TupleTableSlot *bslot = cx_slot_stored(slot);

	Assert(bslot && TTS_IS_BUFFERTUPLE(bslot));
	*buf = ((BufferHeapTupleTableSlot *) bslot)->buffer;
	return ExecFetchSlotHeapTuple(bslot, false, NULL);
}

/*
 * Classify a tuple version for copying: returns false if it is dead.
 * *live: visible to everybody (or inserted by our own transaction).
 */
static bool
keep_tuple(Relation rel, HeapTuple tuple, Buffer buf, TransactionId OldestXmin,
		   bool *live, double *recently_dead)
{
	bool		keep = true;

	*live = false;
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	switch (HeapTupleSatisfiesVacuum(tuple, OldestXmin, buf))
	{
		case HEAPTUPLE_DEAD:
			keep = false;
			break;
		case HEAPTUPLE_LIVE:
			*live = true;
			break;
		case HEAPTUPLE_RECENTLY_DEAD:
			*recently_dead += 1;
			break;
		case HEAPTUPLE_INSERT_IN_PROGRESS:
			/* we hold AccessExclusiveLock: only our own transaction */
			if (!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tuple->t_data)))
				elog(WARNING, "concurrent insert in progress within table \"%s\"",
					 RelationGetRelationName(rel));
			*live = true;
			break;
		case HEAPTUPLE_DELETE_IN_PROGRESS:
			if (!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetUpdateXid(tuple->t_data)))
				elog(WARNING, "concurrent delete in progress within table \"%s\"",
					 RelationGetRelationName(rel));
			*recently_dead += 1;
			break;
		default:
			elog(ERROR, "unexpected HeapTupleSatisfiesVacuum result");
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return keep;
}

/*
 * Reform and write one tuple; header comes from old.  stored: the stored
 * tuple version old was read from, whose values the reform may reuse.
 */
static void
write_tuple(RewriteState rwstate, Relation NewHeap, HeapTuple old,
			HeapTuple stored, Datum *values, bool *isnull, Datum *svalues,
			bool *snulls, bool live, CxReformFn reform, void *arg)
{
	TupleDesc	desc = RelationGetDescr(NewHeap);
	HeapTuple	copied;

	for (int i = 0; i < desc->natts; i++)
		if (TupleDescAttr(desc, i)->attisdropped)
			isnull[i] = true;
	heap_deform_tuple(stored, desc, svalues, snulls);
	copied = reform(NewHeap, values, isnull, svalues, snulls, live, arg);
	rewrite_heap_tuple(rwstate, old, copied);
}

/* The stored version of a sorted (decoded) tuple, by its ctid. */
static HeapTuple
refetch_stored(Relation rel, HeapTuple decoded)
{
	HeapTuple	stored = cx_fetch_stored_tuple(rel, &decoded->t_self);

	if (stored == NULL)
		elog(ERROR, "could not refetch tuple (%u,%u) of relation \"%s\"",
			 ItemPointerGetBlockNumber(&decoded->t_self),
			 ItemPointerGetOffsetNumber(&decoded->t_self),
			 RelationGetRelationName(rel));
	return stored;
}

void
cx_rewrite_copy(Relation OldHeap, Relation NewHeap, Relation OldIndex,
				bool use_sort, TransactionId OldestXmin,
				TransactionId FreezeXid, MultiXactId MultiXactCutoff,
				CxReformFn reform, void *arg, double *num_tuples,
				double *tups_vacuumed, double *tups_recently_dead)
{
	TupleDesc	desc = RelationGetDescr(OldHeap);
	RewriteState rwstate;
	TableScanDesc tscan = NULL;
	IndexScanDesc iscan = NULL;
	Tuplesortstate *sort = NULL;
	TupleTableSlot *slot;
	MemoryContext tuplecxt;
	MemoryContext oldcxt;
	BlockNumber prev_block = InvalidBlockNumber;
	uint64		scanned = 0;
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	Datum	   *svalues = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *snulls = palloc(sizeof(bool) * Max(desc->natts, 1));
	const int	count_idx[] = {CX_PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED,
	CX_PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN};
	int64		count_val[2];

	rwstate = begin_heap_rewrite(OldHeap, NewHeap, OldestXmin, FreezeXid,
								 MultiXactCutoff);
	tuplecxt = AllocSetContextCreate(CurrentMemoryContext, "compressx rewrite tuple",
									 ALLOCSET_DEFAULT_SIZES);
	slot = table_slot_create(OldHeap, NULL);

	if (use_sort)
		sort = tuplesort_begin_cluster(desc, OldIndex, maintenance_work_mem,
									   NULL, TUPLESORT_NONE);
	if (OldIndex != NULL && !use_sort)
	{
		pgstat_progress_update_param(CX_PROGRESS_CLUSTER_PHASE,
									 CX_PROGRESS_CLUSTER_PHASE_INDEX_SCAN_HEAP);
		pgstat_progress_update_param(CX_PROGRESS_CLUSTER_INDEX_RELID,
									 RelationGetRelid(OldIndex));
		iscan = cx_index_beginscan(OldHeap, OldIndex, SnapshotAny, 0, 0);
		index_rescan(iscan, NULL, 0, NULL, 0);
	}
	else
	{
		pgstat_progress_update_param(CX_PROGRESS_CLUSTER_PHASE,
									 CX_PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP);
		tscan = cx_table_beginscan(OldHeap, SnapshotAny, 0, NULL);
		pgstat_progress_update_param(CX_PROGRESS_CLUSTER_TOTAL_HEAP_BLKS,
									 ((HeapScanDesc) tscan)->rs_nblocks);
	}

	for (;;)
	{
		HeapTuple	tuple;
		Buffer		buf;
		bool		live;

		CHECK_FOR_INTERRUPTS();
		if (iscan)
		{
			if (!index_getnext_slot(iscan, ForwardScanDirection, slot))
				break;
			if (iscan->xs_recheck)
				elog(ERROR, "CLUSTER does not support lossy index conditions");
		}
		else
		{
			if (!table_scan_getnextslot(tscan, ForwardScanDirection, slot))
				break;
			if (prev_block != ((HeapScanDesc) tscan)->rs_cblock)
			{
				prev_block = ((HeapScanDesc) tscan)->rs_cblock;
				pgstat_progress_update_param(CX_PROGRESS_CLUSTER_HEAP_BLKS_SCANNED,
											 prev_block + 1);
			}
		}
		if (cx_debug_rewrite_delay_ms > 0 && ++scanned % 64 == 0)
			pg_usleep(cx_debug_rewrite_delay_ms * 1000L);

		tuple = stored_tuple(slot, &buf);
		if (!keep_tuple(OldHeap, tuple, buf, OldestXmin, &live, tups_recently_dead))
		{
			*tups_vacuumed += 1;
			/* the rewrite module must see it to keep update chains right */
			if (rewrite_heap_dead_tuple(rwstate, tuple))
			{
				/* an earlier recently-dead tuple turned out dead */
				*tups_vacuumed += 1;
				*tups_recently_dead -= 1;
			}
			continue;
		}

		*num_tuples += 1;
		oldcxt = MemoryContextSwitchTo(tuplecxt);
		if (sort)
		{
			/* sort decoded copies: index keys must see decoded values */
			HeapTuple	copy = ExecCopySlotHeapTuple(slot);

			MemoryContextSwitchTo(oldcxt);
			tuplesort_putheaptuple(sort, copy);
			pgstat_progress_update_param(CX_PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED,
										 (int64) *num_tuples);
		}
		else
		{
			slot_getallattrs(slot);
			memcpy(values, slot->tts_values, sizeof(Datum) * desc->natts);
			memcpy(isnull, slot->tts_isnull, sizeof(bool) * desc->natts);
			write_tuple(rwstate, NewHeap, tuple, tuple, values, isnull, svalues,
						snulls, live, reform, arg);
			MemoryContextSwitchTo(oldcxt);
			count_val[0] = count_val[1] = (int64) *num_tuples;
			pgstat_progress_update_multi_param(2, count_idx, count_val);
		}
		MemoryContextReset(tuplecxt);
	}

	if (tscan)
	{
		pgstat_progress_update_param(CX_PROGRESS_CLUSTER_HEAP_BLKS_SCANNED,
									 ((HeapScanDesc) tscan)->rs_nblocks);
		table_endscan(tscan);
	}
	if (iscan)
		index_endscan(iscan);
	ExecDropSingleTupleTableSlot(slot);

	if (sort)
	{
		HeapTuple	tuple;
		int64		written = 0;

		pgstat_progress_update_param(CX_PROGRESS_CLUSTER_PHASE,
									 CX_PROGRESS_CLUSTER_PHASE_SORT_TUPLES);
		tuplesort_performsort(sort);
		pgstat_progress_update_param(CX_PROGRESS_CLUSTER_PHASE,
									 CX_PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP);
		while ((tuple = tuplesort_getheaptuple(sort, true)) != NULL)
		{
			CHECK_FOR_INTERRUPTS();
			oldcxt = MemoryContextSwitchTo(tuplecxt);
			heap_deform_tuple(tuple, desc, values, isnull);
			/* liveness is not known after sorting: count as live */
			write_tuple(rwstate, NewHeap, tuple, refetch_stored(OldHeap, tuple),
						values, isnull, svalues, snulls, true, reform, arg);
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(tuplecxt);
			pgstat_progress_update_param(CX_PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN, ++written);
		}
		tuplesort_end(sort);
	}

	end_heap_rewrite(rwstate);
	MemoryContextDelete(tuplecxt);
	pfree(values);
	pfree(isnull);
	pfree(svalues);
	pfree(snulls);
}

/*
 * CLUSTER / VACUUM FULL: every value re-encoded to the current settings;
 * versions that shared an out-of-line value share its new copy.
 */
static HeapTuple
cluster_reform(Relation NewHeap, Datum *values, bool *isnull,
			   const Datum *stored, const bool *stored_nulls, bool live,
			   void *arg)
{
	return cx_encode_row(NewHeap, (CxColumnSetting *) arg, values, isnull,
						 NULL, stored, stored_nulls, HEAP_INSERT_NO_LOGICAL);
}

void
cx_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
							 Relation OldIndex, bool use_sort,
							 TransactionId OldestXmin,
							 CX_CLUSTER_SNAPSHOT_PARAM
							 TransactionId *xid_cutoff,
							 MultiXactId *multi_cutoff,
							 double *num_tuples, double *tups_vacuumed,
							 double *tups_recently_dead)
{
	CxColumnSetting *settings;

	/*
	 * 19's REPACK (CONCURRENTLY) copies what a snapshot sees and applies the
	 * decoded changes afterwards, through heap's own routine.  Core runs it
	 * on heap's routine only, so this is not reached; were it reached, the
	 * copy below (every version, by OldestXmin) would duplicate the changes:
	 * refuse before writing anything, pointing to compressx's online way.
	 */
	if (cx_cluster_concurrent())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot execute %s on compressx table \"%s\"",
						"REPACK (CONCURRENTLY)", RelationGetRelationName(OldTable)),
				 errhint("To rewrite a compressx table while other sessions write to it, use CALL compressx.recompress_online(...) and then VACUUM; REPACK without CONCURRENTLY rewrites it keeping every column's codec, level and dictionary.")));

	settings = palloc(sizeof(CxColumnSetting) *
					  Max(RelationGetDescr(NewTable)->natts, 1));

	/* the settings of the table being rebuilt, named by OID, not by name */
	cx_resolve_settings_of(NewTable, RelationGetRelid(OldTable), settings);
	cx_rewrite_copy(OldTable, NewTable, OldIndex, use_sort, OldestXmin,
					*xid_cutoff, *multi_cutoff, cluster_reform, settings,
					num_tuples, tups_vacuumed, tups_recently_dead);
	pfree(settings);
	/* every row encoded afresh: the columns' settings are applied */
	cx_mark_settings_applied(RelationGetRelid(OldTable), NULL, NULL);
}
