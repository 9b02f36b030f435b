/*-------------------------------------------------------------------------
 *
 * dict.c
 *	  zstd dictionaries: the per-backend cache of digested dictionaries
 *	  (training is sql/dict_train.c's).
 *
 * Small values (a few hundred bytes of JSON, say) compress poorly and
 * slowly one by one: each zstd frame starts with an empty history and
 * carries its own entropy tables.  A dictionary trained on a sample of a
 * column supplies both, so such values shrink far more and both directions
 * run faster (figures in README's Performance section).
 *
 * A dictionary is a row of compressx.dictionaries, named by dict_id in
 * every value compressed with it (format.h).  Rows never change and stay
 * until their table is dropped (settings.c deletes them then), so a
 * backend caches digested dictionaries.  The cache is emptied on every
 * relcache invalidation of the dictionaries table: sent by the statement
 * trigger dictionaries_changed after any UPDATE, DELETE or TRUNCATE of it
 * (deleting rows sends none by itself), by settings.c's drop hook when it
 * deletes rows, and when the table is dropped (DROP EXTENSION: a new one
 * numbers its dictionaries from 1 again).  Every backend processes the
 * invalidation at its next transaction start or lock, so a deleted
 * dictionary is not used after the deletion commits: reading a value that
 * names it fails as corrupt, as in a backend that never cached it.
 *
 * Reads use SnapshotSelf: committed rows and this transaction's own, and no
 * snapshot to take (decoding runs in parallel workers too).  A value can
 * only be visible once the dictionary row it names is committed, since the
 * row is inserted before any value uses it.  Logical decoding
 * (logical/decoder.c) reads with its historic snapshot instead (a NULL
 * snapshot makes systable_beginscan() take it, registered, which also
 * lets the dictionary's TOAST value be fetched): the dictionaries table is
 * a user_catalog_table, so its rows stay, and are seen, as of the decoded
 * change, including a dictionary trained in the decoded transaction.  A
 * miss is never cached, so an id not yet visible is looked up again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <zdict.h>
#include <zstd.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "catalog/dict.h"
#include "catalog/relation.h"
#include "storage/format.h"
#include "catalog/settings.h"

PG_FUNCTION_INFO_V1(compressx_dictionaries_changed);

#define Anum_dict_id		1
#define Anum_dict_dict		4

typedef struct DictEntry
{
	int32		dict_id;		/* hash key */
	bytea	   *dict;			/* the dictionary, for CDicts at any level */
	ZSTD_DDict *ddict;
	ZSTD_CDict *cdict;			/* for cdict_level, or NULL */
	int			cdict_level;
	CxLz4Dict  *lz4;			/* for lz4, made on first use, or NULL */
} DictEntry;

static void warn_missing(int32 dict_id, const char *codec);

static HTAB *dict_cache = NULL;
static Oid	dict_cache_table = InvalidOid;	/* the table the cache came from */

static void
dict_cache_flush(void)
{
	HASH_SEQ_STATUS status;
	DictEntry  *e;

	if (dict_cache == NULL)
		return;
	hash_seq_init(&status, dict_cache);
	while ((e = hash_seq_search(&status)) != NULL)
	{
		ZSTD_freeDDict(e->ddict);
		ZSTD_freeCDict(e->cdict);
		cx_codec_lz4_dict_free(e->lz4);
		pfree(e->dict);
	}
	hash_destroy(dict_cache);
	dict_cache = NULL;
}

/*
 * Any invalidation of the dictionaries table (rows updated or deleted, the
 * table dropped with the extension, or merely vacuumed) empties the cache;
 * entries reload on demand.
 */
static void
dict_relcache_callback(Datum arg, Oid relid)
{
	if (OidIsValid(dict_cache_table) &&
		(relid == dict_cache_table || relid == InvalidOid))
	{
		dict_cache_flush();
		dict_cache_table = InvalidOid;
	}
}

static void
dict_cache_ensure(void)
{
	if (dict_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(int32);
		ctl.entrysize = sizeof(DictEntry);
		ctl.hcxt = TopMemoryContext;
		dict_cache = hash_create("compressx dictionaries", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
}

/* Read dictionary dict_id into a new cache entry; NULL if there is none. */
static DictEntry *
dict_load(int32 dict_id)
{
	static bool callback_registered = false;
	Oid			tableoid = cx_extension_table_oid("dictionaries");
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	DictEntry  *entry = NULL;

	if (!OidIsValid(tableoid))
		return NULL;
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(dict_relcache_callback, (Datum) 0);
		callback_registered = true;
	}

	/* opening tables processes invalidations, which may empty the cache */
	rel = table_open(tableoid, AccessShareLock);
	ScanKeyInit(&key, Anum_dict_id, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(dict_id));
	scan = systable_beginscan(rel, InvalidOid, false,
							  HistoricSnapshotActive() ? NULL : SnapshotSelf, 1, &key);
	tup = systable_getnext(scan);
	if (tup != NULL)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_dict_dict, RelationGetDescr(rel), &isnull);
		bytea	   *dict = NULL;
		ZSTD_DDict *ddict = NULL;
		bool		found;

		if (!isnull)
		{
			bytea	   *v = DatumGetByteaPP(d);

			dict = MemoryContextAlloc(TopMemoryContext, VARHDRSZ + VARSIZE_ANY_EXHDR(v));
			SET_VARSIZE(dict, VARHDRSZ + VARSIZE_ANY_EXHDR(v));
			memcpy(VARDATA(dict), VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
			if ((Pointer) v != DatumGetPointer(d))
				pfree(v);		/* the detoasted copy */
			if (VARSIZE(dict) > VARHDRSZ)
				ddict = cx_dict_digest(dict, 0, false);
		}
		if (ddict == NULL)
		{
			if (dict)
				pfree(dict);
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("zstd dictionary %d in compressx.dictionaries is unusable", dict_id)));
		}
		/* no catalog access from here to the return: the entry stays */
		if (tableoid != dict_cache_table)
		{
			dict_cache_flush();
			dict_cache_table = tableoid;
		}
		dict_cache_ensure();
		entry = hash_search(dict_cache, &dict_id, HASH_ENTER, &found);
		entry->dict = dict;
		entry->ddict = ddict;
		entry->cdict = NULL;
		entry->cdict_level = 0;
		entry->lz4 = NULL;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	/* (closing processes no invalidations) */
	return entry;
}

