/*-------------------------------------------------------------------------
 *
 * dict_dropped.c
 *	  Dictionaries of dropped tables (and retired automatic dictionaries),
 *	  kept while a logical replication slot may still decode a value that
 *	  names them; compressx.purge_dropped_dictionaries().
 *
 * Logical decoding (logical/decoder.c) reads a dictionary with the historic
 * snapshot of the decoded change.  compressx.dictionaries is a
 * user_catalog_table, so VACUUM keeps a deleted row while a slot's
 * catalog_xmin holds it back; but the dictionary's bytes are mostly out of
 * line, in the table's TOAST relation, which is not a catalog for VACUUM:
 * it is cleaned with the data horizon, and a slot that had yet to decode
 * the table's last changes failed for good on the missing chunks.  Hence a
 * dictionary that a slot may still need is not deleted but marked:
 *
 *	- relid is set to 0 (no relation: nothing that looks dictionaries up by
 *	  table sees it, even when the dropped table's OID is reused) and
 *	  dropped to the id of the transaction that dropped the table (xid8, so
 *	  that comparisons survive wraparound).  The UPDATE keeps the row's
 *	  TOAST value (heap's toaster reuses an unchanged out-of-line value),
 *	  and the row's new version keeps it for as long as it stays;
 *	- the row is deleted once every slot's catalog_xmin has passed the
 *	  dropping transaction: every historic snapshot a slot can still build
 *	  has an xmin at least its catalog_xmin, so it sees the drop as
 *	  committed and decodes no change of the dropped table made before it
 *	  (DROP TABLE's lock made every writer of the table commit first).
 *	  The slots' catalog_xmin is the server's (ProcArray): logical slots of
 *	  every database, and physical slots carrying a standby's (hot standby
 *	  feedback), which is conservative and costs no catalog access.
 *
 * When no slot has a catalog_xmin, no decoding can need the dictionary: it
 * is deleted at once, as before 0.5.0 (a slot created later decodes only
 * transactions that commit after it is consistent, after the drop).
 *
 * The purge runs as a table is dropped (settings_cleanup.c: the object
 * access hook and the sql_drop event trigger, at most once per transaction,
 * and only for the drop of a table or materialized view: any other DROP
 * does no purge work), after automatic-dictionary pruning, and through
 * compressx.purge_dropped_dictionaries().  Not at VACUUM time: VACUUM's
 * transaction runs with PROC_IN_VACUUM, whose xid other backends ignore,
 * so it must not write.
 *
 * The purge never waits for a row another session holds: any role's DROP
 * TABLE purges, in a transaction that may stay open, and a wait would make
 * every other role's DROP TABLE wait for it while holding its ACCESS
 * EXCLUSIVE lock.  A row another transaction is deleting is skipped and
 * stays marked: if that transaction aborts, the next purge (a later drop,
 * the worker's pruning, purge_dropped_dictionaries()) deletes it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "tcop/utility.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/xid8.h"

#include "compat.h"
#include "catalog/relation.h"
#include "catalog/dict_dropped.h"

PG_FUNCTION_INFO_V1(compressx_purge_dropped_dictionaries);

#define Anum_dict_relid		2

/*
 * The oldest catalog_xmin of the server's replication slots as a full
 * transaction id; false when no slot has one.
 */
static bool
slots_catalog_xmin(FullTransactionId *result)
{
	TransactionId xmin;
	TransactionId catalog_xmin;
	FullTransactionId next;

	ProcArrayGetReplicationSlotXmin(&xmin, &catalog_xmin);
	if (!TransactionIdIsNormal(catalog_xmin))
		return false;
	/* catalog_xmin is at most 2^31 transactions behind the next xid */
	next = ReadNextFullTransactionId();
	*result = FullTransactionIdFromU64(U64FromFullTransactionId(next) -
									   (uint32) (XidFromFullTransactionId(next) - catalog_xmin));
	return true;
}

bool
cx_dict_slots_may_decode(void)
{
	FullTransactionId horizon;

	return slots_catalog_xmin(&horizon);
}

bool
cx_dict_has_dropped_column(Oid dicts_oid)
{
	return OidIsValid(dicts_oid) && get_attnum(dicts_oid, "dropped") > 0;
}

