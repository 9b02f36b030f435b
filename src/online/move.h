/*-------------------------------------------------------------------------
 *
 * move.h
 *	  Moving a table between heap and compressx during recompress_online
 *	  (move.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_ONLINE_MOVE_H
#define COMPRESSX_ONLINE_MOVE_H

#include "online/run.h"

extern void cx_online_set_target_for_heap(OnlineRun *run);
extern uint64 cx_online_settings_mark(Oid relid);
extern void cx_online_wait_for_writers(OnlineRun *run);
extern void cx_online_wait_for_old_snapshots(OnlineRun *run);
extern void cx_online_move_to_compressx(OnlineRun *run);
extern bool cx_online_move_to_heap(OnlineRun *run, uint64 mark);
extern bool cx_online_gone_for_all(OnlineRun *run, HeapTuple tuple);

#endif							/* COMPRESSX_ONLINE_MOVE_H */
