/*-------------------------------------------------------------------------
 *
 * rewrite.h
 *	  Copying a table into a new heap while re-encoding its values: the
 *	  common loop of recompress_table() and of CLUSTER / VACUUM FULL on
 *	  compressx tables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_REWRITE_H
#define COMPRESSX_REWRITE_H

#include "access/htup.h"
#include "utils/rel.h"

/*
 * Build the new version of a tuple.  values/isnull are the columns as the
 * old table's slot presents them (decoded for compressx tables, stored
 * forms for heap tables); stored/stored_nulls the same tuple version's
 * stored values (the same as values for heap tables); live says whether
 * the tuple is visible to all.  Runs in a per-tuple memory context.
 */
typedef HeapTuple (*CxReformFn) (Relation NewHeap, Datum *values,
								 bool *isnull, const Datum *stored,
								 const bool *stored_nulls, bool live,
								 void *arg);

/*
 * Copy every tuple version of OldHeap that is not dead into NewHeap (both
 * locked AccessExclusive), keeping visibility information and update
 * chains (rewriteheap.h), in physical order or in OldIndex's order
 * (use_sort: seqscan and sort).  Reports CLUSTER progress.  The caller sets
 * NewHeap->rd_toastoid to OldHeap's TOAST relation when both have one (and
 * swaps TOAST by content), as CLUSTER does: out-of-line values shared by
 * several versions of a row are then copied once.
 */
extern void cx_rewrite_copy(Relation OldHeap, Relation NewHeap,
							Relation OldIndex, bool use_sort,
							TransactionId OldestXmin,
							TransactionId FreezeXid,
							MultiXactId MultiXactCutoff,
							CxReformFn reform, void *arg,
							double *num_tuples, double *tups_vacuumed,
							double *tups_recently_dead);

/*
 * GUC compressx.debug_rewrite_delay (ms, superuser-only test aid): rewrites
 * sleep this long per 64 tuples copied, online recompression once per batch
 * (its compaction also between two of its transactions).
 */
extern int	cx_debug_rewrite_delay_ms;

/* Register the GUC compressx.debug_rewrite_delay. */
extern void cx_rewrite_init(void);

#endif							/* COMPRESSX_REWRITE_H */
