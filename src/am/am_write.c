/*-------------------------------------------------------------------------
 *
 * am_write.c
 *	  Write paths of the compressx access method: insert, multi-insert,
 *	  speculative insert, update, delete.
 *
 * Rows are encoded per column settings (settings.c) into heap tuples whose
 * varlena values are plain, core-compressed (pglz, lz4) or in compressx's
 * format (zstd, format.h), then handed to heap.  The caller's slot keeps
 * its plain values: indexes, RETURNING and triggers use those.
 *
 * Out-of-line zstd values are compressx's own TOAST values, referenced by
 * 24-byte inline references that heap's toaster never touches.  So
 * compressx deletes them itself, in the same transaction, when a row
 * version stops referencing them: DELETE, UPDATE (unless the new version
 * reuses the reference), and a speculative insertion that loses.
 *
 * An UPDATE saves new out-of-line values only for a row version heap will
 * store: a row is first planned (encoded, with the values that go out of
 * line only marked), and when it has values to save the old version is
 * locked first, so that a conflict (concurrent update or delete, a row met
 * twice by one command) is reported to the executor as heap reports it,
 * with nothing saved.  Deleting values saved in vain is not an option:
 * their TOAST rows were inserted by the current command, which heap_delete
 * takes for invisible.
 *
 * UPDATE reuses unchanged stored values as they are (no re-encoding, no
 * new TOAST data; heap's HOT check then sees equal bytes), except zstd
 * values in a column no longer set to zstd (reusable()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/toast_compression.h"
#include "catalog/catalog.h"
#include "replication/slot.h"
#include "storage/bufmgr.h"
#include "utils/datum.h"

#include "am/progress.h"
#include "am/am.h"
#include "catalog/dict.h"
#include "catalog/dict_auto.h"
#include "storage/format.h"
#include "am/slot.h"

/* Decoded size of a stored value, without reading any TOAST data. */
static int64
stored_raw_size(struct varlena *v)
{
	if (VARATT_IS_EXTERNAL_ONDISK(v))
	{
		struct varatt_external toast_pointer;

		VARATT_EXTERNAL_GET_POINTER(toast_pointer, v);
		return toast_pointer.va_rawsize - VARHDRSZ;
	}
	if (VARATT_IS_EXTERNAL(v))
		return -1;				/* expanded or indirect: unknown */
	if (VARATT_IS_4B_C(v))
		return VARDATA_COMPRESSED_GET_EXTSIZE(v);
	return VARSIZE_ANY_EXHDR(v);
}

static bool
is_own_inline(struct varlena *v)
{
	return cx_is_own_datum(v) && VARSIZE(v) > CX_REF_SIZE;
}

/*
 * A row encoded for storage whose out-of-line values are not saved yet.
 * vals[i] of a column that goes out of line holds a placeholder reference
 * (cx_ref_placeholder: the size and stored length of the real one) and
 * pending[i] the encoded value to save; pending[i] is NULL for the others.
 */
typedef struct CxRowPlan
{
	Datum	   *vals;
	bool	   *nulls;
	struct varlena **pending;
	int			npending;
	/* in a rewrite: the stored values of the version copied (else NULL) */
	const Datum *old_stored;
	const bool *old_nulls;
	/* UPDATE: whether the old version holds values in compressx's format */
	bool		old_has_own;
} CxRowPlan;

/* Plan the own inline value vals[i] to go out of line. */
static void
plan_out_of_line(CxRowPlan *plan, int i)
{
	struct varlena *own = (struct varlena *) DatumGetPointer(plan->vals[i]);

	plan->pending[i] = own;
	plan->vals[i] = PointerGetDatum(cx_ref_placeholder(own));
	plan->npending++;
}

/*
 * In a rewrite: whether the stored out-of-line value v, in core's format,
 * is already what encoding it with s would store (pglz; lz4 at core's level;
 * no compression), so the copy keeps its TOAST pointer and heap's toaster
 * carries the value over once for all versions sharing it, as heap's own
 * rewrite does.
 */
static bool
keep_core_external(struct varlena *v, const CxColumnSetting *s, char attstorage)
{
	struct varatt_external ptr;

	if (!VARATT_IS_EXTERNAL_ONDISK(v))
		return false;
	VARATT_EXTERNAL_GET_POINTER(ptr, v);
	if (!VARATT_EXTERNAL_IS_COMPRESSED(ptr))
		return s->codec->id == CX_CODEC_NONE || attstorage == TYPSTORAGE_EXTERNAL;
	switch (VARATT_EXTERNAL_GET_COMPRESS_METHOD(ptr))
	{
		case TOAST_PGLZ_COMPRESSION_ID:
			return s->codec->id == CX_CODEC_PGLZ;
		case TOAST_LZ4_COMPRESSION_ID:
			return s->codec->id == CX_CODEC_LZ4 && s->level <= 1;
		default:
			return false;
	}
}

