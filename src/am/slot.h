/*-------------------------------------------------------------------------
 *
 * slot.h
 *	  The tuple slot of compressx tables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_SLOT_H
#define COMPRESSX_SLOT_H

#include "access/htup.h"
#include "executor/tuptable.h"
#include "nodes/memnodes.h"
#include "storage/buf.h"

extern PGDLLIMPORT const TupleTableSlotOps TTSOpsCompressx;

#define TTS_IS_COMPRESSX(slot) ((slot)->tts_ops == &TTSOpsCompressx)

/*
 * The slot.  Its fields belong to slot.c; it is declared here only for the
 * inline fetch functions below, which every scan and index fetch runs once
 * a row.
 */
typedef struct CxTupleTableSlot
{
	TupleTableSlot base;
	TupleTableSlot *child;		/* BufferHeapTuple slot */
	bool		shared;			/* tts_values/tts_isnull are the child's */
	bool		child_valid;	/* child holds the tuple the slot presents */

	/*
	 * Whether any of tuple, own_values or has_header may need undoing
	 * before the next fetch (set whenever one is made; cleared when they
	 * are dropped), or there is no child yet: while it is false and
	 * decode_cxt is empty, a fetch drops nothing and makes nothing.
	 */
	bool		dirty;
	bool		own_values;		/* values are copies in decode_cxt */
	bool		has_header;		/* header (below) valid: after an insert or
								 * update */
	bool		for_analyze;	/* ANALYZE's sample slot (form_sample_tuple) */
	int			nvarlena;		/* variable-length attributes ... */
	int		   *varlena;		/* ... and their indexes */
	int			first_varlena;	/* varlena[0], or natts when none */
	char	   *lazy_ok;		/* per attribute: 'y' placeholder, 'n', 0 unknown */
	HeapTuple	tuple;			/* own decoded copy, or NULL */
	HeapTuple	header;			/* header-only copy of the stored row */
	MemoryContext decode_cxt;	/* decoded values of the child's tuple */
	struct CxLazyValue *lazy;	/* per attribute: its placeholder, reused */
} CxTupleTableSlot;

/*
 * Fetching through heap: cx_slot_begin_fetch() empties the slot and returns
 * its child BufferHeapTuple slot for heap's callback to fill;
 * cx_slot_end_fetch() makes the slot present what heap stored there (values
 * are decoded lazily, column by column) and returns found.
 *
 * Both are inline, with the uncommon cases out of line: a row with nothing
 * to decode must cost what it costs on heap (issue 37), and a call, a
 * check of the slot's type and a reset of what the previous row left
 * behind were a good part of the difference.  The child keeps its tuple
 * until heap replaces it, so that heap keeps the pin when the next tuple
 * lies in the same buffer.
 */
extern TupleTableSlot *cx_slot_begin_fetch_slow(TupleTableSlot *slot);
extern bool cx_slot_end_fetch_missed(TupleTableSlot *slot);

/*
 * Whether cx_slot_begin_fetch() has nothing to drop or make.  Placeholders
 * (slot.c) allocate nothing: rows whose compressed values are passed over
 * leave decode_cxt untouched (nothing allocated there since its last reset,
 * no context made under it), and take this way too.
 */
static inline bool
cx_slot_fetch_ready(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	return TTS_IS_COMPRESSX(slot) && !cslot->dirty &&
		(cslot->decode_cxt == NULL ||
		 (cslot->decode_cxt->isReset && cslot->decode_cxt->firstchild == NULL));
}

/* cx_slot_begin_fetch() once cx_slot_fetch_ready() said yes */
static inline TupleTableSlot *
cx_slot_begin_ready_fetch(TupleTableSlot *slot)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;

	cslot->child_valid = false;
	slot->tts_flags |= TTS_FLAG_EMPTY;
	slot->tts_nvalid = 0;
	return cslot->child;
}

static inline TupleTableSlot *
cx_slot_begin_fetch(TupleTableSlot *slot)
{
	if (unlikely(!cx_slot_fetch_ready(slot)))
		return cx_slot_begin_fetch_slow(slot);
	return cx_slot_begin_ready_fetch(slot);
}

static inline bool
cx_slot_end_fetch(TupleTableSlot *slot, bool found)
{
	CxTupleTableSlot *cslot = (CxTupleTableSlot *) slot;
	TupleTableSlot *child = cslot->child;

	if (unlikely(!found || TTS_EMPTY(child)))
		return cx_slot_end_fetch_missed(slot);
	cslot->child_valid = true;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_tid = child->tts_tid;
	slot->tts_tableOid = child->tts_tableOid;
	return true;
}

/* After an insert or update: the slot takes the stored row's header. */
extern void cx_slot_take_header(TupleTableSlot *slot, HeapTuple stored);

/* The stored bytes behind a compressx placeholder value, else NULL. */
extern const struct varlena *cx_placeholder_stored(Datum value);

/* The child slot when it holds the presented tuple, else NULL. */
extern TupleTableSlot *cx_slot_valid_child(TupleTableSlot *slot);

/*
 * Mark slot as ANALYZE's sample slot: its heap tuple copies then hold
 * out-of-line values as indirect pointers to their decoded bytes, so that
 * ANALYZE measures widths as it does for heap (slot.c, form_sample_tuple).
 */
extern void cx_slot_set_analyze(TupleTableSlot *slot);

/* The slot holding slot's stored forms: a compressx slot's child, or slot. */
static inline TupleTableSlot *
cx_slot_stored(TupleTableSlot *slot)
{
	return TTS_IS_COMPRESSX(slot) ? cx_slot_valid_child(slot) : slot;
}

#endif							/* COMPRESSX_SLOT_H */
