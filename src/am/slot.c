/*-------------------------------------------------------------------------
 *
 * slot.c
 *	  TupleTableSlotOps of compressx tables: a slot wrapping heap's.
 *
 * Heap's tuple-returning callbacks only store into BufferHeapTuple slots.
 * A compressx slot owns such a "child" slot: heap stores the stored tuple
 * there, and the compressx slot presents it to the executor, decoding
 * compressx-format values only for the columns actually requested
 * (getsomeattrs).  Queries that never read a compressed column never
 * decode it.  Core-format values (pglz, lz4, TOAST pointers) are passed
 * through untouched: core detoasts them lazily as for heap.
 *
 * For text-like types (not arrays, composites or domains over them, the
 * only core types with expanded forms of their own), a requested column
 * gets a read-only expanded-object placeholder instead of its decoded
 * value: functions that use the value flatten it (and so decode it), while
 * a query that merely passes over the column, or asks only its length,
 * decodes nothing.  Materializing flattens placeholders.  Other types are
 * decoded when requested.
 *
 * States: empty; child (child holds the stored tuple, tts_values[0..nvalid)
 * are decoded values or pointers into the buffer); own (tuple holds a
 * decoded copy owned by the slot, all values deformed from it); virtual
 * (values stored by the caller, as ExecStoreVirtualTuple does); own values
 * (a materialized virtual tuple: the slot's copies of the values, where a
 * placeholder stays a placeholder over a copy of its stored bytes, so that
 * materializing the new row of an UPDATE decodes nothing and the update
 * recognizes unchanged values by their stored bytes).
 *
 * When the descriptor is fixed (always, for slots made by table_slot_create)
 * the slot shares the child's value arrays: deforming the child fills them,
 * and only compressx-format values among the variable-length attributes are
 * replaced, so narrow scans cost what heap's do.
 *
 * A row with nothing to decode must cost what it costs on heap (issue 37):
 * the fetch wrappers are inline (slot.h) and skip forgetting the previous
 * row when it left nothing behind (no own tuple or values, no header,
 * nothing allocated in decode_cxt: placeholders allocate nothing);
 * getsomeattrs calls the child's own deforming callback and looks for
 * own-format values only among the attributes it newly deformed, the work
 * of presenting them out of line.  What remains over heap is one wrapper
 * call a row and one a deform (test/bench/PROFILES.md).
 *
 * Decoded values live in decode_cxt, reset whenever the slot changes.
 * Materializing forms a decoded heap tuple that keeps the stored tuple's
 * header (xmin, xmax, ctid, infomask), so system columns stay right.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "compat.h"
#include "storage/format.h"
#include "am/slot.h"

/* A value decoded on first use (read-only expanded object). */
typedef struct CxLazyValue
{
	ExpandedObjectHeader hdr;
	const struct varlena *stored;	/* in the child's pinned buffer */
	Oid			relid;
	const char *attname;
	bool		flattened;		/* flattened once already */
	struct varlena *decoded;	/* kept from the second flattening on */
	Size		flat_size;		/* checked flat size, or 0 before the check */
} CxLazyValue;

static Size
lazy_get_flat_size(ExpandedObjectHeader *eohptr)
{
	CxLazyValue *lv = (CxLazyValue *) eohptr;

	/* checked once: the caller allocates what this returns */
	if (lv->flat_size == 0)
		lv->flat_size = cx_flat_size(lv->stored, lv->relid, lv->attname);
	return lv->flat_size;
}

/*
 * The first flattening decodes straight into the caller's buffer (most
 * values are used once); a second one keeps a decoded copy for any more.
 */
static void
lazy_flatten_into(ExpandedObjectHeader *eohptr, void *result, Size allocated_size)
{
	CxLazyValue *lv = (CxLazyValue *) eohptr;

	if (allocated_size != lazy_get_flat_size(eohptr))
		elog(ERROR, "compressx value flattened into %zu bytes, expected %zu",
			 allocated_size, lazy_get_flat_size(eohptr));
	if (lv->decoded == NULL && !lv->flattened)
	{
		cx_decode_into(lv->stored, lv->relid, lv->attname, (struct varlena *) result);
		lv->flattened = true;
		return;
	}
	if (lv->decoded == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(lv->hdr.eoh_context);

		lv->decoded = cx_decode(lv->stored, lv->relid, lv->attname);
		MemoryContextSwitchTo(oldcxt);
	}
	memcpy(result, lv->decoded, allocated_size);
}

