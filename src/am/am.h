/*-------------------------------------------------------------------------
 *
 * am.h
 *	  The compressx table access method: shared declarations.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_AM_H
#define COMPRESSX_AM_H

#include "access/tableam.h"
#include "utils/rel.h"

#include "compat.h"
#include "catalog/relation.h"
#include "catalog/settings.h"

/* heap's routine, which compressx wraps */
extern const TableAmRoutine *cx_heap;

/*
 * compressx.logical_body_messages: when UPDATE and DELETE log the bodies of
 * out-of-line values in replica identity columns for logical decoding
 * (am_write.c log_identity_bodies).
 */
typedef enum CxBodyMessages
{
	CX_BODY_MESSAGES_AUTO,		/* while this database has a logical slot here */
	CX_BODY_MESSAGES_ALWAYS,	/* whenever wal_level = logical */
	CX_BODY_MESSAGES_OFF
} CxBodyMessages;
extern int	cx_body_messages;
extern void cx_write_init(void);


/* am_write.c */
/*
 * Encode a row for rel with settings.  oldtup: the stored row an UPDATE
 * replaces (unchanged values are reused).  old_stored/old_nulls: in a
 * rewrite, the stored values of the version being copied (out-of-line
 * values keep being shared between versions).
 */
extern HeapTuple cx_encode_row(Relation rel, const CxColumnSetting *settings,
							   Datum *values, bool *isnull, HeapTuple oldtup,
							   const Datum *old_stored, const bool *old_nulls,
							   int options);
/* A palloc'd copy of the stored tuple at tid (any visibility), or NULL. */
extern HeapTuple cx_fetch_stored_tuple(Relation rel, ItemPointer tid);
extern void cx_delete_refs(Relation rel, HeapTuple tuple, HeapTuple keep,
						   bool is_speculative);
extern void cx_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
							CxInsertOptions options,
							struct BulkInsertStateData *bistate);
extern void cx_tuple_insert_speculative(Relation rel, TupleTableSlot *slot,
										CommandId cid, CxInsertOptions options,
										struct BulkInsertStateData *bistate,
										uint32 specToken);
extern void cx_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
										  uint32 specToken, bool succeeded);
extern void cx_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
							CommandId cid, CxInsertOptions options,
							struct BulkInsertStateData *bistate);
extern TM_Result cx_tuple_delete(CX_TUPLE_DELETE_PARAMS(rel, tid, cid, snapshot,
														crosscheck, wait, tmfd));
extern TM_Result cx_tuple_update(CX_TUPLE_UPDATE_PARAMS(rel, otid, slot, cid,
														snapshot, crosscheck,
														wait, tmfd, lockmode,
														update_indexes));

/*
 * Online recompression: replace the locked row version oldtup by one whose
 * columns with reencode[i] are encoded afresh with settings (the others
 * keep their stored bytes); no trigger fires, the caller inserts index
 * entries when *update_indexes says so.  When every such column was stored
 * uncompressed and would be again (the codec does not shrink it), nothing
 * is written and *newtid is invalid.
 */
extern TM_Result cx_reencode_locked_row(Relation rel, HeapTuple oldtup,
										const CxColumnSetting *settings,
										const bool *reencode, CommandId cid,
										ItemPointer newtid,
										CxUpdateIndexes *update_indexes);

/*
 * Online compaction: replace the locked row version oldtup by a copy that
 * heap places afresh, the out-of-line values of the columns with resave[i]
 * (resave may be NULL) saved again as stored (not decoded); the caller
 * inserts index entries when *update_indexes says so.
 */
extern TM_Result cx_move_locked_row(Relation rel, HeapTuple oldtup,
									const bool *resave, CommandId cid,
									ItemPointer newtid,
									CxUpdateIndexes *update_indexes);

/* am_index.c */
extern double cx_index_build_range_scan(Relation tableRelation,
										Relation indexRelation,
										struct IndexInfo *indexInfo,
										bool allow_sync, bool anyvisible,
										bool progress,
										BlockNumber start_blockno,
										BlockNumber numblocks,
										IndexBuildCallback callback,
										void *callback_state,
										TableScanDesc scan);
extern void cx_index_validate_scan(Relation tableRelation,
								   Relation indexRelation,
								   struct IndexInfo *indexInfo,
								   Snapshot snapshot,
								   struct ValidateIndexState *state);

/* am_write.c: CLUSTER and VACUUM FULL */
extern void cx_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
										 Relation OldIndex, bool use_sort,
										 TransactionId OldestXmin,
										 CX_CLUSTER_SNAPSHOT_PARAM
										 TransactionId *xid_cutoff,
										 MultiXactId *multi_cutoff,
										 double *num_tuples,
										 double *tups_vacuumed,
										 double *tups_recently_dead);

#endif							/* COMPRESSX_AM_H */
