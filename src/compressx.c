/*-------------------------------------------------------------------------
 *
 * compressx.c
 *	  Module initialization: each layer registers its settings (GUCs, all
 *	  prefixed compressx.) and caches.
 *
 * The source tree is layered; a layer uses only the layers below it, and a
 * feature's folder stands above the layers it uses (doc/design/layout.md;
 * test/check_layers.sh checks it):
 *
 *	  online/		 recompress_online: procedure, steps, moves, record of runs
 *	  dictionaries/	 train_dictionary, automatic dictionaries, pruning, worker
 *	  sql/			 the plain SQL functions: recompress_table, inspection and
 *					 ratios, verify, advise, frames, progress, uninstall
 *	  logical/		 logical decoding: the output plugins that decode compressx
 *					 values (beside sql/)
 *	  citus/		 Citus: which table a shard follows, sending settings,
 *					 fan-out of functions to the shards
 *	  am/			 the table access method: handler, slot, writes, index
 *					 builds, rewrites
 *	  catalog/		 compressx's tables: per-column settings (cached per
 *					 relation, mirrored as security labels for dumps), dictionaries and their cache, which relations
 *					 are compressx's, when the automatic dictionary worker starts
 *	  storage/		 codecs, and the stored format of one value
 *	  compat.h		 version differences, usable by every layer
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "am/progress.h"
#include "am/am.h"
#include "am/rewrite.h"
#include "catalog/attcompression.h"
#include "citus/citus.h"
#include "catalog/dict.h"
#include "catalog/dict_auto.h"
#include "catalog/label.h"
#include "catalog/settings.h"
#include "citus/citus.h"
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
	cx_attcompression_init();
	cx_dict_init();
	cx_autodict_init();
	cx_label_init();
	cx_rewrite_init();
	cx_progress_init();
	cx_write_init();
	cx_inspect_init();
	cx_decoder_init();
	cx_citus_init();

	MarkGUCPrefixReserved("compressx");
}