static const ExpandedObjectMethods lazy_methods = {
	lazy_get_flat_size,
	lazy_flatten_into
};

static MemoryContext get_decode_cxt(CxTupleTableSlot *cslot);

/*
 * Whether attribute i may carry a placeholder: its type (under domains)
 * must not be an array or a composite, whose functions expect their own
 * expanded forms.
 */
static bool
lazy_allowed(CxTupleTableSlot *cslot, int i)
{
	TupleTableSlot *slot = &cslot->base;

	if (cslot->lazy_ok == NULL)
		cslot->lazy_ok = MemoryContextAllocZero(slot->tts_mcxt,
												Max(slot->tts_tupleDescriptor->natts, 1));
	if (cslot->lazy_ok[i] == 0)
	{
		/*
		 * A catalog cache miss allocates and frees: not in the caller's
		 * context, which can be a sort's bump context (PostgreSQL 17+).
		 */
		MemoryContext oldcxt = MemoryContextSwitchTo(get_decode_cxt(cslot));
		Oid			base = getBaseType(TupleDescAttr(slot->tts_tupleDescriptor, i)->atttypid);

		cslot->lazy_ok[i] = (type_is_rowtype(base) ||
							 OidIsValid(get_element_type(base))) ? 'n' : 'y';
		MemoryContextSwitchTo(oldcxt);
	}
	return cslot->lazy_ok[i] == 'y';
}

/* (MemoryContextReset does nothing to a context untouched since its last.) */
static void
cx_reset_decoded(CxTupleTableSlot *cslot)
{
	if (cslot->decode_cxt)
		MemoryContextReset(cslot->decode_cxt);
}

/* Drop decoded values and the own tuple; leave the child to the caller. */
static void
forget_contents(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	cslot->child_valid = false;
	cslot->own_values = false;
	cslot->has_header = false;
	cslot->dirty = (cslot->child == NULL);
	cx_reset_decoded(cslot);
	if (cslot->tuple)
	{
		heap_freetuple(cslot->tuple);
		cslot->tuple = NULL;
	}
	slot->tts_flags &= ~TTS_FLAG_SHOULDFREE;
	slot->tts_flags |= TTS_FLAG_EMPTY;
	slot->tts_nvalid = 0;
}

static void
tts_cx_init(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	TupleDesc	desc = slot->tts_tupleDescriptor;

	cslot->child = NULL;
	cslot->shared = false;
	cslot->nvarlena = 0;
	cslot->varlena = NULL;
	cslot->first_varlena = 0;
	cslot->lazy_ok = NULL;
	cslot->child_valid = false;
	cslot->tuple = NULL;
	cslot->own_values = false;
	cslot->header = NULL;
	cslot->has_header = false;
	cslot->decode_cxt = NULL;
	cslot->for_analyze = false;
	cslot->lazy = NULL;
	cslot->dirty = true;		/* no child yet */

	if (desc != NULL && TTS_FIXED(slot))
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(slot->tts_mcxt);

		cslot->child = cx_make_tuple_table_slot(desc, &TTSOpsBufferHeapTuple);
		slot->tts_values = cslot->child->tts_values;
		slot->tts_isnull = cslot->child->tts_isnull;
		cslot->shared = true;
		cslot->dirty = false;
		cslot->varlena = palloc(sizeof(int) * Max(desc->natts, 1));
		for (int i = 0; i < desc->natts; i++)
			if (TupleDescAttr(desc, i)->attlen == -1 &&
				!TupleDescAttr(desc, i)->attisdropped)
				cslot->varlena[cslot->nvarlena++] = i;
		cslot->first_varlena = cslot->nvarlena > 0 ? cslot->varlena[0] : desc->natts;
		MemoryContextSwitchTo(oldcxt);
	}
}

