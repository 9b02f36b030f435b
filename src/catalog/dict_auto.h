/*-------------------------------------------------------------------------
 *
 * dict_auto.h
 *	  Automatic zstd dictionaries (dictionary => 'auto'): settings, and the
 *	  request that starts the background worker.
 *
 * The work itself (training, retraining, pruning) is dictionaries/auto.c's,
 * dictionaries/prune.c's and dictionaries/worker.c's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_AUTO_H
#define COMPRESSX_DICT_AUTO_H

#include "utils/rel.h"

#include "catalog/settings.h"

/* GUCs (README, "Automatic dictionaries") */
extern int	cx_auto_min_values;		/* compressx.auto_dictionary_min_values */
extern int	cx_auto_min_kb;			/* compressx.auto_dictionary_min_bytes, kB */

/*
 * The fewest values a sample holding compressx.auto_dictionary_min_bytes
 * must have for a dictionary to be tried: a quarter of them (25) are held
 * out to measure it, the rest train it.
 */
#define CX_AUTO_FLOOR_VALUES	100
extern int	cx_auto_naptime;		/* compressx.auto_dictionary_naptime, s */
extern int	cx_auto_margin;			/* compressx.auto_dictionary_margin, % */
extern int	cx_auto_sample_rows;	/* compressx.auto_dictionary_sample_rows */
extern int	cx_auto_dict_size;		/* compressx.auto_dictionary_size, bytes */
extern bool cx_auto_worker;			/* compressx.auto_dictionary_worker */

/* The background worker's entry point, by name (dictionaries/worker.c). */
#define CX_AUTO_WORKER_FUNCTION "compressx_auto_dictionary_main"

/*
 * The lock one worker per database holds while it runs: an advisory lock
 * tag (field 1: the database; field 2: CX_AUTO_LOCK_KEY; field 3: 0) whose
 * field 4 is CX_AUTO_LOCK_FIELD4.  pg_advisory_lock() and its kin only make
 * tags with field 4 set to 1 (one bigint key) or 2 (two integer keys), so
 * no SQL session can take this one and keep every worker of the database
 * away; recompress_online's tags use another field 4 (online/run.h).
 */
#define CX_AUTO_LOCK_KEY		0x43584144	/* "CXAD" */
#define CX_AUTO_LOCK_FIELD4		0x4341		/* "CA" */

/* Register the GUCs and the transaction callback. */
extern void cx_autodict_init(void);

/*
 * Ask for the worker to start when the current transaction commits (a
 * restored dictionary was attached; nothing in the worker itself).
 */
extern void cx_autodict_launch_at_commit(void);

/*
 * The background worker: whether this backend is one (set by
 * dictionaries/worker.c), and whether another session wants its database
 * to itself (DROP DATABASE, ALTER DATABASE .. RENAME or SET TABLESPACE,
 * CREATE DATABASE .. TEMPLATE it), which waits 5 s for the other sessions
 * to leave.
 */
extern bool cx_autodict_in_worker;
extern bool cx_autodict_database_wanted(void);

/*
 * In the background worker, at most every CX_AUTO_WANTED_CHECK_MS: leave
 * (proc_exit(0), which aborts the transaction) when the database is
 * wanted.  Nothing elsewhere.  Called in every wait and long loop of the
 * worker's work, so that it leaves well within those 5 s.
 */
#define CX_AUTO_WANTED_CHECK_MS	250
extern void cx_autodict_leave_if_wanted(void);

/*
 * A row of rel was encoded with settings: when one of its columns has
 * dictionary => 'auto' and this backend has not started a worker for
 * compressx.auto_dictionary_naptime, start one when the transaction
 * commits.  Cheap when nothing is due (called per row).
 */
extern void cx_autodict_note_write(Relation rel, const CxColumnSetting *settings);

/*
 * Start the background worker for the current database now; false when
 * no background worker slot is free (max_worker_processes).
 */
extern bool cx_autodict_launch(void);

/*
 * Start the worker when the current transaction commits, whenever this
 * backend last started one (unless compressx.auto_dictionary_worker is
 * off): a change that may call for a check without any write, such as a
 * table its owner may no longer read in full (dictionaries/auto.c).
 */
extern void cx_autodict_request_launch(void);

#endif							/* COMPRESSX_DICT_AUTO_H */
