/*-------------------------------------------------------------------------
 *
 * dict_dropped.h
 *	  Dictionaries no table uses any more, kept for lagging logical slots.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_DROPPED_H
#define COMPRESSX_DICT_DROPPED_H

/*
 * Whether a replication slot on this server may still decode changes made
 * before now (some slot has a catalog_xmin), so that a dictionary deleted
 * now could still be needed.
 */
extern bool cx_dict_slots_may_decode(void);

/*
 * Whether compressx.dictionaries (dicts_oid) has the column "dropped"
 * (since 0.5.0).
 */
extern bool cx_dict_has_dropped_column(Oid dicts_oid);

/*
 * Mark the dictionaries of relid (not shared ones, whose keep_attno column
 * is true) as dropped by this transaction: relid 0, dropped set to the
 * transaction's id.  Directly through the heap (no SPI inside a DROP).
 * Returns the number marked.  The caller invalidates the dictionaries
 * table's relcache entry.
 */
extern int	cx_dict_mark_dropped(Oid dicts_oid, Oid relid, AttrNumber keep_attno);

/*
 * Delete the dictionaries marked dropped that no replication slot can need
 * any more: dropped by a transaction older than every slot's catalog_xmin,
 * or any when no slot has one.  Directly through the heap, without waiting:
 * a row another transaction is deleting (or locks) is skipped and left for
 * a later purge.  Returns the number deleted (the caller invalidates as
 * above).
 */
extern int	cx_dict_purge_dropped(Oid dicts_oid);

#endif							/* COMPRESSX_DICT_DROPPED_H */