static void
tts_cx_release(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	if (cslot->child)
		ExecDropSingleTupleTableSlot(cslot->child);
	cslot->child = NULL;
	if (cslot->decode_cxt)
		MemoryContextDelete(cslot->decode_cxt);
	cslot->decode_cxt = NULL;
}

static void
tts_cx_clear(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	if (cslot->child && !TTS_EMPTY(cslot->child))
		ExecClearTuple(cslot->child);
	forget_contents(slot);
	ItemPointerSetInvalid(&slot->tts_tid);
}

/*
 * The presented value of attribute i, whose stored value is own-format:
 * a placeholder decoded on first use, or the decoded value.
 */
static MemoryContext
get_decode_cxt(CxTupleTableSlot *cslot)
{
	/* what is allocated there makes cx_slot_fetch_ready() say no (slot.h) */
	if (cslot->decode_cxt == NULL)
		cslot->decode_cxt = AllocSetContextCreate(cslot->base.tts_mcxt,
												  "compressx slot values",
												  ALLOCSET_DEFAULT_SIZES);
	return cslot->decode_cxt;
}

/*
 * Make lv a placeholder over stored; a second flattening keeps its decoded
 * copy in the slot's decode_cxt.
 */
static Datum
init_placeholder(CxTupleTableSlot *cslot, CxLazyValue *lv,
				 const struct varlena *stored, Oid relid, const char *attname)
{
	EOH_init_header(&lv->hdr, &lazy_methods, get_decode_cxt(cslot));
	lv->stored = stored;
	lv->relid = relid;
	lv->attname = attname;
	lv->flattened = false;
	lv->decoded = NULL;
	lv->flat_size = 0;
	return EOHPGetRODatum(&lv->hdr);
}

static CxLazyValue *
as_placeholder(Datum value)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED(v))
		return NULL;
	eoh = DatumGetEOHP(value);
	return eoh->eoh_methods == &lazy_methods ? (CxLazyValue *) eoh : NULL;
}

const struct varlena *
cx_placeholder_stored(Datum value)
{
	CxLazyValue *lv = as_placeholder(value);

	return lv ? lv->stored : NULL;
}

/*
 * A placeholder costs no allocation: each attribute has one, reused from
 * row to row (a presented value lives until the slot changes, as pointers
 * into the buffer do), so scans that merely pass over compressed columns
 * stay cheap.
 */
static Datum
present_own_value(CxTupleTableSlot *cslot, int i, Datum stored)
{
	TupleTableSlot *slot = &cslot->base;
	const char *attname = NameStr(TupleDescAttr(slot->tts_tupleDescriptor, i)->attname);
	MemoryContext oldcxt;
	Datum		value;

	if (lazy_allowed(cslot, i))
	{
		if (cslot->lazy == NULL)
			cslot->lazy = MemoryContextAlloc(slot->tts_mcxt, sizeof(CxLazyValue) *
											 Max(slot->tts_tupleDescriptor->natts, 1));
		return init_placeholder(cslot, &cslot->lazy[i],
								(const struct varlena *) DatumGetPointer(stored),
								slot->tts_tableOid, attname);
	}
	oldcxt = MemoryContextSwitchTo(get_decode_cxt(cslot));
	value = PointerGetDatum(cx_decode((struct varlena *) DatumGetPointer(stored),
									  slot->tts_tableOid, attname));
	MemoryContextSwitchTo(oldcxt);
	return value;
}

/*
 * Present the own-format values among attributes [varlena[j], to) of a
 * shared slot.
 */
static pg_noinline void
present_own_values(CxTupleTableSlot *cslot, int j, int to)
{
	TupleTableSlot *slot = &cslot->base;

	for (; j < cslot->nvarlena && cslot->varlena[j] < to; j++)
	{
		int			i = cslot->varlena[j];

		if (!slot->tts_isnull[i] &&
			cx_is_own_datum(DatumGetPointer(slot->tts_values[i])))
			slot->tts_values[i] = present_own_value(cslot, i, slot->tts_values[i]);
	}
}