/* Whether v is an out-of-line value in core's TOAST, stored uncompressed. */
static bool
plain_external(struct varlena *v)
{
	struct varatt_external ptr;

	if (!VARATT_IS_EXTERNAL_ONDISK(v))
		return false;
	VARATT_EXTERNAL_GET_POINTER(ptr, v);
	return !VARATT_EXTERNAL_IS_COMPRESSED(ptr);
}

/*
 * Whether an UPDATE may keep the stored form old of an unchanged value in a
 * column set to s: always, except a value in compressx's own format (zstd,
 * or lz4 with a dictionary) when the column no longer produces that format
 * (zstd, or lz4 with a dictionary).  Then the new version is
 * encoded afresh, so that once a column leaves zstd, rows written from then
 * on hold no value only compressx can read: recompress_online's move of a
 * table to heap relies on it (doc/design/online.md).
 */
static inline bool
reusable(const void *old, const CxColumnSetting *s)
{
	return !cx_is_own_datum(old) || s->codec->id == CX_CODEC_ZSTD ||
		(s->codec->id == CX_CODEC_LZ4 && s->dict_id != 0);
}

/*
 * Encode a row per column settings, into plan.  With oldtup (UPDATE), values
 * equal to oldtup's keep their stored form.  With old_stored (a rewrite),
 * out-of-line values stay shared between the versions of a row (see
 * keep_core_external and form_planned_row).  Columns with reencode[i]
 * (reencode may be NULL) are encoded afresh even when equal to oldtup's.
 * Nothing is written: the
 * values that go out of line are only planned (see form_planned_row).
 */
