/*-------------------------------------------------------------------------
 *
 * decoder.h
 *	  Logical decoding of compressx tables: the wrapping output plugin.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DECODER_H
#define COMPRESSX_DECODER_H

#include "replication/output_plugin.h"

/*
 * Fill cb with the callbacks of the output plugin in library inner_library
 * (a name as LOAD takes it), wrapped so that compressx values reach it
 * decoded.  The slot plugin "compressx" is pgoutput wrapped; the small
 * libraries built from src/decoders/shim.c wrap other plugins through it.
 */
/* the entry point of every output plugin (15's header does not declare it) */
extern PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

extern PGDLLEXPORT void cx_wrap_output_plugin(OutputPluginCallbacks *cb,
											  const char *inner_library);

/*
 * At load: warn when the library is loaded by a decoding slot whose plugin
 * is not a wrapper (it cannot decode compressx's zstd values).
 */
extern void cx_decoder_init(void);

#endif							/* COMPRESSX_DECODER_H */
