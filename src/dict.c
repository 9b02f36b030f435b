/*-------------------------------------------------------------------------
 *
 * dict.c
 *	  zstd dictionaries: compressx.train_dictionary() and the per-backend
 *	  cache of digested dictionaries.
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
 * row is inserted before any value uses it.
 *
 * train_dictionary() locks the table ShareUpdateExclusiveLock, as
 * set_column_codec() does, and reads a block sample of the column.
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

#include "am.h"
#include "dict.h"
#include "format.h"
#include "inspect.h"
#include "settings.h"

PG_FUNCTION_INFO_V1(compressx_train_dictionary);
PG_FUNCTION_INFO_V1(compressx_dictionaries_changed);

#define Anum_dict_id		1
#define Anum_dict_dict		4

/* Limits of training samples: each value's first bytes, and the total. */
#define SAMPLE_VALUE_MAX	(128 * 1024)
#define SAMPLE_TOTAL_MAX	(64 * 1024 * 1024)

/*
 * Fewest non-empty values zstd's trainer accepts: it keeps a quarter of
 * them apart to test candidate dictionaries on, and needs at least five to
 * train on and one to test (fewer: "Src size is incorrect").  A useful
 * dictionary needs far more; this is only where training cannot start.
 */
#define DICT_MIN_VALUES		7

typedef struct DictEntry
{
	int32		dict_id;		/* hash key */
	bytea	   *dict;			/* the dictionary, for CDicts at any level */
	ZSTD_DDict *ddict;
	ZSTD_CDict *cdict;			/* for cdict_level, or NULL */
	int			cdict_level;
} DictEntry;

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
	scan = systable_beginscan(rel, InvalidOid, false, SnapshotSelf, 1, &key);
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

const void *
cx_dict_ddict(int32 dict_id)
{
	DictEntry  *e = dict_id > 0 ? dict_find(dict_id) : NULL;

	return e ? e->ddict : NULL;
}

const void *
cx_dict_cdict(int32 dict_id, int level)
{
	static int32 warned_id = 0;
	DictEntry  *e = dict_find(dict_id);

	/*
	 * A setting may name a dictionary not (yet) there: pg_restore -j can load
	 * the settings and a table's rows before the dictionaries.  Values are
	 * then compressed without one, which is always safe; VACUUM FULL applies
	 * the dictionary later.  Warn once per backend and dictionary.
	 */
	if (e == NULL)
	{
		if (warned_id != dict_id)
			ereport(WARNING,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("zstd dictionary %d does not exist; compressing without it", dict_id),
					 errhint("Train a new one with compressx.train_dictionary(), or reset the column with compressx.reset_column_codec().")));
		warned_id = dict_id;
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
		size_t		vlen = Min(VARSIZE_ANY_EXHDR(plain), SAMPLE_VALUE_MAX);

		if (vlen == 0 || samples.len + vlen > SAMPLE_TOTAL_MAX)
			continue;
		appendBinaryStringInfo(&samples, VARDATA_ANY(plain), vlen);
		sizes[n++] = vlen;
	}
	*nsamples = (int32) n;
	*nbytes = samples.len;
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

/*
 * compressx.train_dictionary(rel regclass, column_name name,
 *							  dict_size int DEFAULT 16384,
 *							  sample_rows int DEFAULT 10000) RETURNS int
 *
 * Trains a zstd dictionary of at most dict_size bytes on the plain values
 * of a block sample of about sample_rows rows, stores it, and makes it the
 * dictionary of the column's new values (the column's setting becomes
 * explicit: zstd at its current level).  Existing values keep theirs until
 * VACUUM FULL, CLUSTER or recompress_table re-encodes them.
 */