int
cx_dict_mark_dropped(Oid dicts_oid, Oid relid, AttrNumber keep_attno)
{
	Relation	rel = table_open(dicts_oid, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	AttrNumber	dropped_attno = get_attnum(dicts_oid, "dropped");
	Datum	   *values = palloc0(sizeof(Datum) * desc->natts);
	bool	   *nulls = palloc0(sizeof(bool) * desc->natts);
	bool	   *replace = palloc0(sizeof(bool) * desc->natts);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	int			marked = 0;

	if (dropped_attno <= 0)
		elog(ERROR, "compressx.dictionaries has no column \"dropped\"");
	values[Anum_dict_relid - 1] = ObjectIdGetDatum(InvalidOid);
	replace[Anum_dict_relid - 1] = true;
	values[dropped_attno - 1] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	replace[dropped_attno - 1] = true;

	ScanKeyInit(&key, Anum_dict_relid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	/* no index: DROP EXTENSION may have dropped it already */
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		HeapTuple	newtup;

		if (keep_attno > 0)
		{
			bool		isnull;
			Datum		keep = heap_getattr(tup, keep_attno, desc, &isnull);

			if (!isnull && DatumGetBool(keep))
				continue;
		}
		/* keeps the out-of-line dictionary bytes: the same TOAST value */
		newtup = heap_modify_tuple(tup, desc, values, nulls, replace);
		CatalogTupleUpdate(rel, &tup->t_self, newtup);
		heap_freetuple(newtup);
		marked++;
	}
	systable_endscan(scan);
	table_close(rel, RowExclusiveLock);
	return marked;
}

int
cx_dict_purge_dropped(Oid dicts_oid)
{
	AttrNumber	dropped_attno;
	FullTransactionId horizon;
	bool		have_horizon;
	Relation	rel;
	TupleDesc	desc;
	int			deleted = 0;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	dropped_attno = get_attnum(dicts_oid, "dropped");
	if (dropped_attno <= 0)
		return 0;
	have_horizon = slots_catalog_xmin(&horizon);

	rel = table_open(dicts_oid, RowExclusiveLock);
	desc = RelationGetDescr(rel);
	ScanKeyInit(&key, Anum_dict_relid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(InvalidOid));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, dropped_attno, desc, &isnull);
		TM_Result	result;
		TM_FailureData tmfd;

		if (isnull)
			continue;
		if (have_horizon &&
			!FullTransactionIdPrecedes(DatumGetFullTransactionId(d), horizon))
			continue;
		/*
		 * Never wait: another session's purge may be deleting the row in a
		 * transaction that stays open (TM_BeingModified), and this runs
		 * inside DROP TABLE, holding its locks.  The row is left marked:
		 * when that transaction commits it is gone, when it aborts the next
		 * purge deletes it.  Nothing else changes a dropped dictionary.
		 */
		result = cx_heap_delete(rel, &tup->t_self, GetCurrentCommandId(true),
								InvalidSnapshot, false, &tmfd);
		if (result == TM_Ok)
			deleted++;
		else if (result != TM_BeingModified && result != TM_Deleted &&
				 result != TM_Updated && result != TM_SelfModified)
			elog(ERROR, "unexpected heap_delete status %u on %s",
				 result, RelationGetRelationName(rel));
	}
	systable_endscan(scan);
	table_close(rel, RowExclusiveLock);
	return deleted;
}

/*
 * compressx.purge_dropped_dictionaries(): delete the dictionaries of
 * dropped tables that no replication slot may need any more (see the head
 * comment); returns how many.
 */
Datum
compressx_purge_dropped_dictionaries(PG_FUNCTION_ARGS)
{
	Oid			dicts_oid = cx_extension_table_oid("dictionaries");
	int			deleted;

	PreventCommandIfReadOnly("compressx.purge_dropped_dictionaries()");
	PreventCommandDuringRecovery("compressx.purge_dropped_dictionaries()");
	if (!OidIsValid(dicts_oid))
		PG_RETURN_INT32(0);
	deleted = cx_dict_purge_dropped(dicts_oid);
	if (deleted > 0)
		CacheInvalidateRelcacheByRelid(dicts_oid);
	PG_RETURN_INT32(deleted);
}
