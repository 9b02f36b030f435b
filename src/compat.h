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

/* 18 added a size-to-reserve argument to heap_form_minimal_tuple(). */
#if PG_VERSION_NUM >= 180000
#define cx_heap_form_minimal_tuple(desc, values, isnull) \
	heap_form_minimal_tuple((desc), (values), (isnull), 0)
#else
#define cx_heap_form_minimal_tuple(desc, values, isnull) \
	heap_form_minimal_tuple((desc), (values), (isnull))
#endif

#endif							/* COMPRESSX_COMPAT_H */