/*
 * tts_cx_getsomeattrs() for a slot that does not present the child's tuple
 * or does not share its arrays
 */
static pg_noinline void
getsomeattrs_other(CxTupleTableSlot *cslot, int natts)
{
	TupleTableSlot *slot = &cslot->base;
	TupleTableSlot *child = cslot->child;
	TupleDesc	desc = slot->tts_tupleDescriptor;

	if (!cslot->child_valid)
	{
		/* own and virtual tuples are always fully deformed */
		Assert(slot->tts_nvalid >= natts || cslot->tuple == NULL);
		return;
	}
	slot_getsomeattrs(child, natts);
	for (int i = slot->tts_nvalid; i < natts; i++)
	{
		Datum		value = child->tts_values[i];
		bool		isnull = child->tts_isnull[i];

		if (!isnull && TupleDescAttr(desc, i)->attlen == -1 &&
			cx_is_own_datum(DatumGetPointer(value)))
			value = present_own_value(cslot, i, value);
		slot->tts_values[i] = value;
		slot->tts_isnull[i] = isnull;
	}
	slot->tts_nvalid = natts;
}

/*
 * The common case, a slot sharing the child's arrays (slot.h: a row with
 * nothing to decode costs what heap's deforming costs): the child's own
 * callback deforms into our arrays, not slot_getsomeattrs(), and attributes
 * the stored tuple lacks are left to our caller, slot_getsomeattrs_int(),
 * which fills them into the same arrays (they come from the catalog, never
 * in compressx's format); own-format values are then replaced, out of line.
 */
static void
tts_cx_getsomeattrs(TupleTableSlot *slot, int natts)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;
	TupleTableSlot *child = cslot->child;
	int			from;
	int			to;

	if (unlikely(!cslot->child_valid || !cslot->shared))
	{
		getsomeattrs_other(cslot, natts);
		return;
	}
	if (child->tts_nvalid < natts)
		child->tts_ops->getsomeattrs(child, natts);
	to = Min(cslot->child->tts_nvalid, natts);
	from = slot->tts_nvalid;
	if (to <= from)
		return;
	if (to <= cslot->first_varlena)
	{
		slot->tts_nvalid = to;
		return;
	}
	/* a quick look for own-format values; the work is out of line */
	for (int j = 0; j < cslot->nvarlena; j++)
	{
		int			i = cslot->varlena[j];

		if (i < from)
			continue;
		if (i >= to)
			break;
		if (unlikely(!slot->tts_isnull[i] &&
					 cx_is_own_datum(DatumGetPointer(slot->tts_values[i]))))
		{
			present_own_values(cslot, j, to);
			break;
		}
	}

	/*
	 * Valid only once presented: an error while presenting (corrupt data, a
	 * type decoded at once) leaves the attributes invalid, not holding
	 * stored bytes.
	 */
	slot->tts_nvalid = to;
}

static Datum
tts_cx_getsysattr(TupleTableSlot *slot, int attnum, bool *isnull)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	if (cslot->child_valid)
		return cslot->child->tts_ops->getsysattr(cslot->child, attnum, isnull);
	if (cslot->tuple)
		return heap_getsysattr(cslot->tuple, attnum, slot->tts_tupleDescriptor, isnull);
	if (cslot->has_header)
		return heap_getsysattr(cslot->header, attnum, slot->tts_tupleDescriptor, isnull);
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot retrieve a system column in this context")));
	return (Datum) 0;
}

/* Give a decoded tuple the visibility header of the stored one. */
static void
copy_tuple_header(HeapTuple dst, HeapTuple src)
{
	dst->t_self = src->t_self;
	dst->t_tableOid = src->t_tableOid;
	memcpy(&dst->t_data->t_choice, &src->t_data->t_choice,
		   sizeof(dst->t_data->t_choice));
	dst->t_data->t_ctid = src->t_data->t_ctid;
	dst->t_data->t_infomask = (dst->t_data->t_infomask & ~HEAP_XACT_MASK) |
		(src->t_data->t_infomask & HEAP_XACT_MASK);
	dst->t_data->t_infomask2 = (dst->t_data->t_infomask2 & HEAP_NATTS_MASK) |
		(src->t_data->t_infomask2 & ~HEAP_NATTS_MASK);
}

