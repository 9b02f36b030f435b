/*-------------------------------------------------------------------------
 *
 * cx_pg17_shim.c
 *	  Test-only: lets an extension built with PostgreSQL 17.12's headers load
 *	  into a 17.10 server.
 *
 * 17.12's inline heap_getattr() calls heap_datum_check(), a function 17.10
 * does not have, so such an extension fails to load into 17.10 with
 * "undefined symbol: heap_datum_check".  Preloaded (shared_preload_libraries:
 * PostgreSQL opens libraries with RTLD_GLOBAL), this library defines the
 * function as doing nothing, which is what 17.10 does in its place.
 * Likewise DatumGetHeapTupleHeader(), a macro in 17.10 (detoast the datum)
 * and a function in 17.12, which Citus 13.2.2 built with 17.12's headers
 * calls (test/citus_build.sh 17).
 * Building against headers of a newer minor release than the server is
 * outside PostgreSQL's ABI promise; test/prebuilt_pg.sh installs this only
 * into the 17.10 installation the test suite runs on.  Never ship it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;

/*
 * 17.12's access/htup_details.h declares it (HeapTupleHeader, TupleDesc:
 * two pointers) without PGDLLEXPORT; modules are built with
 * -fvisibility=hidden, so it is declared here, exported, instead.
 */
extern PGDLLEXPORT void heap_datum_check(void *tup, void *tupleDesc);

void
heap_datum_check(void *tup, void *tupleDesc)
{
}

/* 17.12's fmgr.h declares it without PGDLLEXPORT */
extern PGDLLEXPORT struct HeapTupleHeaderData *DatumGetHeapTupleHeader(Datum t);

/* what 17.10's macro of that name does */
struct HeapTupleHeaderData *
DatumGetHeapTupleHeader(Datum t)
{
	return (struct HeapTupleHeaderData *) PG_DETOAST_DATUM(t);
}
