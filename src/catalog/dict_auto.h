/*-------------------------------------------------------------------------
 *
 * dict_auto.h
 *	  Automatic zstd dictionaries (dictionary => 'auto'): settings, and the
 *	  request that starts the background worker.
 *
 * The work itself (training, retraining, pruning) is sql/dict_auto_sql.c's,
 * sql/dict_prune.c's and sql/dict_auto_worker.c's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_AUTO_H
#define COMPRESSX_DICT_AUTO_H

#include "utils/rel.h"

#include "catalog/settings.h"

/* GUCs (README, "Automatic dictionaries") */
extern int	cx_auto_min_values;		/* compressx.auto_dictionary_min_values */
extern int	cx_auto_naptime;		/* compressx.auto_dictionary_naptime, s */
extern int	cx_auto_margin;			/* compressx.auto_dictionary_margin, % */
extern int	cx_auto_sample_rows;	/* compressx.auto_dictionary_sample_rows */
extern int	cx_auto_dict_size;		/* compressx.auto_dictionary_size, bytes */
extern bool cx_auto_worker;			/* compressx.auto_dictionary_worker */

/* The background worker's entry point, by name (sql/dict_auto_worker.c). */
#define CX_AUTO_WORKER_FUNCTION "compressx_auto_dictionary_main"

/*
 * Advisory lock key (field 3 of the tag; fields 1 and 2: the database and
 * this constant) that one worker per database holds while it runs.
 */
#define CX_AUTO_LOCK_KEY		0x43584144	/* "CXAD" */

/* Register the GUCs and the transaction callback. */
extern void cx_autodict_init(void);

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

#endif							/* COMPRESSX_DICT_AUTO_H */