/* Form a decoded heap tuple of the slot's contents, in the current context. */
static HeapTuple
form_decoded_tuple(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;
	HeapTuple	tuple;

	slot_getallattrs(slot);
	tuple = heap_form_tuple(slot->tts_tupleDescriptor, slot->tts_values,
							slot->tts_isnull);
	if (cslot->child_valid)
		copy_tuple_header(tuple, ExecFetchSlotHeapTuple(cslot->child, false, NULL));
	else if (cslot->has_header)
		copy_tuple_header(tuple, cslot->header);
	else
	{
		tuple->t_self = slot->tts_tid;
		tuple->t_tableOid = slot->tts_tableOid;
	}
	return tuple;
}

/* Make tuple (palloc'd in tts_mcxt) the slot's own, deformed. */
static void
store_own_tuple(TupleTableSlot *slot, HeapTuple tuple)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	if (cslot->child && !TTS_EMPTY(cslot->child))
		ExecClearTuple(cslot->child);
	cslot->child_valid = false;
	cslot->own_values = false;
	if (cslot->tuple && cslot->tuple != tuple)
		heap_freetuple(cslot->tuple);
	cslot->tuple = tuple;
	cslot->dirty = true;
	heap_deform_tuple(tuple, slot->tts_tupleDescriptor, slot->tts_values,
					  slot->tts_isnull);
	slot->tts_nvalid = slot->tts_tupleDescriptor->natts;
	cx_reset_decoded(cslot);
	slot->tts_tid = tuple->t_self;
	slot->tts_tableOid = tuple->t_tableOid;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_flags |= TTS_FLAG_SHOULDFREE;
}

/* Make the slot's tuple a decoded copy it owns. */
static void
form_own_tuple(TupleTableSlot *slot)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(slot->tts_mcxt);
	HeapTuple	tuple = form_decoded_tuple(slot);

	MemoryContextSwitchTo(oldcxt);
	store_own_tuple(slot, tuple);
}

/*
 * Materialize a virtual tuple: copy its values into decode_cxt.  A
 * placeholder (of any compressx slot) becomes one of this slot over a copy
 * of its stored bytes, which are small: compressed, or a reference.
 */
static void
materialize_values(CxTupleTableSlot *cslot)
{
	TupleTableSlot *slot = &cslot->base;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	MemoryContext oldcxt = MemoryContextSwitchTo(get_decode_cxt(cslot));

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		CxLazyValue *lv;

		if (slot->tts_isnull[i] || att->attbyval)
			continue;
		if (att->attlen == -1 && (lv = as_placeholder(slot->tts_values[i])) != NULL)
		{
			struct varlena *copy = palloc(VARSIZE(lv->stored));

			memcpy(copy, lv->stored, VARSIZE(lv->stored));
			slot->tts_values[i] = init_placeholder(cslot, palloc(sizeof(CxLazyValue)),
												   copy, lv->relid, pstrdup(lv->attname));
		}
		else
			slot->tts_values[i] = datumCopy(slot->tts_values[i], false, att->attlen);
	}
	MemoryContextSwitchTo(oldcxt);
	cslot->own_values = true;
	cslot->dirty = true;
}

static void
tts_cx_materialize(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	Assert(!TTS_EMPTY(slot));
	if (cslot->tuple || cslot->own_values)
		return;
	if (cslot->child_valid)
		form_own_tuple(slot);
	else
		materialize_values(cslot);
}

static void
tts_cx_copyslot(TupleTableSlot *dstslot, TupleTableSlot *srcslot)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(dstslot->tts_mcxt);
	HeapTuple	tuple = ExecCopySlotHeapTuple(srcslot);

	MemoryContextSwitchTo(oldcxt);
	ExecClearTuple(dstslot);
	store_own_tuple(dstslot, tuple);
}

