/*-------------------------------------------------------------------------
 *
 * move.c
 *	  recompress_online moving a table between heap and compressx: the
 *	  settings heap reads, the waits for writers and old snapshots, the
 *	  change of relam (doc/design/online.md).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/toast_compression.h"
#include "access/subtrans.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_am_d.h"
#include "common/hashfn.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "am/am.h"
#include "catalog/attcompression.h"
#include "online/move.h"

/*
 * Moving to heap: lock the table in mode (queued at most max_lock_wait,
 * reported as phase), open it checked, and resolve its columns' settings
 * and every compressible column (all are targets of a move to heap).
 */
static Relation
lock_and_resolve(OnlineRun *run, LOCKMODE mode, int phase,
				 CxColumnSetting **settings, TargetColumn **targets, int *ntargets)
{
	Relation	rel;

	cx_online_progress(run, CX_ONLINE_PHASE, phase);
	cx_online_lock_exclusive(run, run->relid, mode, phase);
	rel = cx_online_open_checked(run);
	*settings = palloc(sizeof(CxColumnSetting) * Max(RelationGetDescr(rel)->natts, 1));
	cx_resolve_settings(rel, *settings);
	*targets = cx_recompress_resolve_targets(rel, NULL, cx_recompress_heap_method(&run->req),
											 ntargets);
	return rel;
}

/*
 * Moving to heap, step 1: every compressible column gets a setting of its
 * own (a row of compressx.column_settings) that heap can read: the codec
 * asked for, else the column's current codec when it is pglz, lz4 or none,
 * else the method heap would use for it (attcompression, else
 * default_toast_compression).  Own rows, so that no session's
 * compressx.default_codec can bring zstd back.  Under SHARE UPDATE
 * EXCLUSIVE, as set_column_codec.
 */
void
cx_online_set_target_for_heap(OnlineRun *run)
{
	Relation	rel;
	TargetColumn *targets;
	int			ntargets;
	CxColumnSetting *settings;

	rel = lock_and_resolve(run, ShareUpdateExclusiveLock, CX_ONLINE_PHASE_TARGET,
						   &settings, &targets, &ntargets);
	for (int t = 0; t < ntargets; t++)
	{
		AttrNumber	attnum = get_attnum(run->relid, targets[t].name);
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
		const CxColumnSetting *cur = &settings[attnum - 1];
		const CxCodec *codec = run->req.codec;
		bool		level_isnull = run->req.level_isnull;
		int			level = run->req.level;

		if (codec == NULL && cur->codec->id != CX_CODEC_ZSTD)
		{
			codec = cur->codec;
			level_isnull = false;
			level = cur->level;
		}
		else if (codec == NULL)
		{
			char		m = CompressionMethodIsValid(att->attcompression) ?
				att->attcompression : default_toast_compression;

			codec = cx_codec_by_id(m == TOAST_LZ4_COMPRESSION ? CX_CODEC_LZ4 : CX_CODEC_PGLZ);
			level_isnull = true;
		}
		cx_store_column_setting(run->relid, targets[t].name, attnum, codec,
								level_isnull, level, true, 0, true);
	}
	table_close(rel, NoLock);
}

/*
 * A mark of the rows of compressx.column_settings for relid (their row
 * versions): any change to them since changes the mark.
 */
uint64
cx_online_settings_mark(Oid relid)
{
	Oid			setid = cx_extension_table_oid("column_settings");
	Relation	srel;
	Snapshot	snap;
	ScanKeyData key;
	TableScanDesc scan;
	HeapTuple	tup;
	uint64		mark = 0;

	if (!OidIsValid(setid))
		return 0;
	srel = table_open(setid, AccessShareLock);
	snap = RegisterSnapshot(GetLatestSnapshot());
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = cx_table_beginscan(srel, snap, 1, &key);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		uint64		v[2];

		v[0] = HeapTupleHeaderGetXmin(tup->t_data);
		v[1] = ((uint64) ItemPointerGetBlockNumber(&tup->t_self) << 16) |
			ItemPointerGetOffsetNumber(&tup->t_self);
		mark += hash_bytes_extended((const unsigned char *) v, sizeof(v), 0x4358);
	}
	table_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(srel, AccessShareLock);
	return mark;
}

/*
 * Moving to heap: wait until every transaction that held a lock on the table
 * conflicting with SHARE (every writer) when the settings changed has ended.
 * Writers after that read the new settings when they lock the table, so
 * they write no compressx value: new values follow the settings, and an
 * UPDATE re-encodes an unchanged zstd value once its column is no longer
 * zstd (am_write.c).  The wait holds no lock on the table: nobody queues
 * behind it.
 */
