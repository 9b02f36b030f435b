/*-------------------------------------------------------------------------
 *
 * runs.h
 *	  The record of recompress_online's runs: what each started with, the
 *	  level epoch, leftovers and cleanup (runs.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_ONLINE_RUNS_H
#define COMPRESSX_ONLINE_RUNS_H

#include "online/run.h"

extern void cx_online_record_run(OnlineRun *run, Oid relid);
extern void cx_online_forget_run(Oid relid);
extern void cx_online_start_relevel(OnlineRun *run);
extern bool cx_online_table_has_dictionaries(Oid relid);

#endif							/* COMPRESSX_ONLINE_RUNS_H */
