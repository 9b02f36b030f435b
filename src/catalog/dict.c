/*-------------------------------------------------------------------------
 *
 * dict.c
 *	  zstd dictionaries: the per-backend cache of digested dictionaries
 *	  (training is dictionaries/train.c's).
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
 * backend caches digested dictionaries.
 *
 * The cache is bounded by compressx.dictionary_cache_memory: a role can
 * make as many dictionaries as it likes on its own tables (one row written
 * with each), and every backend that reads them (a superuser's ANALYZE or
 * pg_dump, autovacuum, a pooled session) would otherwise keep all of them
 * digested for the rest of its life.  An entry counts the bytes of its
 * dictionary and of its digests as zstd and lz4 report them
 * (ZSTD_sizeof_DDict/CDict: a level-22 CDict takes megabytes); when the
 * total passes the bound, least recently used entries are freed, never the
 * one the current call uses: the digest a lookup returns stays valid until
 * the next lookup, which is all any caller needs (one value is encoded or
 * decoded between two lookups).  Evictions give their memory back to the
 * system (dict_cache_shrink).  A backend's resident size also grows by the
 * shared buffers it reads dictionaries through (1 MB each), as for any
 * read of them; those are the server's, mapped, not the cache's.  The digests reference the entry's copy of
 * the dictionary instead of copying it again.  Freed entries load again on
 * demand; while the dictionaries in use fit, the bound costs nothing.
 *
 * The cache is emptied on every
 * relcache invalidation of the dictionaries table: sent by the statement
 * trigger dictionaries_changed after any UPDATE, DELETE or TRUNCATE of it
 * (deleting rows sends none by itself), by settings.c's drop hook when it
 * deletes rows, and when the table is dropped (DROP EXTENSION: a new one
 * numbers its dictionaries from 1 again).  Every backend processes the
 * invalidation at its next transaction start or lock, so a deleted
 * dictionary is not used after the deletion commits: reading a value that
 * names it fails as corrupt, as in a backend that never cached it.
 *
 * Reads use a catalog snapshot (systable_beginscan() takes a fresh MVCC
 * one, also in parallel workers): the rows committed now, and this
 * transaction's own up to its last command (dictionaries are stored
 * through SPI, which advances the command counter).  A value can only be
 * visible once the dictionary row it names is committed, since the row is
 * inserted before any value uses it; an MVCC snapshot sees exactly one
 * version of a row updated concurrently (shared = true, say), where
 * SnapshotSelf could miss both.  Logical decoding
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

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <zdict.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_createDDict_byReference, ..CDict_byReference */
#include <zstd.h>

#include "commands/trigger.h"
#include "funcapi.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"

#include "catalog/dict.h"
#include "catalog/relation.h"
#include "storage/format.h"

PG_FUNCTION_INFO_V1(compressx_dictionaries_changed);
PG_FUNCTION_INFO_V1(compressx_dictionary_cache);

#define Anum_dict_id		1
#define Anum_dict_dict		4

typedef struct DictEntry
{
	int32		dict_id;		/* hash key */
	bytea	   *dict;			/* the dictionary, for CDicts at any level */
	ZSTD_DDict *ddict;			/* references dict */
	ZSTD_CDict *cdict;			/* for cdict_level, or NULL; references dict */
	int			cdict_level;
	CxLz4Dict  *lz4;			/* for lz4, made on first use, or NULL */
	Size		bytes;			/* what all of the above take */
	dlist_node	lru;			/* in dict_lru, most recently used first */
} DictEntry;

static void warn_missing(int32 dict_id, const char *codec);

static HTAB *dict_cache = NULL;
static Oid	dict_cache_table = InvalidOid;	/* the table the cache came from */
static MemoryContext dict_cxt = NULL;	/* the table, dictionaries, lz4 digests */
static dlist_head dict_lru = DLIST_STATIC_INIT(dict_lru);
static Size dict_cache_bytes = 0;	/* sum of the entries' bytes */
static DictEntry *dict_in_use = NULL;	/* the entry the last lookup returned */

/* compressx.dictionary_cache_memory, in kB */
static int	cx_dict_cache_kb = 64 * 1024;

static void
entry_free(DictEntry *e)
{
	/* the digests first: they reference the dictionary */
	ZSTD_freeDDict(e->ddict);
	ZSTD_freeCDict(e->cdict);
	cx_codec_lz4_dict_free(e->lz4);
	pfree(e->dict);
}