static void
plan_row(Relation rel, const CxColumnSetting *settings,
		 Datum *values, bool *isnull, HeapTuple oldtup,
		 const Datum *old_stored, const bool *old_nulls, const bool *reencode,
		 CxRowPlan *plan)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	Datum	   *vals = palloc(sizeof(Datum) * natts);
	bool	   *nulls = palloc(sizeof(bool) * natts);
	Datum	   *oldvals = NULL;
	bool	   *oldnulls = NULL;
	bool		hasnulls = false;
	Size		hoff;
	Size		maxDataLen;

	memcpy(vals, values, sizeof(Datum) * natts);
	memcpy(nulls, isnull, sizeof(bool) * natts);
	plan->vals = vals;
	plan->nulls = nulls;
	plan->pending = palloc0(sizeof(struct varlena *) * Max(natts, 1));
	plan->npending = 0;
	plan->old_stored = old_stored;
	plan->old_nulls = old_nulls;
	plan->old_has_own = false;
	if (oldtup)
	{
		oldvals = palloc(sizeof(Datum) * natts);
		oldnulls = palloc(sizeof(bool) * natts);
		heap_deform_tuple(oldtup, desc, oldvals, oldnulls);
		for (int i = 0; i < natts && !plan->old_has_own; i++)
			plan->old_has_own = !oldnulls[i] && TupleDescAttr(desc, i)->attlen == -1 &&
				cx_is_own_datum(DatumGetPointer(oldvals[i]));
	}

	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		struct varlena *v;
		struct varlena *plain;
		struct varlena *enc;
		const CxColumnSetting *s = &settings[i];

		if (att->attisdropped)
			nulls[i] = true;
		if (nulls[i])
		{
			hasnulls = true;
			continue;
		}
		if (att->attlen != -1)
			continue;

		v = (struct varlena *) DatumGetPointer(vals[i]);

		/*
		 * UPDATE: an unchanged value keeps its stored form.  The new row
		 * carries the old row's placeholders (and core-compressed values) as
		 * they were read, so comparing stored bytes finds them undecoded.
		 */
		if (oldtup && !oldnulls[i] && !(reencode && reencode[i]) &&
			reusable(DatumGetPointer(oldvals[i]), s))
		{
			struct varlena *old = (struct varlena *) DatumGetPointer(oldvals[i]);
			const struct varlena *cmp = cx_placeholder_stored(vals[i]);

			if (cmp == NULL)
				cmp = v;
			if (VARSIZE_ANY(cmp) == VARSIZE_ANY(old) &&
				memcmp(cmp, old, VARSIZE_ANY(cmp)) == 0)
			{
				vals[i] = oldvals[i];
				continue;
			}
		}

		if (old_stored && keep_core_external(v, s, att->attstorage))
			continue;

		plain = cx_plain_value(v, RelationGetRelid(rel), NameStr(att->attname));

		/*
		 * Storage PLAIN (oidvector, int2vector, ...): code reading such types
		 * assumes their values are never compressed nor out of line.
		 * EXTERNAL: never compressed, heap's toaster may move it out of line.
		 */
		if (att->attstorage == TYPSTORAGE_PLAIN ||
			att->attstorage == TYPSTORAGE_EXTERNAL)
		{
			vals[i] = PointerGetDatum(plain);
			continue;
		}

		if (oldtup && !oldnulls[i] && !(reencode && reencode[i]) &&
			reusable(DatumGetPointer(oldvals[i]), s))
		{
			struct varlena *old = (struct varlena *) DatumGetPointer(oldvals[i]);

			if (stored_raw_size(old) == VARSIZE_ANY_EXHDR(plain))
			{
				struct varlena *oldplain = cx_plain_value(old, RelationGetRelid(rel),
														  NameStr(att->attname));

				if (memcmp(VARDATA_ANY(oldplain), VARDATA_ANY(plain),
						   VARSIZE_ANY_EXHDR(plain)) == 0)
				{
					vals[i] = oldvals[i];
					continue;
				}
			}
		}

		if (s->codec->id == CX_CODEC_NONE ||
			VARSIZE_ANY_EXHDR(plain) < (Size) s->min_size)
		{
			vals[i] = PointerGetDatum(plain);
			continue;
		}
		enc = cx_encode(plain, s->codec, s->level, s->dict_id,
						s->dict_id != 0 ? cx_dict_for_encode(s->dict_id, s->codec, s->level) : NULL);

		/*
		 * In a rewrite, an uncompressed out-of-line value the codec cannot
		 * shrink keeps its TOAST pointer, as in keep_core_external: stored
		 * plain, heap's toaster would move it out of line once per row
		 * version, and the copies of the versions that shared it would be
		 * referenced by no row once those versions are gone.
		 */
		if (enc == NULL && old_stored && plain_external(v))
			continue;
		vals[i] = PointerGetDatum(enc ? enc : plain);
	}

	/*
	 * Heap's toaster must never meet an inline zstd value in a row it has to
	 * shrink, so compressx moves its own values out of line itself: first
	 * every one larger than its column's inline limit (compressx.inline_max
	 * unless set_column_inline() gave it one: large values stay out of
	 * the row, so scans of other columns read as few pages as heap's), then,
	 * largest first, as many as the row needs to fit the toast target.  A
	 * placeholder is not an own inline value (it has a reference's size), so
	 * it is never picked twice.
	 */
	hoff = SizeofHeapTupleHeader;
	if (hasnulls)
		hoff += BITMAPLEN(natts);
	hoff = MAXALIGN(hoff);
	maxDataLen = RelationGetToastTupleTarget(rel, TOAST_TUPLE_TARGET) - hoff;

	if (OidIsValid(rel->rd_rel->reltoastrelid))
	{
		for (int i = 0; i < natts; i++)
		{
			struct varlena *v = (struct varlena *) DatumGetPointer(vals[i]);

			/* storage MAIN: out of line only when the row needs it (below) */
			if (!nulls[i] && TupleDescAttr(desc, i)->attlen == -1 &&
				TupleDescAttr(desc, i)->attstorage != TYPSTORAGE_MAIN &&
				is_own_inline(v) && VARSIZE(v) > (Size) cx_inline_max_of(&settings[i]))
				plan_out_of_line(plan, i);
		}

		while (heap_compute_data_size(desc, vals, nulls) > maxDataLen)
		{
			int			biggest = -1;
			Size		biggest_size = 0;

			for (int i = 0; i < natts; i++)
			{
				struct varlena *v;

				if (nulls[i] || TupleDescAttr(desc, i)->attlen != -1)
					continue;
				v = (struct varlena *) DatumGetPointer(vals[i]);
				if (is_own_inline(v) && VARSIZE(v) > biggest_size)
				{
					biggest = i;
					biggest_size = VARSIZE(v);
				}
			}
			if (biggest < 0)
				break;
			plan_out_of_line(plan, biggest);
		}
	}
}

/*
 * Save the planned out-of-line values of plan into rel's TOAST relation and
 * form the tuple that references them.  In a rewrite, a value whose copied
 * version had an own reference reuses that reference's TOAST value id, so
 * versions of a row that shared one value share one copy again (see
 * cx_externalize).
 */
static HeapTuple
form_planned_row(Relation rel, CxRowPlan *plan, int options)
{
	int			natts = RelationGetDescr(rel)->natts;

	/* as in heap_toast_insert_or_update(), TOAST rows are never speculative */
	options &= ~HEAP_INSERT_SPECULATIVE;
	for (int i = 0; plan->npending > 0 && i < natts; i++)
	{
		const struct varlena *old_ref = NULL;
		Oid			unused;

		if (plan->pending[i] == NULL)
			continue;
		if (plan->old_stored && !plan->old_nulls[i] &&
			cx_external_value_id((const struct varlena *) DatumGetPointer(plan->old_stored[i]),
								 InvalidOid, &unused))
			old_ref = (const struct varlena *) DatumGetPointer(plan->old_stored[i]);
		plan->vals[i] = PointerGetDatum(cx_externalize(rel, plan->pending[i],
													   old_ref, options));
		plan->pending[i] = NULL;
		plan->npending--;
	}
	Assert(plan->npending == 0);
	return heap_form_tuple(RelationGetDescr(rel), plan->vals, plan->nulls);
}