void
cx_online_wait_for_writers(OnlineRun *run)
{
	LOCKTAG		tag;
	VirtualTransactionId *holders;
	VirtualTransactionId *others;
	int			nothers;

	cx_online_progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_WRITERS);
	SET_LOCKTAG_RELATION(tag, MyDatabaseId, run->relid);

	/*
	 * As WaitForLockers(ShareLock), but not for a (auto)vacuum, which holds
	 * a lock conflicting with SHARE and writes no row: a vacuum of a large
	 * table may take hours.  The holders list ends with an invalid one.
	 */
	holders = GetLockConflicts(&tag, ShareLock, NULL);
	others = GetCurrentVirtualXIDs(InvalidTransactionId, false, false,
								   PROC_IS_AUTOVACUUM | PROC_IN_VACUUM, &nothers);
	for (; VirtualTransactionIdIsValid(*holders); holders++)
	{
		for (int i = 0; i < nothers; i++)
		{
			if (VirtualTransactionIdEquals(*holders, others[i]))
			{
				(void) VirtualXactLock(*holders, true);
				break;
			}
		}
	}
	pfree(others);
}

/*
 * Moving to heap, after a pass that found compressx values only in row
 * versions its snapshot does not see (being inserted, or replaced but still
 * visible to older snapshots): wait for every transaction of this database
 * that has a snapshot now to end, as CREATE INDEX CONCURRENTLY waits for
 * old snapshots.  Then those versions are either visible to all or dead,
 * and the next pass rewrites or skips them.  Holds no table lock.
 */
void
cx_online_wait_for_old_snapshots(OnlineRun *run)
{
	int			n;
	VirtualTransactionId *vxids;
	Snapshot	snap;
	MemoryContext oldcxt;

	cx_online_report(run, CX_ONLINE_PHASE_OLD);

	/* first what has committed now, then who has a snapshot now */
	snap = GetLatestSnapshot();
	oldcxt = MemoryContextSwitchTo(run->cxt);
	if (run->waited)
	{
		pfree(run->waited->xip);
		pfree(run->waited->subxip);
		pfree(run->waited);
	}
	run->waited = palloc(sizeof(SnapshotData));
	memcpy(run->waited, snap, sizeof(SnapshotData));
	run->waited->xip = palloc(sizeof(TransactionId) * Max(snap->xcnt, 1));
	memcpy(run->waited->xip, snap->xip, sizeof(TransactionId) * snap->xcnt);
	run->waited->subxip = palloc(sizeof(TransactionId) * Max(snap->subxcnt, 1));
	memcpy(run->waited->subxip, snap->subxip, sizeof(TransactionId) * snap->subxcnt);
	run->waited->copied = true;
	run->waited->active_count = run->waited->regd_count = 0;
	MemoryContextSwitchTo(oldcxt);

	vxids = GetCurrentVirtualXIDs(ReadNextTransactionId(), true, false,
								  PROC_IS_AUTOVACUUM | PROC_IN_VACUUM, &n);
	for (int i = 0; i < n; i++)
	{
		if (cx_online_wait_budget_ms < 0)
			(void) VirtualXactLock(vxids[i], true);
		else
			while (!VirtualXactLock(vxids[i], false))
				cx_online_nap(100);	/* counts against the budget */
	}
	pfree(vxids);

	/*
	 * Nobody to wait for: the horizon is held by something without a
	 * transaction here (a replication slot, a standby's feedback).  The
	 * next pass comes after a nap.
	 */
	if (n == 0)
		cx_online_nap(1000);
}

/*
 * Point relid at access method amoid: pg_class.relam and its dependency,
 * as ALTER TABLE .. SET ACCESS METHOD leaves them, without a rewrite (the
 * stored rows suit both: see move_to_compressx and move_to_heap).  The
 * caller holds ACCESS EXCLUSIVE, so no statement spans the change; the
 * update invalidates every backend's relcache entry.
 */
static void
set_relam(Oid relid, Oid amoid)
{
	Relation	classrel = table_open(RelationRelationId, RowExclusiveLock);
	HeapTuple	tup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(relid));
	Form_pg_class form;
	Oid			oldam;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	form = (Form_pg_class) GETSTRUCT(tup);
	oldam = form->relam;
	form->relam = amoid;
	CatalogTupleUpdate(classrel, &tup->t_self, tup);
	if (changeDependencyFor(RelationRelationId, relid, AccessMethodRelationId,
							oldam, amoid) != 1)
		elog(ERROR, "failed to change access method dependency for relation \"%s\"",
			 get_rel_name(relid));
	InvokeObjectPostAlterHook(RelationRelationId, relid, 0);
	heap_freetuple(tup);
	table_close(classrel, RowExclusiveLock);
	CommandCounterIncrement();
}

/*
 * heap -> compressx, before any pass: compressx reads every value heap
 * stores (core's formats), so only relam changes, under ACCESS EXCLUSIVE
 * (queued at most max_lock_wait, retried), and the columns' COMPRESSION
 * becomes the mirror of their settings (catalog/attcompression.c: a heap
 * table's COMPRESSION is not kept).  The passes that follow bring the values
 * to the settings, else to compressx.default_codec.
 */
