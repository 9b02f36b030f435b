/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  compressx.verify(): read and decode every stored value of a table.
 *
 * For each visible row, every variable-length value is checked as it is
 * stored: compressx's own format (header, sizes, out-of-line reference,
 * zstd frame and checksum), core's pglz and lz4 (inline and in TOAST) and
 * plain TOAST values are decoded completely.  Each value is decoded in a
 * subtransaction, so a damaged value is reported (ctid, column, problem)
 * instead of ending the scan; nothing is written.
 *
 * Locking: AccessShareLock on the table (and each partition).  Needs
 * SELECT on the table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "format.h"
#include "inspect.h"
#include "slot.h"

PG_FUNCTION_INFO_V1(compressx_verify);

/*
 * Decode one stored value completely; on failure return the error message
 * (palloc'd in the caller's context), else NULL.  Inline uncompressed
 * values have nothing to decode: no subtransaction for them.
 */
static char *
check_value(Relation rel, const char *attname, struct varlena *stored)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	char	   *problem = NULL;

	if (!VARATT_IS_EXTERNAL(stored) && !VARATT_IS_COMPRESSED(stored))
		return NULL;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		MemoryContext tmp = AllocSetContextCreate(oldcxt, "compressx verify value",
												  ALLOCSET_DEFAULT_SIZES);

		MemoryContextSwitchTo(tmp);
		if (cx_is_own_datum(stored))
			(void) cx_decode(stored, RelationGetRelid(rel), attname);
		else
			(void) detoast_attr(stored);
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
		problem = edata->detail ?
			psprintf("%s: %s", edata->message, edata->detail) : pstrdup(edata->message);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return problem;
}

static void
verify_leaf(Relation rel, ReturnSetInfo *rsinfo, int64 *rows)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext,
												 "compressx verify row",
												 ALLOCSET_DEFAULT_SIZES);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		/* stored forms: a compressx slot's child, or heap's own slot */
		TupleTableSlot *stored = cx_slot_stored(slot);
		MemoryContext oldcxt;

		CHECK_FOR_INTERRUPTS();
		(*rows)++;
		slot_getallattrs(stored);
		oldcxt = MemoryContextSwitchTo(rowcxt);
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);
			char	   *problem;

			if (att->attisdropped || att->attlen != -1 || stored->tts_isnull[i])
				continue;
			problem = check_value(rel, NameStr(att->attname),
								  (struct varlena *) DatumGetPointer(stored->tts_values[i]));
			if (problem)
			{
				Datum		values[4];
				bool		nulls[4] = {0};

				values[0] = ObjectIdGetDatum(RelationGetRelid(rel));
				values[1] = PointerGetDatum(&stored->tts_tid);
				values[2] = NameGetDatum(&att->attname);
				values[3] = CStringGetTextDatum(problem);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextDelete(rowcxt);
}

/*
 * compressx.verify(rel regclass)
 *	  RETURNS TABLE (relation regclass, ctid tid, column_name name, problem text)
 *
 * One row per value that cannot be read back; a NOTICE gives the number
 * of rows checked.  An empty result means every value decoded.
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

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	InitMaterializedSRF(fcinfo, 0);

	rel = cx_open_readable_table(relid, &leaves);
	foreach(lc, leaves)
	{
		Relation	leaf = table_open(lfirst_oid(lc), NoLock);

		verify_leaf(leaf, rsinfo, &rows);
		table_close(leaf, NoLock);
	}
	relation_close(rel, NoLock);
	ereport(NOTICE,
			(errmsg("compressx.verify checked " INT64_FORMAT " rows of \"%s\"",
					rows, get_rel_name(relid))));
	return (Datum) 0;
}
