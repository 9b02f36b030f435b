/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  compressx.verify(): read and decode every stored value of a table.
 *
 * For each visible row, every variable-length value is checked as it is
 * stored: compressx's own format (header, sizes, out-of-line reference,
 * zstd frame and checksum), core's pglz and lz4 (inline and in TOAST) and
 * plain TOAST values are decoded completely.  Values with compressx's
 * method bits 2 that compressx cannot attribute to itself (format.h) are
 * reported as such, apart from corrupt ones.  A row's values are decoded
 * in one subtransaction, and each in its own only when that fails, so a
 * damaged value is reported (ctid, column, problem) instead of ending the
 * scan.  Then the TOAST table is checked for orphans: values no version of
 * any row references (reported with the ctid of one of their chunks and no
 * column).  Nothing is written.
 *
 * Locking: AccessShareLock on the table (and each partition) and its TOAST
 * table.  Needs SELECT on the table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "storage/format.h"
#include "sql/inspect.h"
#include "am/slot.h"
#include "citus/fanout.h"

PG_FUNCTION_INFO_V1(compressx_verify);

/* Whether a stored value has anything to decode (compressed or TOAST). */
static inline bool
needs_decoding(Datum value)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);

	return VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v);
}

/*
 * Decode completely the stored values of the columns in attnos (indexes
 * into the row's values), in one subtransaction; on failure return the
 * error message (palloc'd in the caller's context), else NULL.
 */
static char *
check_values(Relation rel, TupleTableSlot *stored, const int *attnos, int n)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	TupleDesc	desc = RelationGetDescr(rel);
	char	   *problem = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		MemoryContext tmp = AllocSetContextCreate(oldcxt, "compressx verify value",
												  ALLOCSET_DEFAULT_SIZES);

		MemoryContextSwitchTo(tmp);
		for (int k = 0; k < n; k++)
		{
			struct varlena *v = (struct varlena *) DatumGetPointer(stored->tts_values[attnos[k]]);

			if (cx_is_own_datum(v))
				(void) cx_decode(v, RelationGetRelid(rel),
								 NameStr(TupleDescAttr(desc, attnos[k])->attname));
			else
				(void) detoast_attr(v);
			MemoryContextReset(tmp);
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextDelete(tmp);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		if (n == 1 && cx_is_own_datum(DatumGetPointer(stored->tts_values[attnos[0]])) &&
			cx_decode_unattributable())
			problem = psprintf("method-2 value not written by compressx (unattributable): %s",
							   edata->detail);
		else
			problem = edata->detail ?
				psprintf("%s: %s", edata->message, edata->detail) : pstrdup(edata->message);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return problem;
}

static void
report(ReturnSetInfo *rsinfo, Relation rel, ItemPointer tid,
	   const char *attname, const char *problem)
{
	Datum		values[4];
	bool		nulls[4] = {0};

	NameData	name;

	values[0] = ObjectIdGetDatum(RelationGetRelid(rel));
	values[1] = PointerGetDatum(tid);
	nulls[2] = attname == NULL;
	if (attname)
	{
		namestrcpy(&name, attname);
		values[2] = NameGetDatum(&name);
	}
	values[3] = CStringGetTextDatum(problem);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * Check one row: all its values in one subtransaction, and only when that
 * fails each value in its own, to name the damaged ones.
 */
static void
check_row(Relation rel, TupleTableSlot *stored, int *attnos, ReturnSetInfo *rsinfo)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			n = 0;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && att->attlen == -1 && !stored->tts_isnull[i] &&
			needs_decoding(stored->tts_values[i]))
			attnos[n++] = i;
	}
	if (n == 0 || check_values(rel, stored, attnos, n) == NULL)
		return;
	for (int k = 0; k < n; k++)
	{
		char	   *problem = check_values(rel, stored, &attnos[k], 1);

		if (problem)
			report(rsinfo, rel, &stored->tts_tid,
				   NameStr(TupleDescAttr(desc, attnos[k])->attname), problem);
	}
}

/*
 * The TOAST value ids every stored value of rel's tuple references (core's
 * TOAST pointers and compressx's references), added to ids.
 */
static void
collect_refs(Relation rel, TupleTableSlot *stored, HTAB *ids)
{
	TupleDesc	desc = stored->tts_tupleDescriptor;

	slot_getallattrs(stored);
	for (int i = 0; i < desc->natts; i++)
	{
		struct varlena *v;
		Oid			valueid;

		if (stored->tts_isnull[i] || TupleDescAttr(desc, i)->attlen != -1)
			continue;
		v = (struct varlena *) DatumGetPointer(stored->tts_values[i]);
		if (VARATT_IS_EXTERNAL_ONDISK(v))
		{
			struct varatt_external ptr;

			VARATT_EXTERNAL_GET_POINTER(ptr, v);
			valueid = ptr.va_valueid;
		}
		else if (!cx_external_value_id(v, RelationGetRelid(rel), &valueid))
			continue;
		(void) hash_search(ids, &valueid, HASH_ENTER, NULL);
	}
}

typedef struct OrphanEntry
{
	Oid			valueid;		/* hash key */
	int64		chunks;
	int64		bytes;
	ItemPointerData first;		/* ctid of a chunk, for the report */
} OrphanEntry;

/*
 * Report the TOAST values of rel that no version of any row references:
 * space that nothing will ever free but a rewrite (VACUUM FULL, CLUSTER,
 * recompress_table copy only referenced values).  The TOAST table is read
 * with a snapshot taken before the table is scanned, and every row version
 * not yet dead to all is scanned: a value visible to that snapshot belongs
 * to a row version committed before it, which the scan sees.
 */
