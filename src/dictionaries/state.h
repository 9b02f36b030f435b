/*-------------------------------------------------------------------------
 *
 * state.h
 *	  The state of automatic dictionaries (state.c): the rows of
 *	  compressx.auto_dictionary_state and auto_dictionary_run()'s results.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICTIONARIES_STATE_H
#define COMPRESSX_DICTIONARIES_STATE_H

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

/*
 * Forget the state of columns no longer set to dictionary => 'auto',
 * skipping rows another transaction holds (never waits).
 */
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

#endif							/* COMPRESSX_DICTIONARIES_STATE_H */
