/*-------------------------------------------------------------------------
 *
 * compressx.c
 *	  Module initialization: each layer registers its settings (GUCs, all
 *	  prefixed compressx.) and caches.
 *
 * The source tree is layered; a layer uses only the layers below it:
 *
 *	  sql/		 SQL-facing operations: recompress_table, inspection and
 *				 ratios, verify, advise, frame functions, dictionary training,
 *				 automatic dictionaries and their background worker
 *	  logical/	 logical decoding: the output plugins that decode compressx
 *				 values (beside sql/, using the layers below)
 *	  am/		 the table access method: handler, slot, writes, index
 *				 builds, rewrites
 *	  catalog/	 compressx's tables: per-column settings (cached per
 *				 relation), the dictionary cache, which relations are
 *				 compressx's, when the automatic dictionary worker starts
 *	  storage/	 codecs, and the stored format of one value
 *	  compat.h	 version differences, usable by every layer
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "am/am.h"
#include "am/rewrite.h"
#include "catalog/citus.h"
#include "catalog/dict.h"
#include "catalog/dict_auto.h"
#include "catalog/settings.h"
#include "logical/decoder.h"
#include "sql/inspect.h"
#include "storage/codec.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	cx_codec_init();
	cx_settings_init();
	cx_dict_init();
	cx_autodict_init();
	cx_rewrite_init();
	cx_write_init();
	cx_inspect_init();
	cx_decoder_init();
	cx_citus_init();

	MarkGUCPrefixReserved("compressx");
}