static HeapTuple
tts_cx_get_heap_tuple(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	Assert(!TTS_EMPTY(slot));
	if (!cslot->tuple)
		form_own_tuple(slot);
	return cslot->tuple;
}

/*
 * ANALYZE's copy of a sampled row (acquire_sample_rows() copies each row it
 * keeps with ExecCopySlotHeapTuple): as form_decoded_tuple(), except that a
 * value compressx stored out of line becomes an indirect pointer to its
 * decoded bytes, in the current context (ANALYZE's, which the sample rows
 * live in too).  ANALYZE measures a column's width on the datum before
 * detoasting it (std_typanalyze's compute functions: VARSIZE_ANY), so heap's
 * out-of-line values count as their 18-byte TOAST pointer, and a decoded
 * copy made every wide compressx column look many times wider than the
 * same column of heap (the planner's widths: issue 27, item 17); this way
 * they count as the 10-byte pointer.  Statistics still see decoded values:
 * every consumer of sample rows detoasts (indirect pointers included), as
 * it must for heap's TOAST pointers.  Values compressx keeps inline count
 * at their decoded size: heap keeps values of that size inline too,
 * uncompressed below its 2 kB threshold.
 */
static HeapTuple
form_sample_tuple(CxTupleTableSlot *cslot)
{
	TupleTableSlot *slot = &cslot->base;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	HeapTuple	stored = ExecFetchSlotHeapTuple(cslot->child, false, NULL);
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	bool	   *copied = palloc0(sizeof(bool) * Max(desc->natts, 1));
	HeapTuple	tuple;

	heap_deform_tuple(stored, desc, values, isnull);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		struct varlena *v = (struct varlena *) DatumGetPointer(values[i]);
		struct varlena *plain;

		if (isnull[i] || att->attlen != -1 || !cx_is_own_datum(v))
			continue;
		plain = cx_decode(v, slot->tts_tableOid, NameStr(att->attname));
		if (cx_attribute(v, slot->tts_tableOid, NULL) == CX_OWN_REFERENCE)
		{
			struct varatt_indirect redirect;
			struct varlena *p = palloc(INDIRECT_POINTER_SIZE);

			redirect.pointer = plain;
			SET_VARTAG_EXTERNAL(p, VARTAG_INDIRECT);
			memcpy(VARDATA_EXTERNAL(p), &redirect, sizeof(redirect));
			values[i] = PointerGetDatum(p);
		}
		else
		{
			values[i] = PointerGetDatum(plain);
			copied[i] = true;	/* heap_form_tuple copies it */
		}
	}
	tuple = heap_form_tuple(desc, values, isnull);
	copy_tuple_header(tuple, stored);
	for (int i = 0; i < desc->natts; i++)
		if (copied[i])
			pfree(DatumGetPointer(values[i]));
	pfree(values);
	pfree(isnull);
	pfree(copied);
	return tuple;
}

static HeapTuple
tts_cx_copy_heap_tuple(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	Assert(!TTS_EMPTY(slot));
	if (cslot->tuple)
		return heap_copytuple(cslot->tuple);
	if (cslot->for_analyze && cslot->child_valid)
		return form_sample_tuple(cslot);
	return form_decoded_tuple(slot);
}

static MinimalTuple
tts_cx_copy_minimal_tuple(CX_COPY_MINIMAL_TUPLE_PARAMS(slot, extra))
{
	Assert(!TTS_EMPTY(slot));
	slot_getallattrs(slot);
	return cx_heap_form_minimal_tuple(slot->tts_tupleDescriptor,
									  slot->tts_values, slot->tts_isnull,
									  extra);
}

