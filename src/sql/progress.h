/*-------------------------------------------------------------------------
 *
 * progress.h
 *	  The progress command compressx's rewrites report under.
 *
 * recompress_table and recompress_online report their progress through
 * core's per-backend progress slots (pgstat_progress_*), under a command
 * value of their own that no view of core selects: pg_stat_progress_cluster
 * and the others never show them.  compressx's views read the slots with
 * compressx.progress_info() (progress.c) and tell the two apart by a marker
 * in the last parameter.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_PROGRESS_H
#define COMPRESSX_PROGRESS_H

#include "utils/backend_progress.h"

/*
 * Not a value of ProgressCommandType in 15-18 (they count from 0 to under
 * 10), nor one core is likely to reach: pg_stat_get_progress_info() selects
 * one of its own commands by name, so none of its views shows this.
 */
#define CX_PROGRESS_COMMAND		((ProgressCommandType) 67)

#endif							/* COMPRESSX_PROGRESS_H */
