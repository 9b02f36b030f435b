/*-------------------------------------------------------------------------
 *
 * dict_auto_sql.h
 *	  The work on columns with dictionary => 'auto': checking and training
 *	  (dict_auto_sql.c), pruning (dict_prune.c), for compressx.auto_dictionary_run()
 *	  and the background worker (dict_auto_worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_AUTO_SQL_H
#define COMPRESSX_DICT_AUTO_SQL_H

#include "nodes/pg_list.h"

/* What one step did to one column (a row of auto_dictionary_run()). */
typedef struct CxAutoResult
{
	Oid			relid;
	char	   *column;			/* NULL: the table as a whole */
	const char *action;			/* trained, retrained, kept, waiting,
								 * pruned, retained, skipped */
	int32		dict_id;		/* the dictionary acted on, 0: none */
	char	   *message;
} CxAutoResult;

/* A palloc'd result row (column copied; message kept as given). */
extern CxAutoResult *cx_autodict_result(Oid relid, const char *column,
										const char *action, int32 dict_id,
										char *message);

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
 * Delete the dictionaries of relid's automatic columns that no stored value
 * names any more (dict_prune.c has the protocol).  in_worker: wait at most
 * a few seconds for writers, and skip the table when its lock is not free.
 * Returns a List of CxAutoResult.
 */
extern List *cx_autodict_prune(Oid relid, bool in_worker);

/*
 * Record a column's state in compressx.auto_dictionary_state (as the
 * extension's owner).  ratio_now and baseline: < 0 for NULL.
 */
extern void cx_autodict_record(Oid relid, AttrNumber attnum, const char *state,
							   int values_seen, const char *action,
							   const char *message, double ratio_now,
							   double baseline);

/*
 * Record that checking table relid failed with message, as the state of
 * each of its automatic columns.
 */
extern void cx_autodict_record_error(Oid relid, const char *message);

/* Add pruned dictionaries to a column's count. */
extern void cx_autodict_count_pruned(Oid relid, AttrNumber attnum, int pruned);

/* Forget the state of columns no longer set to dictionary => 'auto'. */
extern void cx_autodict_forget_stale(void);

/*
 * SQL for a table's activity, what tells the worker it changed since its
 * last check: its inserted, updated and deleted tuple counts and vacuum
 * counts (the statistics system's, track_counts) and its file (a rewrite
 * changes it).  c: its pg_class row.
 */
#define CX_AUTO_ACTIVITY_SQL \
	"pg_catalog.concat_ws(':', " \
	"pg_catalog.pg_stat_get_tuples_inserted(c.oid) + pg_catalog.pg_stat_get_tuples_updated(c.oid) " \
	"+ pg_catalog.pg_stat_get_tuples_deleted(c.oid), " \
	"pg_catalog.pg_stat_get_vacuum_count(c.oid) + pg_catalog.pg_stat_get_autovacuum_count(c.oid), " \
	"c.relfilenode)"

/* Whether the extension here is at 0.4.0 or later (has the state table). */
extern bool cx_autodict_installed(void);

#endif							/* COMPRESSX_DICT_AUTO_SQL_H */
