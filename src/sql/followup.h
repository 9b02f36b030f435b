/*-------------------------------------------------------------------------
 *
 * followup.h
 *	  The statements that give back the room an online rewrite leaves and
 *	  that the procedure cannot run itself (followup.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_FOLLOWUP_H
#define COMPRESSX_FOLLOWUP_H

#include "lib/stringinfo.h"

extern void cx_followup_statements(Oid relid, bool reindex, StringInfo buf);

#endif							/* COMPRESSX_FOLLOWUP_H */