static void
report_orphans(Relation rel, ReturnSetInfo *rsinfo, int64 *orphans)
{
	Oid			toastoid = rel->rd_rel->reltoastrelid;
	Snapshot	snap;
	TransactionId oldest;
	HASHCTL		ctl;
	HTAB	   *refs;
	HTAB	   *found;
	TupleTableSlot *slot;
	TableScanDesc scan;
	Relation	toastrel;
	SysScanDesc tscan;
	HeapTuple	chunk;
	HASH_SEQ_STATUS status;
	OrphanEntry *e;

	if (!OidIsValid(toastoid))
		return;
	snap = RegisterSnapshot(GetLatestSnapshot());
	oldest = GetOldestNonRemovableTransactionId(rel);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(Oid);
	ctl.hcxt = CurrentMemoryContext;
	refs = hash_create("compressx referenced TOAST values", 1024, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	slot = table_slot_create(rel, NULL);
	scan = cx_table_beginscan(rel, SnapshotAny, 0, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		TupleTableSlot *stored = cx_slot_stored(slot);
		Buffer		buf = ((BufferHeapTupleTableSlot *) stored)->buffer;
		HeapTuple	tup = ExecFetchSlotHeapTuple(stored, false, NULL);
		HTSV_Result state;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		state = HeapTupleSatisfiesVacuum(tup, oldest, buf);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (state != HEAPTUPLE_DEAD)
			collect_refs(rel, stored, refs);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);

	ctl.entrysize = sizeof(OrphanEntry);
	found = hash_create("compressx orphan TOAST values", 64, &ctl,
						HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	toastrel = table_open(toastoid, AccessShareLock);
	tscan = systable_beginscan(toastrel, InvalidOid, false, snap, 0, NULL);
	while ((chunk = systable_getnext(tscan)) != NULL)
	{
		bool		isnull;
		Oid			valueid = DatumGetObjectId(heap_getattr(chunk, 1, RelationGetDescr(toastrel), &isnull));
		Datum		data = heap_getattr(chunk, 3, RelationGetDescr(toastrel), &isnull);
		bool		existed;

		CHECK_FOR_INTERRUPTS();
		if (hash_search(refs, &valueid, HASH_FIND, NULL) != NULL)
			continue;
		e = hash_search(found, &valueid, HASH_ENTER, &existed);
		if (!existed)
		{
			e->chunks = 0;
			e->bytes = 0;
			e->first = chunk->t_self;
		}
		e->chunks++;
		e->bytes += isnull ? 0 : toast_raw_datum_size(data) - VARHDRSZ;
	}
	systable_endscan(tscan);
	table_close(toastrel, AccessShareLock);
	UnregisterSnapshot(snap);

	hash_seq_init(&status, found);
	while ((e = hash_seq_search(&status)) != NULL)
	{
		(*orphans)++;
		report(rsinfo, rel, &e->first, NULL,
			   psprintf("TOAST value %u (" INT64_FORMAT " chunks, " INT64_FORMAT
						" bytes) is referenced by no row version; VACUUM FULL reclaims it",
						e->valueid, e->chunks, e->bytes));
	}
	hash_destroy(found);
	hash_destroy(refs);
}

static void
verify_leaf(Relation rel, ReturnSetInfo *rsinfo, int64 *rows, int64 *orphans)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TableScanDesc scan = cx_table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext,
												 "compressx verify row",
												 ALLOCSET_DEFAULT_SIZES);
	int		   *attnos = palloc(sizeof(int) * Max(desc->natts, 1));

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		/* stored forms: a compressx slot's child, or heap's own slot */
		TupleTableSlot *stored = cx_slot_stored(slot);
		MemoryContext oldcxt;

		CHECK_FOR_INTERRUPTS();
		(*rows)++;
		slot_getallattrs(stored);
		oldcxt = MemoryContextSwitchTo(rowcxt);
		check_row(rel, stored, attnos, rsinfo);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextDelete(rowcxt);
	pfree(attnos);
	report_orphans(rel, rsinfo, orphans);
}

/*
 * compressx.verify(rel regclass)
 *	  RETURNS TABLE (relation regclass, ctid tid, column_name name, problem text)
 *
 * One row per value that cannot be read back and per orphaned TOAST value;
 * a NOTICE gives the number of rows checked.  An empty result means every
 * value decoded and every TOAST value belongs to a row.
 */
Datum
compressx_verify(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	Relation	rel;
	List	   *leaves;
	ListCell   *lc;
	int64		rows = 0;
	int64		orphans = 0;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	InitMaterializedSRF(fcinfo, 0);

	rel = cx_open_readable_table(relid, &leaves);
	if (cx_citus_fan_out_srf(fcinfo, relid, "citus_verify"))
	{
		relation_close(rel, NoLock);
		return (Datum) 0;
	}
	foreach(lc, leaves)
	{
		Relation	leaf = table_open(lfirst_oid(lc), NoLock);

		verify_leaf(leaf, rsinfo, &rows, &orphans);
		table_close(leaf, NoLock);
	}
	relation_close(rel, NoLock);
	ereport(NOTICE,
			(errmsg("compressx.verify checked " INT64_FORMAT " rows of \"%s\"",
					rows, get_rel_name(relid))));
	return (Datum) 0;
}