static DictEntry *
dict_find(int32 dict_id)
{
	DictEntry  *e = NULL;

	if (dict_cache != NULL)
		e = hash_search(dict_cache, &dict_id, HASH_FIND, NULL);
	return e ? e : dict_load(dict_id);
}

/* The lz4 digest of entry e, made on first use. */
static const CxLz4Dict *
dict_lz4(DictEntry *e)
{
	if (e->lz4 == NULL)
	{
		e->lz4 = cx_codec_lz4_dict_create(VARDATA(e->dict), VARSIZE(e->dict) - VARHDRSZ);
		if (e->lz4 == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("dictionary %d in compressx.dictionaries is unusable for lz4", e->dict_id)));
	}
	return e->lz4;
}

/* Decoding's lookup (format.h): the digest for codec_id. */
static const void *
dict_for_decode(int32 dict_id, int codec_id)
{
	DictEntry  *e = dict_id > 0 ? dict_find(dict_id) : NULL;

	if (e == NULL)
		return NULL;
	return codec_id == CX_CODEC_LZ4 ? (const void *) dict_lz4(e) : (const void *) e->ddict;
}

void
cx_dict_init(void)
{
	cx_set_ddict_lookup(dict_for_decode);
}

const void *
cx_dict_ddict(int32 dict_id)
{
	return dict_for_decode(dict_id, CX_CODEC_ZSTD);
}

const void *
cx_dict_for_encode(int32 dict_id, const CxCodec *codec, int level)
{
	DictEntry  *e;

	if (codec->id == CX_CODEC_ZSTD)
		return cx_dict_cdict(dict_id, level);
	Assert(codec->id == CX_CODEC_LZ4);
	e = dict_find(dict_id);
	if (e == NULL)
	{
		warn_missing(dict_id, "lz4");
		return NULL;
	}
	return dict_lz4(e);
}

/*
 * A setting may name a dictionary not (yet) there: pg_restore -j can load
 * the settings and a table's rows before the dictionaries.  Values are then
 * compressed without one, which is always safe; VACUUM FULL applies the
 * dictionary later.  Warn once per backend and dictionary.
 */
static void
warn_missing(int32 dict_id, const char *codec)
{
	static int32 warned_id = 0;

	if (warned_id != dict_id)
		ereport(WARNING,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("%s dictionary %d does not exist; compressing without it", codec, dict_id),
				 errhint("Train a new one with compressx.train_dictionary(), or reset the column with compressx.reset_column_codec().")));
	warned_id = dict_id;
}

const void *
cx_dict_cdict(int32 dict_id, int level)
{
	DictEntry  *e = dict_find(dict_id);

	if (e == NULL)
	{
		warn_missing(dict_id, "zstd");
		return NULL;
	}
	if (e->cdict == NULL || e->cdict_level != level)
	{
		ZSTD_freeCDict(e->cdict);
		e->cdict = cx_dict_digest(e->dict, level, true);
		if (e->cdict == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not digest zstd dictionary %d.", dict_id)));
		e->cdict_level = level;
	}
	return e->cdict;
}

/*
 * Statement trigger on compressx.dictionaries, after UPDATE, DELETE or
 * TRUNCATE: invalidate the table's relcache entry, which every backend's
 * dict_relcache_callback sees when the transaction commits.
 */
Datum
compressx_dictionaries_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "compressx_dictionaries_changed: not called by trigger manager");
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}

void *
cx_dict_digest(const bytea *dict, int level, bool for_compress)
{
	return for_compress ?
		(void *) ZSTD_createCDict(VARDATA_ANY(dict), VARSIZE_ANY_EXHDR(dict), level) :
		(void *) ZSTD_createDDict(VARDATA_ANY(dict), VARSIZE_ANY_EXHDR(dict));
}

void
cx_dict_free_digested(void *cdict, void *ddict)
{
	ZSTD_freeCDict((ZSTD_CDict *) cdict);
	ZSTD_freeDDict((ZSTD_DDict *) ddict);
}
