/*-------------------------------------------------------------------------
 *
 * attcompression.h
 *	  A column's COMPRESSION on compressx tables: its meaning, the mirror of
 *	  compressx's settings that \d+ shows, and the moves from heap.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_ATTCOMPRESSION_H
#define COMPRESSX_ATTCOMPRESSION_H

/* Registers the object access hook that notices ALTER TABLE's moves. */
extern void cx_attcompression_init(void);

/*
 * relid has just become a compressx table (caller holds ACCESS EXCLUSIVE):
 * attcompression mirrors its settings, a heap table's COMPRESSION is not
 * kept (NOTICE).  Returns whether some attcompression changed.
 */
extern bool cx_attcompression_moved_in(Oid relid);

#endif							/* COMPRESSX_ATTCOMPRESSION_H */
