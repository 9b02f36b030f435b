/*-------------------------------------------------------------------------
 *
 * progress.h
 *	  Progress of compressx's operations in core's per-backend progress
 *	  slots, shown by the view compressx.progress (and, for the rewrites of
 *	  recompress_table and recompress_online, by their own views).
 *
 * Every operation reports under CX_PROGRESS_COMMAND, a command value no
 * view of core selects; compressx.progress_info() (sql/progress.c) reads
 * the slots of the backends whose statistics the caller may read, and the
 * views tell the operations apart by a marker in the last parameter.
 *
 * The operations of this file (marker CX_PROGRESS_OP_MARKER) use four
 * parameters: the operation, its phase, units done and units in all (0:
 * not known).  A backend has one slot: an operation starts reporting only
 * when no other command of the backend does (CLUSTER and VACUUM FULL of a
 * compressx table report in core's pg_stat_progress_cluster, recompress_*
 * in their views, and nothing started inside them takes their slot over).
 * Core ends the command when the (sub)transaction that runs it aborts
 * (AbortTransaction, AbortSubTransaction), so an error leaves nothing
 * behind; each call checks the slot is still the operation's.
 *
 * ALTER TABLE and REFRESH MATERIALIZED VIEW rewrite a table into a new
 * compressx relation without a progress command of core's: compressx
 * reports it from the access method (cx_progress_rewrite_*), see
 * progress.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_AM_PROGRESS_H
#define COMPRESSX_AM_PROGRESS_H

#include "utils/backend_progress.h"
#include "access/tupdesc.h"
#include "utils/relcache.h"

/*
 * Not a value of ProgressCommandType in 15-18 (they count from 0 to under
 * 10), nor one core is likely to reach: pg_stat_get_progress_info() selects
 * one of its own commands by name, so none of its views shows this.
 */
#define CX_PROGRESS_COMMAND		((ProgressCommandType) 67)

/*
 * Parameters (0-based; the views' param1 is parameter 0).  Parameter 1 is
 * also PROGRESS_CLUSTER_PHASE: during a rewrite core's finish_heap_swap()
 * writes phases 5 to 7 there, which the view names as core does.  Core
 * writes nothing into 0, 2 and 3 on that path (the index builds it runs
 * write 7 and 9 to 16).
 */
#define CX_PROGRESS_OPERATION	0
#define CX_PROGRESS_PHASE		1
#define CX_PROGRESS_DONE		2
#define CX_PROGRESS_TOTAL		3
#define CX_PROGRESS_MARKER_PARAM	19
#define CX_PROGRESS_OP_MARKER	0x43584f50	/* "CXOP" */

/* operations (persisted nowhere; the view names them) */
typedef enum CxProgressOperation
{
	CX_OP_REWRITE = 1,			/* ALTER TABLE / REFRESH MATERIALIZED VIEW into compressx */
	CX_OP_ADVISE = 2,			/* compressx.advise() */
	CX_OP_TRAIN = 3,			/* compressx.train_dictionary() */
	CX_OP_AUTO_DICTIONARY = 4	/* a check of dictionary => 'auto' */
} CxProgressOperation;

/* phases, one numbering for all operations; units in brackets */
#define CX_PHASE_SAMPLING		1	/* sampling rows [rows] */
#define CX_PHASE_READING		2	/* reading values [values] */
#define CX_PHASE_TRYING			3	/* trying codecs [candidates] */
#define CX_PHASE_WRITING		4	/* writing rows [rows]; = core's WRITE_NEW_HEAP */
/* 5 swapping relation files, 6 rebuilding indexes, 7 final cleanup: core's */
#define CX_PHASE_TRAINING		8	/* training a dictionary [none] */
#define CX_PHASE_MEASURING		9	/* measuring [values] */

/*
 * Start reporting operation op on relid; false when another command of
 * this backend reports (CLUSTER, or advise called from an ALTER TABLE's
 * USING expression): then every call is a no-op until the matching
 * cx_progress_end(), which leaves the other report alone.  End with
 * cx_progress_end(); an error ends it by itself.
 */
extern bool cx_progress_begin(Oid relid, CxProgressOperation op);
/* Enter phase; done starts at 0, total 0 when not known. */
extern void cx_progress_phase(int phase, int64 total);
extern void cx_progress_advance(int64 n);
extern void cx_progress_set_done(int64 done);
extern void cx_progress_end(void);
/* The columns of desc that advise and training look at (varlena, live). */
extern int	cx_progress_varlena_columns(TupleDesc desc);

/*
 * The rewrite of ALTER TABLE (SET ACCESS METHOD compressx, ALTER COLUMN ..
 * TYPE of a compressx table) and REFRESH MATERIALIZED VIEW: started when
 * the new relation is created (object access hook), counted
 * per row inserted into that relation, ended when core drops the
 * transient relation after swapping the files (or by the abort).
 */
extern Oid	cx_progress_rewrite_relid;
extern void cx_progress_rewrite_rows(int64 n);
#define cx_progress_rewrite_count(rel, n) \
	do { \
		if (unlikely(OidIsValid(cx_progress_rewrite_relid) && \
					 RelationGetRelid(rel) == cx_progress_rewrite_relid)) \
			cx_progress_rewrite_rows(n); \
	} while (0)

extern void cx_progress_init(void);

#endif							/* COMPRESSX_AM_PROGRESS_H */