Datum
compressx_train_dictionary(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *column;
	int32		dict_size;
	int32		sample_rows;
	Relation	rel;
	AttrNumber	attnum;
	CxColumnSetting *settings;
	List	   *plains = NIL;
	List	   *sample;
	int			nvalues = 0;
	int64		kept = 0;
	int32		nsamples;
	int64		nbytes;
	const char *error = NULL;
	ListCell   *lc;
	Oid			types[7] = {OIDOID, NAMEOID, BYTEAOID, INT4OID, INT8OID, INT2OID, INT4OID};
	Datum		values[7];
	bytea	   *dictval;
	NameData	attname;
	int32		dict_id;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("arguments of compressx.train_dictionary must not be null")));
	relid = PG_GETARG_OID(0);
	column = NameStr(*PG_GETARG_NAME(1));
	dict_size = PG_GETARG_INT32(2);
	sample_rows = PG_GETARG_INT32(3);
	if (dict_size < 1024 || dict_size > 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dict_size must be between 1024 and 1048576 bytes")));
	if (sample_rows < 1 || sample_rows > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample_rows must be between 1 and 1000000")));

	if (cx_check_settings_target(relid) == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot train a dictionary for partitioned table \"%s\"",
						get_rel_name(relid)),
				 errhint("Train one for each partition.")));
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	cx_check_settings_target(relid);
	rel = table_open(relid, NoLock);
	if (!cx_is_compressx_relation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("table \"%s\" is not stored by the compressx access method",
						RelationGetRelationName(rel)),
				 errhint("ALTER TABLE %s SET ACCESS METHOD compressx",
						 quote_identifier(RelationGetRelationName(rel)))));
	attnum = cx_check_settings_column(relid, column);
	settings = palloc(sizeof(CxColumnSetting) * RelationGetDescr(rel)->natts);
	cx_resolve_settings(rel, settings);
	if (settings[attnum - 1].codec->id != CX_CODEC_ZSTD)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" of relation \"%s\" is compressed with %s, and dictionaries serve zstd only",
						column, RelationGetRelationName(rel),
						settings[attnum - 1].codec->name),
				 errhint("Choose zstd first: SELECT compressx.set_column_codec('%s', '%s', 'zstd');",
						 RelationGetRelationName(rel), column)));

	/* the plain values of a block sample */
	sample = cx_sample_tuples(rel, GetActiveSnapshot(), sample_rows, sample_rows);
	foreach(lc, sample)
	{
		HeapTuple	tuple = (HeapTuple) lfirst(lc);
		bool		isnull;
		Datum		d = heap_getattr(tuple, attnum, RelationGetDescr(rel), &isnull);

		struct varlena *plain;
		struct varlena *cut;
		int32		len;

		CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;
		/* keep only what training uses: each value's start, 64 MB in all */
		plain = cx_plain_value((struct varlena *) DatumGetPointer(d), relid, column);
		len = Min(VARSIZE_ANY_EXHDR(plain), SAMPLE_VALUE_MAX);
		if (kept + len > SAMPLE_TOTAL_MAX)
			break;
		cut = palloc(VARHDRSZ + len);
		SET_VARSIZE(cut, VARHDRSZ + len);
		memcpy(VARDATA(cut), VARDATA_ANY(plain), len);
		if (plain != (struct varlena *) DatumGetPointer(d))
			pfree(plain);
		plains = lappend(plains, cut);
		kept += len;
		if (len > 0)
			nvalues++;
	}
	CHECK_FOR_INTERRUPTS();

	/* an empty or all-NULL column: say so, rather than relay zstd's error */
	if (nvalues < DICT_MIN_VALUES)
	{
		if (sample == NIL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("too few values in column \"%s\" of relation \"%s\" to train a zstd dictionary",
							column, RelationGetRelationName(rel)),
					 errdetail("The table has no rows; training needs at least %d non-empty values.",
							   DICT_MIN_VALUES),
					 errhint("Load rows into the table first: a useful dictionary needs many values, together many times dict_size.")));
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("too few values in column \"%s\" of relation \"%s\" to train a zstd dictionary",
						column, RelationGetRelationName(rel)),
				 errdetail_plural("The %d row sampled holds %d non-empty values of the column; training needs at least %d.",
								  "The %d rows sampled hold %d non-empty values of the column; training needs at least %d.",
								  list_length(sample),
								  list_length(sample), nvalues, DICT_MIN_VALUES),
				 errhint("Load more rows, or raise sample_rows: a useful dictionary needs many values, together many times dict_size.")));
	}

	dictval = cx_dict_train(plains, dict_size, &nsamples, &nbytes, &error);
	if (dictval == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not train a zstd dictionary for column \"%s\" of relation \"%s\"",
						column, RelationGetRelationName(rel)),
				 errdetail("zstd reports \"%s\" on a sample of %d values, " INT64_FORMAT " bytes.",
						   error, nsamples, nbytes),
				 errhint("Training needs many values, together many times dict_size: load more rows, raise sample_rows or lower dict_size.")));

	namestrcpy(&attname, column);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = NameGetDatum(&attname);
	values[2] = PointerGetDatum(dictval);
	values[3] = Int32GetDatum(nsamples);
	values[4] = Int64GetDatum(nbytes);
	values[5] = Int16GetDatum(attnum);
	values[6] = Int32GetDatum(settings[attnum - 1].level);
	dict_id = cx_settings_exec(
		"WITH d AS (INSERT INTO compressx.dictionaries "
		"(relid, attname, dict, sample_values, sample_bytes) "
		"VALUES ($1::pg_catalog.oid::pg_catalog.regclass, $2, $3, $4, $5) RETURNING dict_id), "
		"s AS (INSERT INTO compressx.column_settings AS s "
		"(relid, attname, attnum, codec, level, dict_id) "
		"SELECT $1::pg_catalog.oid::pg_catalog.regclass, $2, $6, 'zstd', $7, d.dict_id FROM d "
		"ON CONFLICT (relid, attname) DO UPDATE SET dict_id = EXCLUDED.dict_id) "
		"SELECT dict_id FROM d",
		7, types, values, NULL);
	if (dict_id <= 0)
		elog(ERROR, "could not store the zstd dictionary");

	table_close(rel, NoLock);
	PG_RETURN_INT32(dict_id);
}
