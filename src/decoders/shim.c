/*-------------------------------------------------------------------------
 *
 * shim.c
 *	  A small output plugin library that wraps the plugin CX_INNER (a library
 *	  name as LOAD takes it, given at build time) with compressx's decoding
 *	  (src/logical/decoder.c, in compressx's own library).
 *
 * The Makefile builds it under several names:
 *	  compressx_test_decoding	test_decoding, wrapped
 *	  compressx_decoders/pgoutput, compressx_decoders/test_decoding
 *								the same plugins under their own names, for
 *								a server that puts $libdir/compressx_decoders
 *								first on dynamic_library_path
 *								(doc/logical-replication.md)
 * Each loads its inner plugin by its full path in the library directory
 * (pkglib_path), so a wrapper found first on dynamic_library_path never
 * loads itself again.  ("$libdir/name" would not do: since PostgreSQL 18
 * such a name is looked up on dynamic_library_path too.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "replication/output_plugin.h"

#ifndef CX_INNER
#error "build with -DCX_INNER='\"<plugin library name>\"'"
#endif

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

typedef void (*CxWrapFunction) (OutputPluginCallbacks *cb, const char *inner_library);

void
_PG_output_plugin_init(OutputPluginCallbacks *cb)
{
	CxWrapFunction wrap;
	char		inner[MAXPGPATH];

	snprintf(inner, sizeof(inner), "%s/%s", pkglib_path, CX_INNER);
	wrap = (CxWrapFunction) load_external_function("$libdir/compressx",
												   "cx_wrap_output_plugin",
												   true, NULL);
	wrap(cb, inner);
}
