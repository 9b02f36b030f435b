/*-------------------------------------------------------------------------
 *
 * compressx.c
 *	  Module initialization and settings (GUCs, all prefixed compressx.).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "compressx.h"
#include "settings.h"

PG_MODULE_MAGIC;

int			cx_ratio_sample_rows = 3000;
int			cx_sample_memory_kb = 256 * 1024;
int			cx_debug_rewrite_delay_ms = 0;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("compressx.ratio_sample_rows",
							"Rows sampled per table by the compressx ratio views.",
							"The views read blocks holding about this many rows of each table; "
							"compressx.column_stats() with sample_rows NULL reads every row.",
							&cx_ratio_sample_rows,
							3000, 1, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("compressx.sample_memory",
							"Memory a sample of rows may take in compressx.advise() and compressx.train_dictionary().",
							"A sample that needs more stops with an error: ask for fewer rows or raise this setting.",
							&cx_sample_memory_kb,
							256 * 1024, 1024, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("compressx.debug_rewrite_delay",
							"Sleeps this long after every 64 tuples a rewrite copies (testing aid).",
							"Used by compressx's crash tests to stop the server mid-rewrite.",
							&cx_debug_rewrite_delay_ms,
							0, 0, 60000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);

	cx_settings_init();

	MarkGUCPrefixReserved("compressx");
}

PG_FUNCTION_INFO_V1(compressx_ratio_sample_rows);

/*
 * compressx.ratio_sample_rows(): the GUC's value, callable from the views
 * before the library has been loaded in this backend.
 */
Datum
compressx_ratio_sample_rows(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(cx_ratio_sample_rows);
}