void
cx_online_move_to_compressx(OnlineRun *run)
{
	Relation	rel;

	cx_online_progress(run, CX_ONLINE_PHASE, CX_ONLINE_PHASE_AM);
	cx_online_lock_exclusive(run, run->relid, AccessExclusiveLock, CX_ONLINE_PHASE_AM);
	rel = cx_online_open_checked(run);
	table_close(rel, NoLock);
	set_relam(run->relid, run->target_am);
	/* heap's COMPRESSION is not kept: attcompression mirrors the settings */
	if (cx_attcompression_moved_in(run->relid))
		CommandCounterIncrement();
	run->is_cx = true;
	run->move = CX_MOVE_NONE;
}

/*
 * compressx -> heap, after a pass that found no compressx value in any row
 * version still visible to anyone, begun after cx_online_wait_for_writers(): from
 * then on no writer stores one (see there), so the table holds none.
 * Under ACCESS EXCLUSIVE, checks the settings are those the pass ran with
 * (each column its own, none zstd, none changed since: set_column_codec
 * meanwhile would void the proof), sets attcompression to the codec asked
 * for, and changes relam.  Returns false, changing nothing, when the
 * settings changed: the caller starts over.
 */
bool
cx_online_move_to_heap(OnlineRun *run, uint64 mark)
{
	Relation	rel;
	TargetColumn *targets;
	int			ntargets;
	CxColumnSetting *settings;
	bool		ok;

	rel = lock_and_resolve(run, AccessExclusiveLock, CX_ONLINE_PHASE_AM,
						   &settings, &targets, &ntargets);
	ok = cx_online_settings_mark(run->relid) == mark;
	for (int t = 0; ok && t < ntargets; t++)
	{
		const CxColumnSetting *cs = &settings[get_attnum(run->relid, targets[t].name) - 1];

		ok = cs->explicit_setting && cs->codec->id != CX_CODEC_ZSTD && cs->dict_id == 0;
	}
	table_close(rel, NoLock);
	if (!ok)
	{
		run->retries++;
		return false;
	}
	if (run->req.codec != NULL)
		cx_set_column_compression(run->relid, targets, ntargets);
	set_relam(run->relid, HEAP_TABLE_AM_OID);
	run->is_cx = false;
	run->move = CX_MOVE_NONE;
	return true;
}

/*
 * Whether xid (a transaction or subtransaction) may have been running when
 * snapshot waited was taken, or began after it: true when in doubt.
 *
 * As XidInMVCCSnapshot(), but waited is a copy from an earlier transaction
 * that nothing registers: its xmin is not held, and pg_subtrans may be
 * asked only about xids this transaction's xmin (TransactionXmin) does not
 * pass (an assertion of SubTransGetParent; older entries may be gone, and
 * SubTransGetTopmostTransaction() stops at the first parent before
 * TransactionXmin, which waited's xip may still name).  So when waited
 * overflowed (some transaction had more than 64 subtransactions, and its
 * subxip lists none), a subtransaction's parent is looked up only where
 * that is allowed, and an xid whose top-level transaction cannot be found
 * counts as running.
 */
static bool
xid_maybe_in_waited(Snapshot waited, TransactionId xid)
{
	if (TransactionIdPrecedes(xid, waited->xmin))
		return false;			/* its top-level xid is older still */
	if (TransactionIdFollowsOrEquals(xid, waited->xmax))
		return true;
	if (!waited->suboverflowed)
	{
		for (int i = 0; i < waited->subxcnt; i++)
		{
			if (TransactionIdEquals(xid, waited->subxip[i]))
				return true;
		}
	}
	else
	{
		if (TransactionIdPrecedes(xid, TransactionXmin))
			return true;		/* pg_subtrans may not be asked */
		xid = SubTransGetTopmostTransaction(xid);

		/*
		 * Below TransactionXmin it may be a parent where the walk stopped,
		 * not the top-level transaction, which is then older still.
		 */
		if (TransactionIdPrecedes(xid, waited->xmin))
			return false;
		if (TransactionIdPrecedes(xid, TransactionXmin))
			return true;
	}
	for (int i = 0; i < waited->xcnt; i++)
	{
		if (TransactionIdEquals(xid, waited->xip[i]))
			return true;
	}
	return false;
}

/*
 * Moving to heap: whether the recently dead row version tuple is visible
 * to no snapshot: its deleter committed before the last wait for old
 * snapshots began, and every snapshot of that time has ended since.
 * (HeapTupleSatisfiesVacuum's horizon is coarser: a transaction that
 * merely has an xid, with no snapshot, holds it back.)  In doubt, it may
 * be visible: the pass counts it, and waits for old snapshots again.
 */
bool
cx_online_gone_for_all(OnlineRun *run, HeapTuple tuple)
{
	TransactionId xmax = HeapTupleHeaderGetUpdateXid(tuple->t_data);

	return run->waited != NULL && TransactionIdIsNormal(xmax) &&
		!xid_maybe_in_waited(run->waited, xmax) && TransactionIdDidCommit(xmax);
}
