/*-------------------------------------------------------------------------
 *
 * prune.h
 *	  Deleting the dictionaries of automatic columns that no stored value
 *	  names any more (prune.c has the protocol).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICTIONARIES_PRUNE_H
#define COMPRESSX_DICTIONARIES_PRUNE_H

#include "nodes/pg_list.h"

/*
 * Delete the dictionaries of relid's automatic columns that no stored value
 * names any more (prune.c has the protocol).  in_worker: wait at most
 * a few seconds for writers, and skip the table when its lock is not free.
 * Returns a List of CxAutoResult.
 */
extern List *cx_autodict_prune(Oid relid, bool in_worker);

#endif							/* COMPRESSX_DICTIONARIES_PRUNE_H */
