/*-------------------------------------------------------------------------
 *
 * generation.h
 *	  Which columns' settings a rewrite has still to apply: setting
 *	  generations (compressx.column_settings.generation) and the generation
 *	  the last rewrite that covered a column applied
 *	  (compressx.settings_applied).  See generation.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_GENERATION_H
#define COMPRESSX_GENERATION_H

#include "nodes/bitmapset.h"

/* The columns of a table whose setting changed since their last rewrite. */
typedef struct CxPendingSettings
{
	int			n;
	AttrNumber *attnum;			/* [n] */
	int64	   *generation;		/* [n]: each one's generation when read */
} CxPendingSettings;

/*
 * The pending columns of relid as the current snapshot sees them, palloc'd
 * in the current memory context; NULL when none is (or the extension is not
 * updated to 0.5.0).
 */
extern CxPendingSettings *cx_pending_settings(Oid relid);

/* Whether attnum is one of pending's columns (pending may be NULL). */
extern bool cx_setting_pending(const CxPendingSettings *pending, AttrNumber attnum);

/*
 * A rewrite covered every value of the columns of pending (those in only,
 * when only is not NULL): record each one's generation as read applied,
 * for each column whose generation is still that one (a setting changed
 * since stays pending).  pending NULL: every column of relid, at its
 * current generation (the caller holds a lock that excludes setting
 * changes, ACCESS EXCLUSIVE).  Does nothing in a read-only transaction.
 */
extern void cx_mark_settings_applied(Oid relid, const CxPendingSettings *pending,
									 const Bitmapset *only);

/*
 * After relid moved to heap: a NOTICE naming the columns whose compressx
 * settings stay (pending until the table uses compressx again; names and
 * codecs only) and the call that drops them.  Nothing when it has none.
 */
extern void cx_notice_settings_left(Oid relid);

#endif							/* COMPRESSX_GENERATION_H */