static void
dict_cache_flush(void)
{
	HASH_SEQ_STATUS status;
	DictEntry  *e;

	if (dict_cache == NULL)
		return;
	hash_seq_init(&status, dict_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		entry_free(e);
	hash_destroy(dict_cache);
	dict_cache = NULL;
	dlist_init(&dict_lru);
	dict_cache_bytes = 0;
	dict_in_use = NULL;
}

/*
 * Free least recently used entries until the cache fits its bound, keeping
 * the one in use (which alone may be larger than the bound).
 */
static void
dict_cache_shrink(void)
{
	Size		limit = (Size) cx_dict_cache_kb * 1024;
	Size		before PG_USED_FOR_ASSERTS_ONLY = dict_cache_bytes;
	dlist_node *node;

	if (dict_cache_bytes <= limit || dict_cache == NULL || dlist_is_empty(&dict_lru))
		return;
	/* from the least recently used end */
	node = dlist_tail_node(&dict_lru);
	while (dict_cache_bytes > limit && node != &dict_lru.head)
	{
		DictEntry  *e = dlist_container(DictEntry, lru, node);

		node = node->prev;
		if (e == dict_in_use)
			continue;
		dlist_delete(&e->lru);
		dict_cache_bytes -= e->bytes;
		entry_free(e);
		(void) hash_search(dict_cache, &e->dict_id, HASH_REMOVE, NULL);
	}

	/*
	 * Give the freed memory back to the system.  A dictionary's copy is one
	 * malloc'd block (above the allocation set's chunk limit), and zstd's
	 * digests are malloc'd too; once glibc has freed one large mmap'd block
	 * it serves blocks of that size from the heap instead, where a freed
	 * block below a live one is not returned: a 16 MB cache of 1 MB
	 * dictionaries shrunk to 1 MB left the backend 9 MB larger
	 * (test/t/042_dict_cache_rss.pl).  malloc_trim() returns the free pages
	 * of the heap too.  Only after a megabyte or more was freed: it walks
	 * the heap.
	 */
#ifdef __GLIBC__
	if (before - dict_cache_bytes >= 1024 * 1024)
		malloc_trim(0);
#endif
}

/* Entry e is in use and takes delta more bytes (or fewer): keep the bound. */
static void
entry_grew(DictEntry *e, ssize_t delta)
{
	e->bytes += delta;
	dict_cache_bytes += delta;
	dict_in_use = e;
	dict_cache_shrink();
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
	if (dict_cxt == NULL)
		dict_cxt = AllocSetContextCreate(TopMemoryContext, "compressx dictionary cache",
										 ALLOCSET_DEFAULT_SIZES);
	if (dict_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(int32);
		ctl.entrysize = sizeof(DictEntry);
		ctl.hcxt = dict_cxt;
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
	/* NULL: a catalog snapshot, or the historic one while decoding */
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
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

			dict_cache_ensure();
			dict = MemoryContextAlloc(dict_cxt, VARHDRSZ + VARSIZE_ANY_EXHDR(v));
			SET_VARSIZE(dict, VARHDRSZ + VARSIZE_ANY_EXHDR(v));
			memcpy(VARDATA(dict), VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
			if ((Pointer) v != DatumGetPointer(d))
				pfree(v);		/* the detoasted copy */
			if (VARSIZE(dict) > VARHDRSZ)
				ddict = ZSTD_createDDict_byReference(VARDATA(dict), VARSIZE(dict) - VARHDRSZ);
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
		if (found)
			elog(ERROR, "compressx dictionary %d is cached twice", dict_id);
		entry->dict = dict;
		entry->ddict = ddict;
		entry->cdict = NULL;
		entry->cdict_level = 0;
		entry->lz4 = NULL;
		entry->bytes = 0;
		dlist_push_head(&dict_lru, &entry->lru);
		entry_grew(entry, sizeof(DictEntry) + VARSIZE(dict) + ZSTD_sizeof_DDict(ddict));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	/* (closing processes no invalidations) */
	return entry;
}

/*
 * The entry of dict_id, now the most recently used and the one in use, or
 * NULL when there is no such dictionary.
 */
static DictEntry *
dict_find(int32 dict_id)
{
	DictEntry  *e = NULL;

	if (dict_cache != NULL)
		e = hash_search(dict_cache, &dict_id, HASH_FIND, NULL);
	if (e == NULL)
		return dict_load(dict_id);
	dlist_move_head(&dict_lru, &e->lru);
	dict_in_use = e;
	/* the bound may have been lowered since the last load */
	dict_cache_shrink();
	return e;
}

/* The lz4 digest of entry e, made on first use. */
static const CxLz4Dict *
dict_lz4(DictEntry *e)
{
	if (e->lz4 == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(dict_cxt);

		e->lz4 = cx_codec_lz4_dict_create(VARDATA(e->dict), VARSIZE(e->dict) - VARHDRSZ);
		MemoryContextSwitchTo(old);
		if (e->lz4 == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("dictionary %d in compressx.dictionaries is unusable for lz4", e->dict_id)));
		entry_grew(e, cx_codec_lz4_dict_size());
	}
	return e->lz4;
}

/*
 * Decoding's lookup (format.h): the digest for codec_id; NULL (reported as
 * corrupt) for a codec that takes no dictionary.
 */
static const void *
dict_for_decode(int32 dict_id, int codec_id)
{
	DictEntry  *e;

	if (codec_id != CX_CODEC_LZ4 && codec_id != CX_CODEC_ZSTD)
		return NULL;
	e = dict_id > 0 ? dict_find(dict_id) : NULL;
	if (e == NULL)
		return NULL;
	return codec_id == CX_CODEC_LZ4 ? (const void *) dict_lz4(e) : (const void *) e->ddict;
}

void
cx_dict_init(void)
{
	DefineCustomIntVariable("compressx.dictionary_cache_memory",
							"Memory each session may keep for digested compression dictionaries.",
							"Least recently used dictionaries are dropped from the cache beyond it "
							"and loaded again when needed; the one in use is always kept.",
							&cx_dict_cache_kb, 64 * 1024, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
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
		ssize_t		delta = -(ssize_t) ZSTD_sizeof_CDict(e->cdict);

		ZSTD_freeCDict(e->cdict);
		e->cdict = ZSTD_createCDict_byReference(VARDATA(e->dict), VARSIZE(e->dict) - VARHDRSZ,
												level);
		if (e->cdict == NULL)
		{
			entry_grew(e, delta);
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not digest zstd dictionary %d.", dict_id)));
		}
		e->cdict_level = level;
		entry_grew(e, delta + (ssize_t) ZSTD_sizeof_CDict(e->cdict));
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

/*
 * compressx.dictionary_cache(): this session's cache of digested
 * dictionaries: how many, the bytes they take and the bound
 * (compressx.dictionary_cache_memory), in one row.
 */
Datum
compressx_dictionary_cache(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(dict_cache ? hash_get_num_entries(dict_cache) : 0);
	values[1] = Int64GetDatum((int64) dict_cache_bytes);
	values[2] = Int64GetDatum((int64) cx_dict_cache_kb * 1024);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
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

bytea *
cx_dict_train(List *plain_values, int32 dict_size, int32 *nsamples,
			  int64 *nbytes, const char **error)
{
	StringInfoData samples;
	size_t	   *sizes = palloc(sizeof(size_t) * Max(list_length(plain_values), 1));
	unsigned	n = 0;
	ListCell   *lc;
	bytea	   *dict = palloc(VARHDRSZ + dict_size);
	size_t		len;

	initStringInfo(&samples);
	foreach(lc, plain_values)
	{
		struct varlena *plain = (struct varlena *) lfirst(lc);
		size_t		vlen = Min(VARSIZE_ANY_EXHDR(plain), CX_SAMPLE_VALUE_MAX);

		if (vlen < CX_DICT_MIN_SAMPLE || samples.len + vlen > CX_SAMPLE_TOTAL_MAX)
			continue;
		appendBinaryStringInfo(&samples, VARDATA_ANY(plain), vlen);
		sizes[n++] = vlen;
	}
	*nsamples = (int32) n;
	*nbytes = samples.len;
	if (n < CX_DICT_MIN_VALUES)
	{
		*error = psprintf("only %u values of %d bytes or more, training needs %d",
						  n, CX_DICT_MIN_SAMPLE, CX_DICT_MIN_VALUES);
		pfree(samples.data);
		pfree(sizes);
		pfree(dict);
		return NULL;
	}
	len = ZDICT_trainFromBuffer(VARDATA(dict), dict_size, samples.data, sizes, n);
	pfree(samples.data);
	pfree(sizes);
	if (ZDICT_isError(len))
	{
		*error = ZDICT_getErrorName(len);
		pfree(dict);
		return NULL;
	}
	SET_VARSIZE(dict, VARHDRSZ + len);
	return dict;
}