HeapTuple
cx_encode_row(Relation rel, const CxColumnSetting *settings,
			  Datum *values, bool *isnull, HeapTuple oldtup,
			  const Datum *old_stored, const bool *old_nulls, int options)
{
	CxRowPlan	plan;

	cx_autodict_note_write(rel, settings);
	plan_row(rel, settings, values, isnull, oldtup, old_stored, old_nulls, NULL,
			 &plan);
	return form_planned_row(rel, &plan, options);
}

/*
 * Delete the out-of-line values tuple references, except those keep (a
 * newer version of the row) references too.
 */
void
cx_delete_refs(Relation rel, HeapTuple tuple, HeapTuple keep, bool is_speculative)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	Datum	   *vals = palloc(sizeof(Datum) * natts);
	bool	   *nulls = palloc(sizeof(bool) * natts);
	Datum	   *keepvals = NULL;
	bool	   *keepnulls = NULL;

	heap_deform_tuple(tuple, desc, vals, nulls);
	for (int i = 0; i < natts; i++)
	{
		struct varlena *v = (struct varlena *) DatumGetPointer(vals[i]);
		bool		kept = false;

		/*
		 * Only through a reference compressx attributes, which names this
		 * table's TOAST relation: a value compressx did not write must not
		 * make it delete a TOAST value of any table.
		 */
		if (nulls[i] || TupleDescAttr(desc, i)->attlen != -1 ||
			!cx_is_own_datum(v) ||
			cx_attribute(v, RelationGetRelid(rel), NULL) != CX_OWN_REFERENCE)
			continue;
		if (keep && keepvals == NULL)
		{
			keepvals = palloc(sizeof(Datum) * natts);
			keepnulls = palloc(sizeof(bool) * natts);
			heap_deform_tuple(keep, desc, keepvals, keepnulls);
		}
		for (int j = 0; keep && j < natts && !kept; j++)
			kept = !keepnulls[j] && TupleDescAttr(desc, j)->attlen == -1 &&
				cx_same_external(v, (struct varlena *) DatumGetPointer(keepvals[j]));
		if (!kept)
			cx_delete_external(rel, v, is_speculative);
	}
}

/*
 * Encoding works in one backend-wide context, emptied at the start and end
 * of every call (writes do not nest: nothing below them writes a compressx
 * table), instead of a context made and deleted for every row.
 */
static MemoryContext encode_cxt = NULL;

static MemoryContext
begin_encode(MemoryContext *cxt)
{
	if (encode_cxt == NULL)
		encode_cxt = AllocSetContextCreate(TopMemoryContext, "compressx encode",
										   ALLOCSET_DEFAULT_SIZES);
	MemoryContextReset(encode_cxt);
	*cxt = encode_cxt;
	return MemoryContextSwitchTo(encode_cxt);
}

HeapTuple
cx_fetch_stored_tuple(Relation rel, ItemPointer tid)
{
	HeapTupleData tuple;
	Buffer		buf = InvalidBuffer;
	HeapTuple	copy = NULL;

	tuple.t_self = *tid;
	if (heap_fetch(rel, SnapshotAny, &tuple, &buf, true))
		copy = heap_copytuple(&tuple);
	if (BufferIsValid(buf))
		ReleaseBuffer(buf);
	return copy;
}

/* Plan the slot's row for rel, in the current memory context. */
static void
plan_slot(Relation rel, TupleTableSlot *slot, HeapTuple oldtup, CxRowPlan *plan)
{
	CxColumnSetting *settings = palloc(sizeof(CxColumnSetting) *
									   Max(RelationGetDescr(rel)->natts, 1));

	cx_resolve_settings(rel, settings);
	cx_autodict_note_write(rel, settings);
	slot_getallattrs(slot);
	plan_row(rel, settings, slot->tts_values, slot->tts_isnull, oldtup, NULL, NULL,
			 NULL, plan);
}

/* Encode the slot's row for rel, in the current memory context. */
static HeapTuple
encode_slot(Relation rel, TupleTableSlot *slot, int options)
{
	CxRowPlan	plan;
	HeapTuple	tuple;

	plan_slot(rel, slot, NULL, &plan);
	tuple = form_planned_row(rel, &plan, options);
	tuple->t_tableOid = RelationGetRelid(rel);
	return tuple;
}

void
cx_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
				CxInsertOptions options, struct BulkInsertStateData *bistate)
{
	MemoryContext cxt;
	MemoryContext oldcxt = begin_encode(&cxt);
	HeapTuple	tuple = encode_slot(rel, slot, options);

	heap_insert(rel, tuple, cid, options, bistate);
	MemoryContextSwitchTo(oldcxt);
	cx_slot_take_header(slot, tuple);
	MemoryContextReset(cxt);
	cx_progress_rewrite_count(rel, 1);
}

