/*-------------------------------------------------------------------------
 *
 * fanout.h
 *	  compressx functions on the coordinator acting on every shard of a
 *	  Citus table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_CITUS_FANOUT_H
#define COMPRESSX_CITUS_FANOUT_H

#include "fmgr.h"

/*
 * If relid is a Citus table and this node its coordinator: fill the
 * materialized result of the set-returning function being called (set up
 * by InitMaterializedSRF) with the rows of compressx.<wrapper>, called
 * with the same arguments, and return true.  Otherwise return false.
 */
extern bool cx_citus_fan_out_srf(FunctionCallInfo fcinfo, Oid relid, const char *wrapper);

#endif							/* COMPRESSX_CITUS_FANOUT_H */
