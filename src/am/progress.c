/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  Reporting the progress of compressx's operations (see progress.h),
 *	  and of the rewrites of ALTER TABLE and REFRESH MATERIALIZED VIEW into
 *	  a compressx relation.
 *
 * Rewrites.  Core starts no progress command for the rewrite of ALTER
 * TABLE (SET ACCESS METHOD, ALTER COLUMN .. TYPE) or for REFRESH
 * MATERIALIZED VIEW: make_new_heap() creates a transient relation
 * "pg_temp_<oid>", the rows are inserted into it one by one, then
 * finish_heap_swap() swaps the files, rebuilds the indexes and drops the
 * transient relation.  When the transient relation is a compressx one,
 * the access method sees each step:
 *	- relation_set_new_filelocator on it: the rewrite starts, if the
 *	  relation is the transient relation of a table this backend holds
 *	  AccessExclusiveLock on (cx_settings_relid(), the test that settings
 *	  use) and no other command of the backend reports (CLUSTER and VACUUM
 *	  FULL report in pg_stat_progress_cluster, recompress_* in their
 *	  views).  The total is the old table's row estimate, as the planner
 *	  makes it (table_relation_estimate_size()).
 *	- tuple_insert and multi_insert into it: rows done.  Only into that
 *	  relation: an INSERT into any other table, or into the table after
 *	  the rewrite, counts nothing.
 *	- finish_heap_swap() writes its phases (5 to 7) into parameter 1 as it
 *	  does for CLUSTER, and ends by dropping the transient relation: the
 *	  object access hook ends the report there, so that nothing stays for
 *	  the rest of a transaction block.
 *	- an error: core ends the command when the (sub)transaction aborts;
 *	  the end of the transaction forgets the transient relation.
 * A rewrite of a compressx table into heap (SET ACCESS METHOD heap) fills
 * a heap: compressx sees its creation (object access hook,
 * OAT_POST_CREATE) and its drop, not its rows, and reports the phases
 * only (done: -1, NULL in the view).
 *
 * Who can read it: compressx.progress_info() shows a backend's slot only
 * to roles that may read that backend's statistics, as core's views do;
 * the slot holds counts and OIDs, nothing derived from row data.
 * Nothing here waits or takes a lock (the row estimate opens the old table
 * under the AccessExclusiveLock the rewrite holds); memory: none.  It
 * reads no table, so isolation levels, foreign keys and logical decoding
 * see nothing of it; the view reads the slots as core's
 * pg_stat_progress_* views do, without a snapshot.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/backend_status.h"
#include "utils/rel.h"

#include "catalog/relation.h"
#include "catalog/settings.h"
#include "am/progress.h"

Oid			cx_progress_rewrite_relid = InvalidOid;

/* the operation this backend reports, 0: none */
static CxProgressOperation reporting = 0;
static Oid	reporting_relid = InvalidOid;
static int64 done_count = 0;

/*
 * Operations begun while another command of this backend reported, not
 * yet ended: their calls do nothing, and their end leaves the other's
 * report alone (advise called from a USING expression of ALTER TABLE, say).
 * An abort resets it (core ends every report then).
 */
static int	refused = 0;

static object_access_hook_type prev_object_access_hook = NULL;

/*
 * Whether this backend's slot still holds the operation it started: core
 * ends the command when a (sub)transaction aborts.
 */
static bool
still_reporting(void)
{
	if (reporting == 0)
		return false;
	if (MyBEEntry == NULL ||
		MyBEEntry->st_progress_command != CX_PROGRESS_COMMAND ||
		MyBEEntry->st_progress_param[CX_PROGRESS_MARKER_PARAM] != CX_PROGRESS_OP_MARKER ||
		MyBEEntry->st_progress_param[CX_PROGRESS_OPERATION] != reporting ||
		MyBEEntry->st_progress_command_target != reporting_relid)
	{
		reporting = 0;
		cx_progress_rewrite_relid = InvalidOid;
		return false;
	}
	return true;
}

bool
cx_progress_begin(Oid relid, CxProgressOperation op)
{
	const int	idx[] = {CX_PROGRESS_OPERATION, CX_PROGRESS_PHASE, CX_PROGRESS_DONE,
	CX_PROGRESS_TOTAL, CX_PROGRESS_MARKER_PARAM};
	int64		val[] = {op, 0, 0, 0, CX_PROGRESS_OP_MARKER};

	/* another command of this backend (core's, or one of ours) reports */
	if (refused > 0 || MyBEEntry == NULL || !pgstat_track_activities ||
		MyBEEntry->st_progress_command != PROGRESS_COMMAND_INVALID)
	{
		refused++;
		return false;
	}
	reporting = 0;
	cx_progress_rewrite_relid = InvalidOid;
	pgstat_progress_start_command(CX_PROGRESS_COMMAND, relid);
	pgstat_progress_update_multi_param(lengthof(idx), idx, val);
	reporting = op;
	reporting_relid = relid;
	done_count = 0;
	return true;
}

void
cx_progress_phase(int phase, int64 total)
{
	const int	idx[] = {CX_PROGRESS_PHASE, CX_PROGRESS_DONE, CX_PROGRESS_TOTAL};
	int64		val[] = {phase, 0, total};

	if (refused > 0 || !still_reporting())
		return;
	done_count = 0;
	pgstat_progress_update_multi_param(lengthof(idx), idx, val);
}