void
cx_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
							CxInsertOptions options, struct BulkInsertStateData *bistate,
							uint32 specToken)
{
	MemoryContext cxt;
	MemoryContext oldcxt = begin_encode(&cxt);
	HeapTuple	tuple = encode_slot(rel, slot, options);

	HeapTupleHeaderSetSpeculativeToken(tuple->t_data, specToken);
	heap_insert(rel, tuple, cid, options | HEAP_INSERT_SPECULATIVE, bistate);
	MemoryContextSwitchTo(oldcxt);
	cx_slot_take_header(slot, tuple);
	MemoryContextReset(cxt);
}

void
cx_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
							  uint32 specToken, bool succeeded)
{
	if (succeeded)
		heap_finish_speculative(rel, &slot->tts_tid);
	else
	{
		MemoryContext cxt;
		MemoryContext oldcxt = begin_encode(&cxt);
		HeapTuple	stored = cx_fetch_stored_tuple(rel, &slot->tts_tid);

		if (stored)
			cx_delete_refs(rel, stored, NULL, true);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(cxt);
		heap_abort_speculative(rel, &slot->tts_tid);
	}
}

void
cx_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
				CommandId cid, CxInsertOptions options,
				struct BulkInsertStateData *bistate)
{
	MemoryContext cxt;
	MemoryContext oldcxt = begin_encode(&cxt);
	TupleDesc	desc = RelationGetDescr(rel);
	CxColumnSetting *settings = palloc(sizeof(CxColumnSetting) * Max(desc->natts, 1));
	TupleTableSlot **hslots = palloc(sizeof(TupleTableSlot *) * nslots);

	cx_resolve_settings(rel, settings);
	for (int i = 0; i < nslots; i++)
	{
		HeapTuple	tuple;

		slot_getallattrs(slots[i]);
		tuple = cx_encode_row(rel, settings, slots[i]->tts_values,
							  slots[i]->tts_isnull, NULL, NULL, NULL, options);
		hslots[i] = MakeSingleTupleTableSlot(desc, &TTSOpsHeapTuple);
		/* the slot owns the tuple: heap_multi_insert takes it without a copy */
		ExecStoreHeapTuple(tuple, hslots[i], true);
	}

	heap_multi_insert(rel, hslots, nslots, cid, options, bistate);

	MemoryContextSwitchTo(oldcxt);
	for (int i = 0; i < nslots; i++)
	{
		HeapTuple	stored = ExecFetchSlotHeapTuple(hslots[i], false, NULL);

		stored->t_self = hslots[i]->tts_tid;
		cx_slot_take_header(slots[i], stored);
		ExecDropSingleTupleTableSlot(hslots[i]);
	}
	MemoryContextReset(cxt);
	cx_progress_rewrite_count(rel, nslots);
}

/*
 * Logical decoding sees a reference as its 24 bytes.  Before heap logs the
 * old version of a row as its replica identity (UPDATE, DELETE), log the
 * body of each reference a decoder may need there: those in the identity's
 * columns, all of them under REPLICA IDENTITY FULL (format.h, "Logical
 * decoding").  Under DEFAULT or USING INDEX the same bodies serve an
 * UPDATE's new version, which keeps an unchanged identity value by its
 * reference and is found on the subscriber by it.  Core pays the same for
 * its own out-of-line identity values (toast_flatten_tuple in heapam.c),
 * and fails the same way when one cannot be read (a damaged TOAST value).
 * Only when a decoder may need them (compressx.logical_body_messages):
 * by default, while this database has a logical slot on this server.
 */
int			cx_body_messages = CX_BODY_MESSAGES_AUTO;

static const struct config_enum_entry body_messages_options[] = {
	{"auto", CX_BODY_MESSAGES_AUTO, false},
	{"always", CX_BODY_MESSAGES_ALWAYS, false},
	{"off", CX_BODY_MESSAGES_OFF, false},
	{NULL, 0, false}
};

