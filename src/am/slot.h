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
#include "storage/buf.h"

extern PGDLLIMPORT const TupleTableSlotOps TTSOpsCompressx;

#define TTS_IS_COMPRESSX(slot) ((slot)->tts_ops == &TTSOpsCompressx)

/*
 * Fetching through heap: cx_slot_begin_fetch() empties the slot and returns
 * its child BufferHeapTuple slot for heap's callback to fill;
 * cx_slot_end_fetch() makes the slot present what heap stored there (values
 * are decoded lazily, column by column) and returns found.
 */
extern TupleTableSlot *cx_slot_begin_fetch(TupleTableSlot *slot);
extern bool cx_slot_end_fetch(TupleTableSlot *slot, bool found);

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