#ifdef CX_HAVE_IS_CURRENT_XACT_TUPLE
/* Whether the stored tuple the slot presents was inserted by this transaction. */
static bool
tts_cx_is_current_xact_tuple(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	Assert(!TTS_EMPTY(slot));
	if (cslot->child_valid)
		return slot_is_current_xact_tuple(cslot->child);
	/* a decoded copy keeps the stored tuple's header, as heap's slot does */
	if (cslot->tuple || cslot->has_header)
		return TransactionIdIsCurrentTransactionId(
			HeapTupleHeaderGetRawXmin((cslot->tuple ? cslot->tuple : cslot->header)->t_data));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("don't have a storage tuple in this context")));
	return false;
}
#endif

const TupleTableSlotOps TTSOpsCompressx = {
	.base_slot_size = sizeof(CxTupleTableSlot),
	.init = tts_cx_init,
	.release = tts_cx_release,
	.clear = tts_cx_clear,
	.getsomeattrs = tts_cx_getsomeattrs,
	.getsysattr = tts_cx_getsysattr,
	.materialize = tts_cx_materialize,
	.copyslot = tts_cx_copyslot,
	.get_heap_tuple = tts_cx_get_heap_tuple,
	.get_minimal_tuple = NULL,
	.copy_heap_tuple = tts_cx_copy_heap_tuple,
	.copy_minimal_tuple = tts_cx_copy_minimal_tuple,
#ifdef CX_HAVE_IS_CURRENT_XACT_TUPLE
	.is_current_xact_tuple = tts_cx_is_current_xact_tuple,
#endif
};

/* cx_slot_begin_fetch() (slot.h) when the previous row left something behind */
TupleTableSlot *
cx_slot_begin_fetch_slow(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	if (!TTS_IS_COMPRESSX(slot))
		elog(ERROR, "compressx table access method needs its own tuple slot type");

	/* leave the child's tuple in place (slot.h) */
	forget_contents(slot);

	if (cslot->child == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(slot->tts_mcxt);

		cslot->child = cx_make_tuple_table_slot(slot->tts_tupleDescriptor,
												 &TTSOpsBufferHeapTuple);
		MemoryContextSwitchTo(oldcxt);
		cslot->dirty = false;
	}
	return cslot->child;
}

/* cx_slot_end_fetch() (slot.h) when heap found nothing: the slot stays empty */
bool
cx_slot_end_fetch_missed(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;
	TupleTableSlot *child = cslot->child;

	if (!TTS_EMPTY(child))
		ExecClearTuple(child);
	ItemPointerSetInvalid(&slot->tts_tid);
	return false;
}

void
cx_slot_set_analyze(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	if (!TTS_IS_COMPRESSX(slot))
		elog(ERROR, "compressx table access method needs its own tuple slot type");
	cslot->for_analyze = true;
}

TupleTableSlot *
cx_slot_valid_child(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	if (!TTS_IS_COMPRESSX(slot) || !cslot->child_valid)
		return NULL;
	return cslot->child;
}

/*
 * After compressx stored a row for the slot's values: give the slot the
 * stored row's header (xmin, xmax, cmin, ctid), as heap does for its own
 * slots, so RETURNING and triggers see the system columns.  Other slot
 * types are left alone (heap leaves them too).
 */
void
cx_slot_take_header(TupleTableSlot *slot, HeapTuple stored)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	slot->tts_tableOid = stored->t_tableOid;
	slot->tts_tid = stored->t_self;
	if (!TTS_IS_COMPRESSX(slot))
		return;
	tts_cx_materialize(slot);
	if (cslot->tuple)
		copy_tuple_header(cslot->tuple, stored);
	else
	{
		/* own values: keep the header alone, decode nothing */
		if (cslot->header == NULL)
		{
			cslot->header = MemoryContextAllocZero(slot->tts_mcxt,
												   HEAPTUPLESIZE + SizeofHeapTupleHeader);
			cslot->header->t_data = (HeapTupleHeader) ((char *) cslot->header + HEAPTUPLESIZE);
		}
		memcpy(cslot->header->t_data, stored->t_data, SizeofHeapTupleHeader);
		cslot->header->t_len = SizeofHeapTupleHeader;
		cslot->header->t_self = stored->t_self;
		cslot->header->t_tableOid = stored->t_tableOid;
		cslot->has_header = true;
		cslot->dirty = true;
	}
}