void
cx_write_init(void)
{
	DefineCustomEnumVariable("compressx.logical_body_messages",
							 "When UPDATE and DELETE log the out-of-line values of replica identity columns for logical decoding.",
							 "auto: while this database has a logical replication slot on this server; "
							 "always: whenever wal_level is logical (for slots on standbys only); "
							 "off: never (decoding then reads the TOAST relation, which fails once VACUUM removed the values).",
							 &cx_body_messages, CX_BODY_MESSAGES_AUTO, body_messages_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}

/*
 * Whether this database has a logical replication slot on this server.  A
 * slot made after the check cannot decode this transaction: it waits for
 * the transactions running when it starts, this one among them once it has
 * an xid, which the caller makes sure of.
 */
static bool
logical_slot_here(void)
{
	bool		found = false;

	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	for (int i = 0; i < max_replication_slots && !found; i++)
	{
		ReplicationSlot *s = &ReplicationSlotCtl->replication_slots[i];

		found = s->in_use && SlotIsLogical(s) && s->data.database == MyDatabaseId;
	}
	LWLockRelease(ReplicationSlotControlLock);
	return found;
}

/* Whether UPDATE and DELETE of rel log identity bodies now. */
static bool
bodies_wanted(Relation rel)
{
	if (!RelationIsLogicallyLogged(rel) ||
		!OidIsValid(rel->rd_rel->reltoastrelid) ||
		rel->rd_rel->relreplident == REPLICA_IDENTITY_NOTHING ||
		cx_body_messages == CX_BODY_MESSAGES_OFF)
		return false;
	if (cx_body_messages == CX_BODY_MESSAGES_AUTO)
	{
		(void) GetCurrentTransactionId();	/* see logical_slot_here() */
		return logical_slot_here();
	}
	return true;
}

/* Log the identity bodies of oldtup; the caller checked bodies_wanted(). */
static void
log_identity_bodies(Relation rel, HeapTuple oldtup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Bitmapset  *idattrs = NULL;

	if (oldtup == NULL)
		return;
	if (rel->rd_rel->relreplident != REPLICA_IDENTITY_FULL)
	{
		idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
		if (bms_is_empty(idattrs))
			return;
	}
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Datum		d;
		bool		isnull;

		if (att->attlen != -1 || att->attisdropped ||
			(idattrs != NULL &&
			 !bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, idattrs)))
			continue;
		d = heap_getattr(oldtup, i + 1, desc, &isnull);
		if (!isnull && cx_is_own_datum(DatumGetPointer(d)) &&
			cx_attribute((struct varlena *) DatumGetPointer(d), RelationGetRelid(rel),
						 NULL) == CX_OWN_REFERENCE)
			cx_log_reference_body((struct varlena *) DatumGetPointer(d),
								  RelationGetRelid(rel), NameStr(att->attname));
	}
}

TM_Result
cx_tuple_delete(CX_TUPLE_DELETE_PARAMS(rel, tid, cid, snapshot, crosscheck, wait,
									   tmfd))
{
	TM_Result	result;

	/* a change that is not decoded (19's TABLE_DELETE_NO_LOGICAL): no bodies */
	if (!cx_delete_no_logical() && bodies_wanted(rel))
	{
		MemoryContext cxt;
		MemoryContext oldcxt = begin_encode(&cxt);

		log_identity_bodies(rel, cx_fetch_stored_tuple(rel, tid));
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(cxt);
	}
	result = cx_heap->tuple_delete(CX_TUPLE_DELETE_ARGS(rel, tid, cid, snapshot,
														crosscheck, wait, tmfd));
	if (result == TM_Ok && OidIsValid(rel->rd_rel->reltoastrelid))
	{
		/* in the encode context: the executor's context lives per statement */
		MemoryContext cxt;
		MemoryContext oldcxt = begin_encode(&cxt);
		HeapTuple	stored = cx_fetch_stored_tuple(rel, tid);

		if (stored)
			cx_delete_refs(rel, stored, NULL, false);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(cxt);
	}
	return result;
}

/*
 * The tuple lock heap_update() takes to replace oldtup by the planned row:
 * LockTupleExclusive when a key column (INDEX_ATTR_BITMAP_KEY) changes,
 * else LockTupleNoKeyExclusive.  heap_update() decides by comparing stored
 * bytes (HeapDetermineColumnsInfo, heapam.c); so does this.  A placeholder
 * differs from every stored value, as the reference that replaces it will,
 * and a value equal to the old one was given the old one's stored form.
 */
static LockTupleMode
update_lock_mode(Relation rel, HeapTuple oldtup, const CxRowPlan *plan)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Bitmapset  *keys = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_KEY);
	int			member = -1;

	while ((member = bms_next_member(keys, member)) >= 0)
	{
		AttrNumber	attnum = member + FirstLowInvalidHeapAttributeNumber;
		Form_pg_attribute att;
		Datum		oldval;
		bool		oldnull;

		/* as heap_update(): system columns other than tableoid differ */
		if (attnum == TableOidAttributeNumber)
			continue;
		if (attnum <= 0)
			return LockTupleExclusive;

		att = TupleDescAttr(desc, attnum - 1);
		oldval = heap_getattr(oldtup, attnum, desc, &oldnull);
		if (oldnull != plan->nulls[attnum - 1] ||
			(!oldnull && !datumIsEqual(oldval, plan->vals[attnum - 1],
									   att->attbyval, att->attlen)))
			return LockTupleExclusive;
	}
	return LockTupleNoKeyExclusive;
}

