/*-------------------------------------------------------------------------
 *
 * restored.h
 *	  The automatic-dictionary worker's part in a restore (restored.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_RESTORED_H
#define COMPRESSX_RESTORED_H

/*
 * One pass over the columns a restore left with work (restored_at set):
 * re-encode, train, or wait.  Runs its own transactions (call it outside
 * one); allocates in cxt, which the caller resets.  Returns whether some
 * column waits with pages (then *next_s: seconds until it is due).
 */
extern bool cx_restored_pass(MemoryContext cxt, double *next_s);

#endif
