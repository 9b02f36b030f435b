/*-------------------------------------------------------------------------
 *
 * progress.h
 *	  The progress command compressx's operations report under, and the
 *	  calls that report (am/progress.h); compressx.progress_info().
 *
 * recompress_table and recompress_online report their progress through
 * core's per-backend progress slots (pgstat_progress_*), under a command
 * value of their own that no view of core selects: pg_stat_progress_cluster
 * and the others never show them.  compressx's views read the slots with
 * compressx.progress_info() (progress.c) and tell the operations apart by
 * a marker in the last parameter.  advise, train_dictionary, automatic
 * dictionary checks and rewrites into compressx report with
 * cx_progress_begin() .. cx_progress_end() (am/progress.h), shown by the
 * view compressx.progress.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_PROGRESS_H
#define COMPRESSX_PROGRESS_H

#include "am/progress.h"

#endif							/* COMPRESSX_PROGRESS_H */