TM_Result
cx_tuple_update(CX_TUPLE_UPDATE_PARAMS(rel, otid, slot, cid, snapshot,
									   crosscheck, wait, tmfd, lockmode,
									   update_indexes))
{
	MemoryContext cxt;
	MemoryContext oldcxt = begin_encode(&cxt);
	HeapTuple	oldtup = cx_fetch_stored_tuple(rel, otid);
	CxRowPlan	plan;
	bool		saves PG_USED_FOR_ASSERTS_ONLY = false;
	HeapTuple	newtup;
	TM_Result	result;

	plan_slot(rel, slot, oldtup, &plan);

	/*
	 * New out-of-line values are saved only once the old version is locked
	 * as heap_update() would lock it, and then heap_update() cannot meet a
	 * conflict.  If the lock fails, the executor gets heap's answer, tmfd
	 * filled the same way (heap_lock_tuple and heap_update both report the
	 * tuple's t_ctid, update xid and, for TM_SelfModified, cmax), and
	 * lockmode for its EvalPlanQual lock; nothing was saved.  Rows without
	 * new out-of-line values skip this: no extra lock, no extra WAL.
	 */
	if (plan.npending > 0)
	{
		HeapTupleData locked;
		Buffer		buffer;

		if (oldtup == NULL)
			elog(ERROR, "could not find tuple (%u,%u) to update in relation \"%s\"",
				 ItemPointerGetBlockNumber(otid), ItemPointerGetOffsetNumber(otid),
				 RelationGetRelationName(rel));

		*lockmode = update_lock_mode(rel, oldtup, &plan);
		locked.t_self = *otid;
		result = heap_lock_tuple(rel, &locked, cid, *lockmode,
								 wait ? LockWaitBlock : LockWaitError,
								 false, &buffer, tmfd);
		ReleaseBuffer(buffer);

		/*
		 * For a version this command cannot see (say, one an earlier command
		 * of this transaction replaced), heap_lock_tuple returns
		 * TM_Invisible where heap_update raises this error.
		 */
		if (result == TM_Invisible)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("attempted to update invisible tuple")));
		if (result != TM_Ok)
		{
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(cxt);
			return result;
		}
		saves = true;
	}

	/*
	 * A change that is not to be decoded (19's TABLE_UPDATE_NO_LOGICAL): its
	 * new TOAST rows are written without logical information either, and no
	 * bodies are logged.
	 */
	newtup = form_planned_row(rel, &plan,
							  cx_update_no_logical() ? HEAP_INSERT_NO_LOGICAL : 0);
	newtup->t_tableOid = RelationGetRelid(rel);
	if (!cx_update_no_logical() && bodies_wanted(rel))
		log_identity_bodies(rel, oldtup);
	result = cx_heap_update_options(rel, otid, newtup, cid,
									cx_update_options_given(), crosscheck,
									wait, tmfd, lockmode, update_indexes);

	if (result == TM_Ok)
	{
		/* only values in compressx's format can be references */
		if (oldtup && plan.old_has_own)
			cx_delete_refs(rel, oldtup, newtup, false);
		MemoryContextSwitchTo(oldcxt);
		cx_slot_take_header(slot, newtup);
		MemoryContextSwitchTo(cxt);
	}
	else
	{
		/*
		 * Nothing to undo.  Without new out-of-line values nothing was saved.
		 * With them, the lock is held, and heap_update() then fails only
		 * when the old version is not visible to a crosscheck snapshot (RI
		 * actions at REPEATABLE READ or SERIALIZABLE): it reports
		 * TM_Updated, on which the executor always raises a serialization
		 * failure.  The values saved for the new version die with the
		 * (sub)transaction that inserted them, and VACUUM removes them.
		 * Deleting them here could not work anyway: their TOAST rows were
		 * inserted by this very command, so heap_delete() would refuse them.
		 */
		Assert(!saves || (crosscheck != InvalidSnapshot && result == TM_Updated));
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(cxt);
	return result;
}

/*
 * Whether a planned row changes the form of a column marked in reencode:
 * one that was stored compressed (it may be in a method the caller wants
 * gone), or one that comes out compressed now.  A value stored
 * uncompressed that the codec cannot shrink changes nothing.
 */
static bool
plan_compresses(TupleDesc desc, const CxRowPlan *plan, const Datum *stored,
				const bool *stored_nulls, const bool *reencode)
{
	for (int i = 0; i < desc->natts; i++)
	{
		const void *v;

		if (!reencode[i] || stored_nulls[i])
			continue;
		v = DatumGetPointer(stored[i]);
		if (VARATT_IS_COMPRESSED(v))
			return true;
		if (VARATT_IS_EXTERNAL_ONDISK(v))
		{
			struct varatt_external ptr;

			VARATT_EXTERNAL_GET_POINTER(ptr, v);
			if (VARATT_EXTERNAL_IS_COMPRESSED(ptr))
				return true;
		}
		if (plan->nulls[i] || plan->pending[i] != NULL)
			return true;
		v = DatumGetPointer(plan->vals[i]);
		if (VARATT_IS_COMPRESSED(v))
			return true;
	}
	return false;
}

/*
 * Online recompression (online/online.c): replace the stored row version
 * oldtup, which the caller has locked as heap_update() locks it for this
 * change (cx_online_update_lock_mode), by a version
 * whose columns with reencode[i] are decoded and encoded afresh with
 * settings; every other column keeps its stored bytes.  This is an UPDATE
 * without the executor (no trigger fires) and without the reuse of equal
 * values that cx_tuple_update() does, which would keep the old encoding.
 * The tuple lock held means heap_update() neither waits nor fails, so the
 * new out-of-line values saved before it are always referenced.  Sets
 * *newtid and *update_indexes (the caller inserts the index entries).
 */