void
cx_progress_set_done(int64 done)
{
	if (refused > 0 || !still_reporting())
		return;
	done_count = done;
	pgstat_progress_update_param(CX_PROGRESS_DONE, done);
}

void
cx_progress_advance(int64 n)
{
	if (refused > 0 || !still_reporting())
		return;
	done_count += n;
	pgstat_progress_update_param(CX_PROGRESS_DONE, done_count);
}

void
cx_progress_end(void)
{
	if (refused > 0)
	{
		refused--;
		return;
	}
	if (still_reporting())
		pgstat_progress_end_command();
	reporting = 0;
	cx_progress_rewrite_relid = InvalidOid;
}

int
cx_progress_varlena_columns(TupleDesc desc)
{
	int			n = 0;

	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped && TupleDescAttr(desc, i)->attlen == -1)
			n++;
	return n;
}

/*
 * Start the report of the rewrite that fills newrel, the transient relation
 * of orig; counted: whether rows inserted into newrel are counted.
 */
static void
rewrite_begin(Relation newrel, Oid orig, bool counted)
{
	Relation	old;
	BlockNumber pages;
	double		tuples = 0;
	double		allvisfrac;

	/* inside CLUSTER, VACUUM FULL, recompress_*: theirs is the report */
	if (refused > 0 || MyBEEntry == NULL ||
		MyBEEntry->st_progress_command != PROGRESS_COMMAND_INVALID ||
		!cx_progress_begin(orig, CX_OP_REWRITE))
		return;
	/* AccessExclusiveLock held (cx_settings_relid() checked) */
	old = relation_open(orig, NoLock);
	if (RELKIND_HAS_TABLE_AM(old->rd_rel->relkind))
		table_relation_estimate_size(old, NULL, &pages, &tuples, &allvisfrac);
	relation_close(old, NoLock);
	cx_progress_phase(CX_PHASE_WRITING, (int64) Max(tuples, 0));
	if (!counted)
		pgstat_progress_update_param(CX_PROGRESS_DONE, -1);
	cx_progress_rewrite_relid = RelationGetRelid(newrel);
}

/*
 * A relation just created (OAT_POST_CREATE), with its pg_class row: the
 * transient relation of a rewrite into compressx (rows counted as they are
 * inserted), or the heap that ALTER TABLE .. SET ACCESS METHOD heap (or
 * another rewrite into heap) fills from a compressx table.  The latter's
 * rows go through heap's callbacks, not compressx's, so only the phase is
 * reported (done: -1, shown as NULL).
 */
static void
rewrite_created(Oid relid)
{
	Relation	rel;
	Oid			orig;

	if (!OidIsValid(MyDatabaseId) || MyBEEntry == NULL || refused > 0 ||
		MyBEEntry->st_progress_command != PROGRESS_COMMAND_INVALID)
		return;
	rel = RelationIdGetRelation(relid);
	if (rel == NULL)
		return;
	if (strncmp(RelationGetRelationName(rel), "pg_temp_", 8) == 0 &&
		cx_is_compressx_relation(rel) &&
		(orig = cx_settings_relid(rel)) != relid)
		rewrite_begin(rel, orig, true);
	else if (strncmp(RelationGetRelationName(rel), "pg_temp_", 8) == 0 &&
			 rel->rd_rel->relam == HEAP_TABLE_AM_OID &&
			 (orig = cx_settings_relid(rel)) != relid)
	{
		/* AccessExclusiveLock on orig held (cx_settings_relid() checked) */
		Relation	old = RelationIdGetRelation(orig);

		if (old != NULL && cx_is_compressx_relation(old))
			rewrite_begin(rel, orig, false);
		if (old != NULL)
			RelationClose(old);
	}
	RelationClose(rel);
}

void
cx_progress_rewrite_rows(int64 n)
{
	if (refused > 0)
		return;
	if (reporting != CX_OP_REWRITE)
	{
		cx_progress_rewrite_relid = InvalidOid;
		return;
	}
	cx_progress_advance(n);
}

/* The transient relation dropped by finish_heap_swap(): the rewrite ends. */
static void
progress_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					   int subId, void *arg)
{
	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 &&
		OidIsValid(cx_progress_rewrite_relid) && objectId == cx_progress_rewrite_relid)
		cx_progress_end();
	else if (access == OAT_POST_CREATE && classId == RelationRelationId && subId == 0)
		rewrite_created(objectId);
	if (prev_object_access_hook)
		(*prev_object_access_hook) (access, classId, objectId, subId, arg);
}

static void
progress_xact_callback(XactEvent event, void *arg)
{
	/* core has ended the command by now if the transaction failed */
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT)
	{
		if (reporting != 0 && still_reporting() && event != XACT_EVENT_ABORT &&
			event != XACT_EVENT_PARALLEL_ABORT)
			pgstat_progress_end_command();
		reporting = 0;
		refused = 0;
		cx_progress_rewrite_relid = InvalidOid;
	}
}

/* AbortSubTransaction() has ended this backend's report, if any */
static void
progress_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		reporting = 0;
		refused = 0;
		cx_progress_rewrite_relid = InvalidOid;
	}
}

void
cx_progress_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = progress_object_access;
	RegisterXactCallback(progress_xact_callback, NULL);
	RegisterSubXactCallback(progress_subxact_callback, NULL);
}
