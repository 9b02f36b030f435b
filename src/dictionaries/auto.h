/*-------------------------------------------------------------------------
 *
 * auto.h
 *	  Checking and training the dictionaries of columns with
 *	  dictionary => 'auto' (auto.c), for compressx.auto_dictionary_run()
 *	  and the background worker (worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICTIONARIES_AUTO_H
#define COMPRESSX_DICTIONARIES_AUTO_H

#include "nodes/pg_list.h"

/*
 * Check every column of table relid (a table with storage) whose setting
 * has dictionary => 'auto': train its first dictionary, or a new one when
 * its values changed character, or say why not.  Locks relid
 * ShareUpdateExclusiveLock; in_worker: skip the table when that lock is not
 * free at once.  The caller owns relid (the worker acts as its owner).
 * Returns a List of CxAutoResult; records each column's state.
 */
extern List *cx_autodict_check(Oid relid, bool in_worker);

/*
 * Whether the owner of relid may read every row of it: SELECT privilege,
 * and no row-level security applying to it (FORCE ROW LEVEL SECURITY).
 * cx_autodict_check() trains nothing for a table its owner may not read in
 * full, and withdraws the column's automatic dictionary (action
 * "withdrawn": the column stops naming it, pruning deletes it).
 */
extern bool cx_autodict_owner_may_read(Oid relid);

#endif							/* COMPRESSX_DICTIONARIES_AUTO_H */