TM_Result
cx_reencode_locked_row(Relation rel, HeapTuple oldtup,
					   const CxColumnSetting *settings, const bool *reencode,
					   CommandId cid, ItemPointer newtid,
					   CxUpdateIndexes *update_indexes)
{
	MemoryContext cxt;
	MemoryContext oldcxt = begin_encode(&cxt);
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	CxRowPlan	plan;
	HeapTuple	newtup;
	TM_FailureData tmfd;
	LockTupleMode lockmode;
	TM_Result	result;

	heap_deform_tuple(oldtup, desc, values, isnull);
	plan_row(rel, settings, values, isnull, oldtup, NULL, NULL, reencode, &plan);
	ItemPointerSetInvalid(newtid);
	if (!plan_compresses(desc, &plan, values, isnull, reencode))
	{
		/* uncompressed, and it would stay so: no new version */
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(cxt);
		return TM_Ok;
	}
	newtup = form_planned_row(rel, &plan, 0);
	newtup->t_tableOid = RelationGetRelid(rel);
	if (bodies_wanted(rel))
		log_identity_bodies(rel, oldtup);
	result = cx_heap_update(rel, &oldtup->t_self, newtup, cid, InvalidSnapshot,
							true, &tmfd, &lockmode, update_indexes);
	if (result == TM_Ok)
	{
		cx_delete_refs(rel, oldtup, newtup, false);
		*newtid = newtup->t_self;
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(cxt);
	return result;
}

/*
 * Online recompression's compaction (online/compact.c): replace the stored
 * row version oldtup, which the caller has locked as heap_update() locks
 * it for this change (cx_online_update_lock_mode), by a copy of it, so that heap places the copy where the free space map
 * points, and the out-of-line values of the columns with resave[i] (resave
 * may be NULL) get new TOAST chunks, placed the same way: a compressx
 * reference's body is saved again as it is stored (not decoded), a value in
 * core's TOAST is handed to heap's toaster inline, as stored (compressed or
 * not), which moves it out of line again (not in a row that holds an inline
 * value in compressx's own format: see below).  The old chunks are deleted as an
 * UPDATE deletes them.  Nothing is decoded or encoded; no trigger fires;
 * the caller inserts index entries when *update_indexes says so.  Sets
 * *newtid.
 */
TM_Result
cx_move_locked_row(Relation rel, HeapTuple oldtup, const bool *resave,
				   CommandId cid, ItemPointer newtid,
				   CxUpdateIndexes *update_indexes)
{
	MemoryContext cxt;
	MemoryContext oldcxt = begin_encode(&cxt);
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	HeapTuple	newtup;
	TM_FailureData tmfd;
	LockTupleMode lockmode;
	TM_Result	result;

	bool		own_inline = false;

	heap_deform_tuple(oldtup, desc, values, isnull);

	/*
	 * A value in core's TOAST goes back to heap's toaster inline, which then
	 * moves the row's largest inline value out of line: never do that to a
	 * row holding an inline value in compressx's own format, which heap's
	 * toaster must never meet in a row it shrinks.  Such a row keeps its
	 * core values where they are.
	 */
	for (int i = 0; i < desc->natts; i++)
		own_inline |= !isnull[i] && TupleDescAttr(desc, i)->attlen == -1 &&
			is_own_inline((struct varlena *) DatumGetPointer(values[i]));

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		struct varlena *v;

		/* as an UPDATE does: a dropped column's value (and its TOAST) goes */
		if (att->attisdropped)
			isnull[i] = true;
		if (isnull[i] || att->attlen != -1 || resave == NULL || !resave[i])
			continue;
		v = (struct varlena *) DatumGetPointer(values[i]);
		if (cx_is_own_datum(v) &&
			cx_attribute(v, RelationGetRelid(rel), NULL) == CX_OWN_REFERENCE)
			values[i] = PointerGetDatum(cx_externalize(rel,
													   cx_fetch_own_inline(v, RelationGetRelid(rel),
																		   NameStr(att->attname)),
													   NULL, 0));
		else if (VARATT_IS_EXTERNAL_ONDISK(v) && !own_inline)
			values[i] = PointerGetDatum(detoast_external_attr(v));
	}
	newtup = heap_form_tuple(desc, values, isnull);
	newtup->t_tableOid = RelationGetRelid(rel);
	if (bodies_wanted(rel))
		log_identity_bodies(rel, oldtup);
	result = cx_heap_update(rel, &oldtup->t_self, newtup, cid, InvalidSnapshot,
							true, &tmfd, &lockmode, update_indexes);
	ItemPointerSetInvalid(newtid);
	if (result == TM_Ok)
	{
		cx_delete_refs(rel, oldtup, newtup, false);
		*newtid = newtup->t_self;
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(cxt);
	return result;
}
