/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  Per-column codec settings: compressx.set_column_codec(),
 *	  compressx.reset_column_codec(), their cache, and the GUC defaults.
 *
 * Settings live in the extension table compressx.column_settings, keyed by
 * (relid regclass, attnum): a column keeps its settings through any rename
 * by construction.  pg_dump writes regclass values as names, so a restore
 * maps them to the new OIDs, and config-dump marks the rows for dumping;
 * attname is what identifies the column across a dump and restore (the
 * restored database numbers columns afresh: the trigger
 * compressx.settings_fix_attnum takes attnum from it).  The event trigger
 * compressx.on_ddl_end keeps attname in step with renames; as attname is
 * not part of the key, that update cannot fail whatever order renames came
 * in.  A row trigger invalidates the relcache of the table whose settings
 * change; the per-relation cache here is dropped on that invalidation.
 *
 * Precedence for a column: its row in compressx.column_settings, else, on a
 * table that is a compressx table, the column's own COMPRESSION (pglz or
 * lz4, from CREATE TABLE or ALTER TABLE .. SET COMPRESSION), else the GUCs
 * compressx.default_codec / default_level.  A heap table's COMPRESSION is
 * heap's: a table moving to compressx does not keep it (attcompression.c).
 * The row trigger keeps attcompression of compressx tables in step with
 * their rows (what \d+ shows).
 *
 * A rewrite applies the settings of the table it rebuilds: VACUUM FULL,
 * CLUSTER and recompress_table name it; the transient heap of ALTER TABLE
 * ("pg_temp_<oid>") is matched to it under conditions only ALTER TABLE
 * meets (cx_settings_relid).
 *
 * Settings go with their table or column, and follow renames: see
 * settings_cleanup.c.  Temporary tables cannot have settings: they are
 * dropped without event triggers at session end, or by autovacuum after a
 * crash.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/toast_compression.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "nodes/makefuncs.h"
#include "catalog/objectaccess.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "funcapi.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "storage/format.h"
#include "catalog/relation.h"
#include "catalog/settings.h"
#include "catalog/dict_dropped.h"

PG_FUNCTION_INFO_V1(compressx_set_column_codec);
PG_FUNCTION_INFO_V1(compressx_set_column_inline);
PG_FUNCTION_INFO_V1(compressx_reset_column_codec);
PG_FUNCTION_INFO_V1(compressx_column_codec_settings);
PG_FUNCTION_INFO_V1(compressx_settings_changed);

int			cx_default_codec = CX_CODEC_ZSTD;
int			cx_default_level = 0;
int			cx_min_size = 64;
int			cx_inline_max = 1024;

const CxDistributionHooks *cx_distribution = NULL;

/* After a change of relid's settings: other nodes get it (a distributed table). */
static void
distribution_push(Oid relid)
{
	if (cx_distribution)
		cx_distribution->push(relid);
}

const struct config_enum_entry cx_codec_options[] = {
	{"none", CX_CODEC_NONE, false},
	{"pglz", CX_CODEC_PGLZ, false},
	{"lz4", CX_CODEC_LZ4, false},
	{"zstd", CX_CODEC_ZSTD, false},
	{NULL, 0, false}
};

typedef struct CachedSetting
{
	AttrNumber	attnum;
	int			codec_id;
	int			level;			/* -1000: NULL */
	int			min_size;		/* -1: NULL */
	int32		dict_id;		/* 0: NULL */
	bool		dict_auto;		/* auto_dictionary (false before 0.4.0) */
	int			inline_max;		/* -1: NULL (always before 0.4.0) */
	bool		restore_pending;	/* restored_dict set (since 0.5.0) */
} CachedSetting;

#define LEVEL_NULL (-1000)

typedef struct SettingsEntry
{
	Oid			relid;			/* hash key */
	int			count;
	CachedSetting *items;		/* in CacheMemoryContext */
} SettingsEntry;

static HTAB *settings_cache = NULL;

static void
settings_invalidate(Datum arg, Oid relid)
{
	SettingsEntry *entry;

	/*
	 * The distribution layer hears of invalidations through this callback:
	 * PostgreSQL has room for ten relcache callbacks per process, shared
	 * with Citus and every other library.
	 */
	if (OidIsValid(relid) && cx_distribution)
		cx_distribution->invalidated(relid);
	if (settings_cache == NULL)
		return;
	if (OidIsValid(relid))
	{
		entry = hash_search(settings_cache, &relid, HASH_FIND, NULL);
		if (entry)
		{
			if (entry->items)
				pfree(entry->items);
			hash_search(settings_cache, &relid, HASH_REMOVE, NULL);
		}
	}
	else
	{
		HASH_SEQ_STATUS status;

		hash_seq_init(&status, settings_cache);
		while ((entry = hash_seq_search(&status)) != NULL)
		{
			if (entry->items)
				pfree(entry->items);
			hash_search(settings_cache, &entry->relid, HASH_REMOVE, NULL);
		}
	}
}

/* compressx.default_codec: lz4 only on a server built with lz4. */
static bool
check_default_codec(int *newval, void **extra, GucSource source)
{
	if (*newval == CX_CODEC_LZ4 && !cx_codec_core_has_lz4())
	{
		GUC_check_errcode(ERRCODE_FEATURE_NOT_SUPPORTED);
		GUC_check_errmsg("codec \"lz4\" is not available: this server was built without lz4");
		GUC_check_errdetail("Columns set to lz4 store their values in PostgreSQL's own lz4 format, which only a server built with lz4 (configure --with-lz4) can read.");
		return false;
	}
	return true;
}

void
cx_settings_init(void)
{
	DefineCustomEnumVariable("compressx.default_codec",
							 "Codec for columns of compressx tables without a setting of their own.",
							 NULL,
							 &cx_default_codec, CX_CODEC_ZSTD, cx_codec_options,
							 PGC_USERSET, 0, check_default_codec, NULL, NULL);
	DefineCustomIntVariable("compressx.default_level",
							"Level for columns without a setting of their own; 0 means the codec's default.",
							"A level outside the codec's range is replaced by the codec's default.",
							&cx_default_level, 0, -7, 22,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("compressx.inline_max",
							"compressx values stored larger than this go out of line (TOAST).",
							"Keeps rows small, so scans of other columns read few pages; smaller values stay in the row while it fits the toast target.",
							&cx_inline_max, 1024, CX_REF_SIZE + 1, MaxAllocSize,
							PGC_USERSET, GUC_UNIT_BYTE, NULL, NULL, NULL);
	DefineCustomIntVariable("compressx.min_size",
							"Values shorter than this many bytes are stored as they are, for columns without a setting of their own.",
							NULL,
							&cx_min_size, 64, 0, MaxAllocSize,
							PGC_USERSET, GUC_UNIT_BYTE, NULL, NULL, NULL);
	CacheRegisterRelcacheCallback(settings_invalidate, (Datum) 0);

	cx_settings_cleanup_init();
}

/*
 * The relation whose settings apply to rel: rel itself, or, for the
 * transient heap that ALTER TABLE builds when it rewrites a table (SET
 * ACCESS METHOD, ALTER COLUMN TYPE; make_new_heap names it
 * "pg_temp_<oid of the original>"), the original table.  The name alone
 * proves nothing: any role may name a table so, and would then borrow
 * another table's settings and dictionary.  So the name counts only for a
 * relation created in the current transaction, in the original's schema,
 * with the original's owner, while this backend holds AccessExclusiveLock
 * on the original: what make_new_heap does and nobody else can.
 * (VACUUM FULL, CLUSTER and recompress_table do not rely on this: they name
 * the original table explicitly.)
 */
/*
 * The table a rewrite of this transaction resolved settings for through its
 * transient heap (below): what ALTER TABLE .. SET ACCESS METHOD compressx
 * did, as opposed to one on a table that is compressx already, which core
 * skips (catalog/settings_cleanup.c, catalog/generation.c).
 */
static Oid	rewrite_note_relid = InvalidOid;
static LocalTransactionId rewrite_note_lxid = InvalidLocalTransactionId;

Oid
cx_take_rewrite_note(void)
{
	Oid			relid = rewrite_note_lxid == CX_MY_LXID ? rewrite_note_relid : InvalidOid;

	rewrite_note_relid = InvalidOid;
	rewrite_note_lxid = InvalidLocalTransactionId;
	return relid;
}

Oid
cx_settings_relid(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	unsigned int oid;
	char		tail;
	HeapTuple	tup;
	bool		ok;

	if (strncmp(name, "pg_temp_", 8) != 0 ||
		sscanf(name + 8, "%u%c", &oid, &tail) != 1 || oid == 0 ||
		oid == RelationGetRelid(rel) ||
		rel->rd_createSubid == InvalidSubTransactionId ||
		!cx_relation_oid_locked_by_me((Oid) oid, AccessExclusiveLock, false))
		return RelationGetRelid(rel);
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum((Oid) oid));
	if (!HeapTupleIsValid(tup))
		return RelationGetRelid(rel);
	ok = ((Form_pg_class) GETSTRUCT(tup))->relowner == rel->rd_rel->relowner &&
		((Form_pg_class) GETSTRUCT(tup))->relnamespace == rel->rd_rel->relnamespace;
	ReleaseSysCache(tup);
	if (!ok)
		return RelationGetRelid(rel);
	rewrite_note_relid = (Oid) oid;
	rewrite_note_lxid = CX_MY_LXID;
	return (Oid) oid;
}

/*
 * The table dictionary dict_id was trained for and serves
 * (compressx.dictionaries.relid), or InvalidOid when there is no such
 * dictionary.  A setting naming another table's dictionary (a restore that
 * mixed ids, a hand-edited row) must not make this table's values depend on
 * it.
 */
static Oid
dictionary_owner(int32 dict_id)
{
	Oid			dictoid = cx_extension_table_oid("dictionaries");
	Relation	drel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			owner = InvalidOid;

	if (!OidIsValid(dictoid))
		return InvalidOid;
	drel = table_open(dictoid, AccessShareLock);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(dict_id));
	scan = systable_beginscan(drel, InvalidOid, false, NULL, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, 2, RelationGetDescr(drel), &isnull);

		if (!isnull)
			owner = DatumGetObjectId(d);
	}
	systable_endscan(scan);
	table_close(drel, AccessShareLock);
	return owner;
}

static SettingsEntry *
load_settings(Oid relid)
{
	SettingsEntry *entry;
	bool		found;
	Oid			tableoid = cx_extension_table_oid("column_settings");
	List	   *rows = NIL;

	if (settings_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(SettingsEntry);
		ctl.hcxt = CacheMemoryContext;
		settings_cache = hash_create("compressx column settings", 64, &ctl,
									 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	if (OidIsValid(tableoid))
	{
		Relation	srel = table_open(tableoid, AccessShareLock);
		int			natts = RelationGetDescr(srel)->natts;
		Datum	   *values = palloc(sizeof(Datum) * natts);
		bool	   *nulls = palloc(sizeof(bool) * natts);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;

		ScanKeyInit(&key, Anum_cs_relid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(relid));
		/*
		 * A catalog snapshot (NULL: systable_beginscan() takes a fresh one,
		 * or the historic one while decoding), as the relcache reads
		 * catalogs: the rows committed now and this transaction's own up to
		 * its last command (settings change through SPI, which advances the
		 * command counter).  An MVCC snapshot sees exactly one version of a
		 * row that a concurrent transaction updates; SnapshotSelf, judging
		 * each version as the scan meets it, could miss both when the
		 * update commits mid-scan, and the column would briefly fall back to
		 * the defaults.  Works in parallel workers too.
		 */
		scan = systable_beginscan(srel, InvalidOid, false, NULL, 1, &key);
		while ((tup = systable_getnext(scan)) != NULL)
		{
			CachedSetting *cs = palloc(sizeof(CachedSetting));
			const CxCodec *codec;
			Oid			dict_owner;

			heap_deform_tuple(tup, RelationGetDescr(srel), values, nulls);
			cs->attnum = DatumGetInt16(values[Anum_cs_attnum - 1]);
			codec = cx_codec_by_name_or_error(TextDatumGetCString(values[Anum_cs_codec - 1]));
			cs->codec_id = codec->id;
			cs->level = nulls[Anum_cs_level - 1] ? LEVEL_NULL :
				DatumGetInt32(values[Anum_cs_level - 1]);
			cs->min_size = nulls[Anum_cs_min_size - 1] ? -1 :
				DatumGetInt32(values[Anum_cs_min_size - 1]);
			cs->dict_id = nulls[Anum_cs_dict_id - 1] ? 0 :
				DatumGetInt32(values[Anum_cs_dict_id - 1]);
			cs->dict_auto = natts >= Anum_cs_auto_dictionary &&
				!nulls[Anum_cs_auto_dictionary - 1] &&
				DatumGetBool(values[Anum_cs_auto_dictionary - 1]);
			cs->inline_max = natts >= Anum_cs_inline_max &&
				!nulls[Anum_cs_inline_max - 1] ?
				DatumGetInt32(values[Anum_cs_inline_max - 1]) : -1;
			cs->restore_pending = natts >= Anum_cs_restored_dict &&
				!nulls[Anum_cs_restored_dict - 1];
			/* a missing one is reported when a value is encoded */
			if (cs->dict_id != 0 && OidIsValid(dict_owner = dictionary_owner(cs->dict_id)) &&
				dict_owner != relid)
			{
				ereport(WARNING,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("column \"%s\" of relation \"%s\" names a zstd dictionary of another table",
								NameStr(*DatumGetName(values[Anum_cs_attname - 1])),
								get_rel_name(relid)),
						 errdetail("Dictionary %d serves another table; new values of the column are compressed without a dictionary.",
								   cs->dict_id)));
				cs->dict_id = 0;
			}
			rows = lappend(rows, cs);
		}
		systable_endscan(scan);
		table_close(srel, AccessShareLock);
		pfree(values);
		pfree(nulls);
	}

	entry = hash_search(settings_cache, &relid, HASH_ENTER, &found);
	entry->count = list_length(rows);
	entry->items = entry->count > 0 ?
		MemoryContextAlloc(CacheMemoryContext, sizeof(CachedSetting) * entry->count) : NULL;
	for (int i = 0; i < entry->count; i++)
		entry->items[i] = *(CachedSetting *) list_nth(rows, i);
	list_free_deep(rows);
	return entry;
}

static int
level_or_default(const CxCodec *codec, int level)
{
	if (!codec->has_levels || level == 0 || level == LEVEL_NULL ||
		level < codec->min_level || level > codec->max_level)
		return codec->default_level;
	return level;
}

void
cx_resolve_settings(Relation rel, CxColumnSetting *out)
{
	cx_resolve_settings_of(rel, cx_settings_relid(rel), out);
}

/* The cached settings rows of relid, loaded on first use. */
static SettingsEntry *
settings_of(Oid relid)
{
	SettingsEntry *entry = NULL;

	if (settings_cache)
		entry = hash_search(settings_cache, &relid, HASH_FIND, NULL);
	return entry ? entry : load_settings(relid);
}

/*
 * The settings row of column attnum (named attname) in the entry of relid
 * or, for a partition without one, of the nearest ancestor that has one (a
 * partition created after set_column_codec on its parent follows the
 * parent), or NULL.  An ancestor's column is found by name: a partition's
 * columns have its parent's names, not always their numbers.  *from: the
 * relation whose row it is.
 */
static CachedSetting *
find_setting(Oid relid, bool is_partition, AttrNumber attnum, const char *attname,
			 Oid *from)
{
	for (;;)
	{
		SettingsEntry *entry = settings_of(relid);

		for (int j = 0; j < entry->count; j++)
			if (entry->items[j].attnum == attnum)
			{
				*from = relid;
				return &entry->items[j];
			}
		if (!is_partition)
			return NULL;
		relid = get_partition_parent(relid, true);
		is_partition = get_rel_relispartition(relid);
		attnum = get_attnum(relid, attname);
		if (attnum == InvalidAttrNumber)
			return NULL;
	}
}

/*
 * The resolved settings of a compressx relation, kept in its rd_amcache (one
 * allocation in CacheMemoryContext; the relcache frees it when the relation
 * is invalidated, which every change of its settings rows, of its columns'
 * COMPRESSION, and of its parent's settings through set_column_codec and
 * reset_column_codec causes).  The GUC defaults it was resolved with are
 * part of the key: a SET changes them without any invalidation.
 */
typedef struct ResolvedSettings
{
	Oid			relid;			/* whose settings */
	int			default_codec;
	int			default_level;
	int			min_size;
	int			natts;
	CxColumnSetting items[FLEXIBLE_ARRAY_MEMBER];
} ResolvedSettings;

/*
 * Whether relid, the table whose settings rel takes (itself, or the table
 * it is a rewrite of), is a compressx table now.  A rewrite of ALTER TABLE
 * .. SET ACCESS METHOD compressx builds a compressx relation for a table
 * that is still heap until the swap.
 */
static bool
settings_owner_is_compressx(Relation rel, Oid relid)
{
	HeapTuple	tup;
	bool		result = false;

	if (relid == RelationGetRelid(rel))
		return cx_is_compressx_relation(rel);
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (HeapTupleIsValid(tup))
	{
		Oid			amoid = ((Form_pg_class) GETSTRUCT(tup))->relam;

		result = OidIsValid(amoid) && amoid == get_table_am_oid("compressx", true);
		ReleaseSysCache(tup);
	}
	return result;
}

static void
resolve_uncached(Relation rel, Oid relid, CxColumnSetting *out)
{
	TupleDesc	desc = RelationGetDescr(rel);
	const CxCodec *defcodec = cx_codec_by_id(cx_default_codec);
	bool		is_partition = get_rel_relispartition(relid);
	bool		use_compression = settings_owner_is_compressx(rel, relid);
	Oid			shell = InvalidOid;
	bool		shell_known = false;
	bool		shell_dicts = false;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		CxColumnSetting *s = &out[i];
		CachedSetting *cs;
		Oid			from;
		bool		via_shell = false;

		s->codec = defcodec;
		s->level = level_or_default(defcodec, cx_default_level);
		s->min_size = cx_min_size;
		s->dict_id = 0;
		s->explicit_setting = false;
		s->dict_auto = false;
		s->restore_pending = false;
		s->inline_max = -1;
		if (att->attisdropped || att->attlen != -1)
			continue;
		/*
		 * COMPRESSION pglz | lz4 of a compressx table's column (CREATE or
		 * ALTER TABLE, or the mirror of a setting); not a heap table's
		 */
		if (use_compression &&
			(att->attcompression == TOAST_PGLZ_COMPRESSION ||
			 att->attcompression == TOAST_LZ4_COMPRESSION))
		{
			s->codec = cx_codec_by_id(att->attcompression == TOAST_PGLZ_COMPRESSION ?
									  CX_CODEC_PGLZ : CX_CODEC_LZ4);
			s->level = s->codec->default_level;
		}
		cs = find_setting(relid, is_partition, att->attnum, NameStr(att->attname), &from);
		/*
		 * A Citus shard follows its table's rows on this node; so does one
		 * whose own row came from a label Citus copied while distributing
		 * the table (it waits for a dictionary by key: label.c)
		 */
		if (cs == NULL || (cs->restore_pending && cs->dict_id == 0 && cx_distribution != NULL))
		{
			AttrNumber	shellatt;
			CachedSetting *own = cs;

			if (!shell_known)
			{
				/* relid is rel, or the table rel is a rewrite of (not new) */
				shell = (cx_distribution == NULL) ? InvalidOid :
					cx_distribution->shell_of(relid,
										  relid == RelationGetRelid(rel) &&
										  rel->rd_createSubid != InvalidSubTransactionId,
										  &shell_dicts);
				shell_known = true;
			}
			if (OidIsValid(shell) &&
				(shellatt = get_attnum(shell, NameStr(att->attname))) != InvalidAttrNumber)
			{
				cs = find_setting(shell, get_rel_relispartition(shell), shellatt,
								  NameStr(att->attname), &from);
				via_shell = true;
			}
			if (cs == NULL && own != NULL)
			{
				cs = own;
				from = relid;
				via_shell = false;
			}
		}
		if (cs == NULL)
			continue;
		s->codec = cx_codec_by_id(cs->codec_id);
		s->level = level_or_default(s->codec, cs->level);
		if (cs->min_size >= 0)
			s->min_size = cs->min_size;
		s->inline_max = cs->inline_max;
		/* a dictionary serves the table it was trained on only */
		if ((s->codec->id == CX_CODEC_ZSTD || s->codec->id == CX_CODEC_LZ4) &&
			(from == relid || (shell_dicts && from == shell)))
			s->dict_id = cs->dict_id;
		s->explicit_setting = true;
		/*
		 * A partition following its parent's row trains dictionaries of its
		 * own (they serve one table); a Citus shard never (its shell's row
		 * carries no policy: citus/citus.c sends none).
		 */
		s->dict_auto = s->codec->id == CX_CODEC_ZSTD && cs->dict_auto && !via_shell;
		s->restore_pending = cs->restore_pending && from == relid;
	}
}

void
cx_resolve_settings_of(Relation rel, Oid relid, CxColumnSetting *out)
{
	int			natts = RelationGetDescr(rel)->natts;
	ResolvedSettings *rs = (ResolvedSettings *) rel->rd_amcache;
	Size		size = offsetof(ResolvedSettings, items) + sizeof(CxColumnSetting) * natts;

	if (!cx_is_compressx_relation(rel))
	{
		resolve_uncached(rel, relid, out);
		return;
	}
	if (rs == NULL || rs->relid != relid || rs->natts != natts ||
		rs->default_codec != cx_default_codec ||
		rs->default_level != cx_default_level || rs->min_size != cx_min_size)
	{
		if (rs)
		{
			pfree(rs);
			rel->rd_amcache = NULL;
		}
		rs = MemoryContextAlloc(CacheMemoryContext, size);
		rs->relid = relid;
		rs->default_codec = cx_default_codec;
		rs->default_level = cx_default_level;
		rs->min_size = cx_min_size;
		rs->natts = natts;
		resolve_uncached(rel, relid, rs->items);
		rel->rd_amcache = rs;
	}
	memcpy(out, rs->items, sizeof(CxColumnSetting) * natts);
}


/*
 * Errors if relid is a temporary table.  Its settings could outlive it: a
 * temporary table is also dropped by backends that run no event trigger
 * and may not have loaded this library (autovacuum removing the tables of
 * a crashed session, or the next backend to use its temporary schema), and
 * pg_dump would then dump a row naming a relation that is gone.
 */
static void
check_not_temporary(Oid relid)
{
	if (get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("temporary table \"%s\" cannot have compressx column settings",
						get_rel_name(relid)),
				 errdetail("Settings are rows of compressx.column_settings, which a temporary table can outlive: after a crash, autovacuum or another session drops it without deleting them, and pg_dump would dump them."),
				 errhint("Set compressx.default_codec, compressx.default_level and compressx.min_size in the session instead: they apply to every column without a setting.")));
}

/*
 * Insert or update the setting of one column.  keep_min_size: leave an
 * existing min_size as it is.  The caller has checked ownership and the
 * column; the relcache of relid is invalidated by the table's trigger.
 * Every writer of settings comes through here or through
 * cx_check_settings_target(), so temporary tables are refused here too.
 */
void
cx_store_column_setting(Oid relid, const char *attname, AttrNumber attnum,
						const CxCodec *codec, bool level_isnull, int level,
						bool min_size_isnull, int min_size, bool keep_min_size)
{
	Oid			types[7] = {OIDOID, NAMEOID, INT2OID, TEXTOID, INT4OID, INT4OID, BOOLOID};
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	NameData	name;

	check_not_temporary(relid);
	namestrcpy(&name, attname);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = NameGetDatum(&name);
	values[2] = Int16GetDatum(attnum);
	values[3] = CStringGetTextDatum(codec->name);
	values[4] = Int32GetDatum(level);
	nulls[4] = level_isnull ? 'n' : ' ';
	values[5] = Int32GetDatum(min_size);
	nulls[5] = min_size_isnull ? 'n' : ' ';
	values[6] = BoolGetDatum(keep_min_size);
	/*
	 * An update, else an insert, rather than INSERT .. ON CONFLICT: the key
	 * is (relid, attnum) since 0.2.0, (relid, attname) before, and this
	 * library serves both until ALTER EXTENSION UPDATE.  Callers hold a
	 * self-exclusive lock on relid, so no other session adds the row.
	 */
	cx_settings_exec("WITH u AS (UPDATE compressx.column_settings s "
				  "SET attname = $2, codec = $4, level = $5, "
				  "min_size = CASE WHEN $7 THEN s.min_size ELSE $6 END, "
				  /*
				   * Another codec, and any setting of an lz4 column, retires the
				   * dictionary: zstd later does not revive it.  An lz4 column
				   * gets one from train_dictionary() only, so that settings
				   * written for a move to heap (online/move.c) never keep one.
				   */
				  "dict_id = CASE WHEN $4 = 'zstd' THEN s.dict_id END "
				  "WHERE s.relid = $1 AND s.attnum = $3 RETURNING 1) "
				  "INSERT INTO compressx.column_settings "
				  "(relid, attname, attnum, codec, level, min_size) "
				  "SELECT $1::pg_catalog.oid::pg_catalog.regclass, $2, $3, $4, $5, $6 "
				  "WHERE NOT EXISTS (SELECT FROM u)",
				  7, types, values, nulls);
}

/*
 * Errors if relid is one of compressx's own tables (column_settings,
 * dictionaries: the tables of the extension).  compressx reads them while
 * it encodes and decodes values, so codecs, dictionaries and rewrites of
 * its own are not for them.
 */
void
cx_check_not_own_table(Oid relid)
{
	Oid			extoid = get_extension_oid("compressx", true);

	if (OidIsValid(extoid) &&
		getExtensionOfObject(RelationRelationId, relid) == extoid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the compression of compressx's own table \"%s.%s\"",
						get_namespace_name(get_rel_namespace(relid)),
						get_rel_name(relid)),
				 errdetail("compressx reads its tables column_settings and dictionaries while it encodes and decodes values, so they stay heap tables compressed by PostgreSQL alone.")));
}

/*
 * Check rel is a table the current user owns that may have settings (not
 * a system catalog, not one of compressx's own tables, not temporary) and
 * return its relkind.  Takes no lock: callers check, lock, and check again.
 */
char
cx_check_settings_target(Oid relid)
{
	char		relkind = get_rel_relkind(relid);
	char	   *name = get_rel_name(relid);

	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW &&
		relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table or materialized view", name)));
	cx_check_not_own_table(relid);
	if (!cx_relation_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(relkind), name);
	if (IsCatalogRelationOid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot set codecs of system catalog \"%s\"", name)));
	check_not_temporary(relid);
	return relkind;
}

AttrNumber
cx_check_settings_column(Oid relid, const char *column)
{
	HeapTuple	tup = SearchSysCacheAttName(relid, column);
	Form_pg_attribute att;
	AttrNumber	attnum;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						column, get_rel_name(relid))));
	att = (Form_pg_attribute) GETSTRUCT(tup);
	attnum = att->attnum;
	if (att->attnum <= 0 || att->attlen != -1)
	{
		char	   *type = format_type_be(att->atttypid);

		ReleaseSysCache(tup);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" of relation \"%s\" cannot be compressed",
						column, get_rel_name(relid)),
				 errdetail("Its type %s is not a variable-length type.", type)));
	}
	ReleaseSysCache(tup);
	return attnum;
}

/*
 * After a setting of column on relid and rels (relid with its partitions and
 * children, locked): when some of them with storage are not compressx
 * tables, say that the setting waits for the access method (the views show
 * it as pending) and how to apply it.
 */
static void
notice_pending(Oid relid, const char *column, List *rels)
{
	Oid			first = InvalidOid;
	int			n = 0;
	ListCell   *lc;

	foreach(lc, rels)
	{
		Relation	rel = table_open(lfirst_oid(lc), NoLock);

		if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind) && !cx_is_compressx_relation(rel))
		{
			if (n++ == 0)
				first = RelationGetRelid(rel);
		}
		table_close(rel, NoLock);
	}
	if (n == 0)
		return;
	ereport(NOTICE,
			(first == relid ?
			 errmsg("the setting of column \"%s\" waits until \"%s\" uses the compressx access method",
					column, get_rel_name(relid)) :
			 errmsg_plural("the setting of column \"%s\" waits until %d table of \"%s\" uses the compressx access method",
						   "the setting of column \"%s\" waits until %d tables of \"%s\" use the compressx access method",
						   n, column, n, get_rel_name(relid)),
			 errdetail("Stored values stay as they are; compressx.column_codecs shows the setting as pending."),
			 errhint("CALL compressx.recompress_online('%s', access_method => 'compressx') moves the table online and applies the setting.",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												get_rel_name(relid)))));
}

/*
 * compressx.set_column_codec(rel regclass, column_name name, codec text,
 *							  level int DEFAULT NULL, min_size int DEFAULT NULL
 *							  [, dictionary text DEFAULT NULL])
 *
 * The entry of versions before 0.4.0 (five arguments); 0.4.0's is
 * dictionaries/auto.c's, which takes the dictionary too.
 */
Datum
compressx_set_column_codec(PG_FUNCTION_ARGS)
{
	cx_prevent_if_read_only("set_column_codec", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation, column and codec must not be null"),
				 errhint("Use compressx.reset_column_codec() to return a column to the defaults.")));
	(void) cx_set_column_codec(PG_GETARG_OID(0), NameStr(*PG_GETARG_NAME(1)),
							   cx_codec_by_name_or_error(text_to_cstring(PG_GETARG_TEXT_PP(2))),
							   PG_ARGISNULL(3), PG_ARGISNULL(3) ? 0 : PG_GETARG_INT32(3),
							   PG_ARGISNULL(4), PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4),
							   CX_DICT_KEEP);
	PG_RETURN_VOID();
}

/*
 * compressx.set_column_inline(rel regclass, column_name name,
 *							   inline_max integer)
 *	  The column's inline limit: its values stored in compressx's own
 *	  format larger than inline_max bytes go out of line (TOAST) even when
 *	  the row would fit; NULL returns the column to compressx.inline_max.
 *	  The table, its partitions and inheritance children; owner only;
 *	  SHARE UPDATE EXCLUSIVE, as set_column_codec.  A column without a
 *	  settings row gets one holding its current codec and level.  New rows
 *	  follow it; VACUUM FULL or recompress_table moves existing values.
 */
Datum
compressx_set_column_inline(PG_FUNCTION_ARGS)
{
	Oid			relid;
	const char *column;
	bool		isnull = PG_ARGISNULL(2);
	int32		inline_max = isnull ? 0 : PG_GETARG_INT32(2);
	List	   *rels;
	ListCell   *lc;

	cx_prevent_if_read_only("set_column_inline", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation and column must not be null")));
	relid = PG_GETARG_OID(0);
	column = NameStr(*PG_GETARG_NAME(1));
	if (!isnull && inline_max <= CX_REF_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("inline_max must be larger than %d bytes (the size of a reference to a value out of line)",
						CX_REF_SIZE)));
	if (!cx_extension_table_has_column("column_settings", "inline_max", Anum_cs_inline_max))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("compressx.set_column_inline needs compressx 0.4.0"),
				 errhint("ALTER EXTENSION compressx UPDATE")));

	cx_check_settings_target(relid);
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	cx_check_settings_target(relid);
	rels = find_all_inheritors(relid, ShareUpdateExclusiveLock, NULL);
	foreach(lc, rels)
	{
		Oid			target = lfirst_oid(lc);
		AttrNumber	attnum;
		Relation	rel;
		CxColumnSetting *settings;
		Oid			types[6] = {OIDOID, NAMEOID, INT2OID, INT4OID, TEXTOID, INT4OID};
		Datum		values[6];
		char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
		NameData	name;

		if (target != relid)
			cx_check_settings_target(target);
		attnum = cx_check_settings_column(target, column);
		rel = table_open(target, NoLock);
		settings = palloc(sizeof(CxColumnSetting) * RelationGetDescr(rel)->natts);
		cx_resolve_settings(rel, settings);
		namestrcpy(&name, column);
		values[0] = ObjectIdGetDatum(target);
		values[1] = NameGetDatum(&name);
		values[2] = Int16GetDatum(attnum);
		values[3] = Int32GetDatum(inline_max);
		nulls[3] = isnull ? 'n' : ' ';
		values[4] = CStringGetTextDatum(settings[attnum - 1].codec->name);
		values[5] = Int32GetDatum(settings[attnum - 1].level);
		/* update, else insert: see cx_store_column_setting() */
		cx_settings_exec("WITH u AS (UPDATE compressx.column_settings s SET inline_max = $4 "
						 "WHERE s.relid = $1 AND s.attnum = $3 RETURNING 1) "
						 "INSERT INTO compressx.column_settings "
						 "(relid, attname, attnum, codec, level, inline_max) "
						 "SELECT $1::pg_catalog.oid::pg_catalog.regclass, $2, $3, $5, $6, $4 "
						 "WHERE NOT EXISTS (SELECT FROM u)",
						 6, types, values, nulls);
		pfree(settings);
		table_close(rel, NoLock);
	}
	/* Citus tables: the same rows on every node */
	foreach(lc, rels)
		distribution_push(lfirst_oid(lc));
	PG_RETURN_VOID();
}

bool
cx_settings_have_auto_column(void)
{
	return cx_extension_table_has_column("column_settings", "auto_dictionary",
										 Anum_cs_auto_dictionary);
}

/*
 * Store the dictionary policy of one column whose setting row exists:
 * 'auto' marks it, 'none' also forgets its dictionary.  Either starts the
 * column's automatic state afresh (compressx.auto_dictionary_state).
 */
static void
store_dict_policy(Oid relid, AttrNumber attnum, CxDictPolicy dictionary)
{
	Oid			types[3] = {OIDOID, INT2OID, BOOLOID};
	Datum		values[3];

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = BoolGetDatum(dictionary == CX_DICT_AUTO);
	cx_settings_exec("UPDATE compressx.column_settings "
					 "SET auto_dictionary = $3, dict_id = CASE WHEN $3 THEN dict_id END "
					 "WHERE relid = $1 AND attnum = $2",
					 3, types, values, NULL);
	cx_settings_exec("DELETE FROM compressx.auto_dictionary_state "
					 "WHERE relid = $1 AND attnum = $2",
					 2, types, values, NULL);
}

List *
cx_set_column_codec(Oid relid, const char *column, const CxCodec *codec,
					bool level_isnull, int level, bool min_size_isnull,
					int min_size, CxDictPolicy dictionary)
{
	List	   *rels;
	ListCell   *lc;

	(void) cx_codec_resolve_level(codec, level_isnull, level);
	cx_codec_check_storable(codec);
	if (!min_size_isnull && min_size < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_size must not be negative")));
	if (dictionary == CX_DICT_AUTO && codec->id != CX_CODEC_ZSTD)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dictionary => 'auto' needs codec zstd, not %s", codec->name),
				 errdetail("Dictionaries serve zstd only."),
				 errhint("SELECT compressx.set_column_codec('%s', '%s', 'zstd', dictionary => 'auto');",
						 get_rel_name(relid) ? get_rel_name(relid) : "?", column)));
	if (dictionary != CX_DICT_KEEP && !cx_settings_have_auto_column())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the dictionary argument needs compressx 0.4.0"),
				 errhint("ALTER EXTENSION compressx UPDATE")));

	cx_check_settings_target(relid);
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	cx_check_settings_target(relid);
	if (dictionary == CX_DICT_AUTO && cx_distribution && cx_distribution->is_distributed(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("automatic dictionaries are not maintained for Citus table \"%s\"",
						get_rel_name(relid)),
				 errdetail("Each node would train its own dictionary on the shards it holds, while the coordinator sends its settings and dictionaries to every node."),
				 errhint("Train one with compressx.train_dictionary(): the coordinator sends it to the shards.")));

	/* the table, its partitions and inheritance children */
	rels = find_all_inheritors(relid, ShareUpdateExclusiveLock, NULL);

	foreach(lc, rels)
	{
		Oid			target = lfirst_oid(lc);
		AttrNumber	attnum;

		if (target != relid)
			cx_check_settings_target(target);
		attnum = cx_check_settings_column(target, column);
		cx_store_column_setting(target, column, attnum, codec, level_isnull, level,
								min_size_isnull, min_size, false);
		if (dictionary != CX_DICT_KEEP)
			store_dict_policy(target, attnum, dictionary);
	}
	/* Citus tables: the same rows on every node */
	foreach(lc, rels)
		distribution_push(lfirst_oid(lc));
	notice_pending(relid, column, rels);
	return rels;
}

/*
 * compressx.reset_column_codec(rel regclass, column_name name DEFAULT NULL)
 *	  Forget the settings of one column (NULL: all columns) of a table and
 *	  its partitions; they follow the GUC defaults again (on compressx
 *	  tables, their COMPRESSION is reset too).
 */
Datum
compressx_reset_column_codec(PG_FUNCTION_ARGS)
{
	Oid			relid;
	List	   *rels;
	ListCell   *lc;

	cx_prevent_if_read_only("reset_column_codec", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	cx_check_settings_target(relid);
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	/* dropped, or given to another owner, while we waited? */
	cx_check_settings_target(relid);
	if (!PG_ARGISNULL(1))
		(void) cx_check_settings_column(relid, NameStr(*PG_GETARG_NAME(1)));

	/* the table, its partitions and inheritance children */
	rels = find_all_inheritors(relid, ShareUpdateExclusiveLock, NULL);

	foreach(lc, rels)
	{
		Oid			types[2] = {OIDOID, NAMEOID};
		Datum		values[2];
		char		nulls[2] = {' ', ' '};

		cx_check_settings_target(lfirst_oid(lc));
		values[0] = ObjectIdGetDatum(lfirst_oid(lc));
		values[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
		nulls[1] = PG_ARGISNULL(1) ? 'n' : ' ';
		cx_settings_exec("DELETE FROM compressx.column_settings "
					  "WHERE relid = $1::pg_catalog.oid::pg_catalog.regclass "
					  "AND ($2 IS NULL OR attnum = (SELECT a.attnum FROM pg_attribute a "
					  "WHERE a.attrelid = $1 AND a.attname = $2 AND NOT a.attisdropped))",
					  2, types, values, nulls);
		/*
		 * A compressx table's column follows its COMPRESSION when it has no
		 * setting: reset that too, to the mirror of what applies now (an
		 * ancestor's setting, else nothing).
		 */
		CommandCounterIncrement();
		{
			Relation	rel = table_open(lfirst_oid(lc), NoLock);
			TupleDesc	desc = RelationGetDescr(rel);
			CxColumnSetting *now = NULL;
			bool		changed = false;

			if (cx_is_compressx_relation(rel))
			{
				now = palloc(sizeof(CxColumnSetting) * Max(desc->natts, 1));
				cx_resolve_settings(rel, now);
			}
			for (int i = 0; now != NULL && i < desc->natts; i++)
			{
				Form_pg_attribute att = TupleDescAttr(desc, i);

				if (!att->attisdropped && att->attlen == -1 &&
					(PG_ARGISNULL(1) ||
					 strcmp(NameStr(att->attname), NameStr(*PG_GETARG_NAME(1))) == 0))
					changed |= cx_set_attcompression(RelationGetRelid(rel), att->attnum,
													 now[i].explicit_setting ?
													 cx_core_method_of_codec(now[i].codec->id) :
													 InvalidCompressionMethod);
			}
			table_close(rel, NoLock);
			if (changed)
				CommandCounterIncrement();
		}
	}
	foreach(lc, rels)
		distribution_push(lfirst_oid(lc));
	PG_RETURN_VOID();
}

/*
 * Errors unless the current user owns relid or may SELECT from it; returns
 * false if relid does not exist.  Takes no lock.
 */
static bool
check_settings_readable(Oid relid)
{
	bool		missing = false;
	AclResult	aclresult = pg_class_aclcheck_ext(relid, GetUserId(), ACL_SELECT,
												  &missing);

	if (missing)
		return false;
	if (aclresult != ACLCHECK_OK && !cx_relation_ownercheck(relid, GetUserId()))
	{
		char	   *name = get_rel_name(relid);

		if (name == NULL)
			return false;		/* dropped meanwhile */
		aclcheck_error(aclresult, get_relkind_objtype(get_rel_relkind(relid)), name);
	}
	return true;
}

/*
 * compressx.column_codec_settings(rel regclass)
 *	  RETURNS TABLE (column_name name, codec text, level int, min_size int,
 *					 explicit boolean, dictionary int)
 *	  The settings in effect for every variable-length column of rel, for
 *	  its owner or a role that may SELECT from it; no rows for a relation
 *	  that does not exist (the view column_codecs may name one that was
 *	  dropped since its scan of pg_class).
 *
 * Privileges are checked before the AccessShareLock is taken, so a role
 * without them neither waits behind nor blocks other sessions' locks, and
 * again once it is held: a GRANT may have been revoked meanwhile.
 */
Datum
compressx_column_codec_settings(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	CxColumnSetting *settings;
	TupleDesc	desc;

	InitMaterializedSRF(fcinfo, 0);
	if (!check_settings_readable(relid))
		return (Datum) 0;
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		return (Datum) 0;
	if (!check_settings_readable(relid))
	{
		relation_close(rel, AccessShareLock);
		return (Datum) 0;
	}
	/* what could never hold compressx values has no settings to show */
	if (rel->rd_rel->relkind != RELKIND_RELATION &&
		rel->rd_rel->relkind != RELKIND_MATVIEW &&
		rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table or materialized view",
						RelationGetRelationName(rel))));
	if (IsCatalogRelation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("system catalog \"%s\" has no compressx settings",
						RelationGetRelationName(rel))));
	desc = RelationGetDescr(rel);
	settings = palloc(sizeof(CxColumnSetting) * Max(desc->natts, 1));
	cx_resolve_settings(rel, settings);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Datum		values[6];
		bool		nulls[6] = {0};

		if (att->attisdropped || att->attlen != -1)
			continue;
		values[0] = NameGetDatum(&att->attname);
		values[1] = CStringGetTextDatum(settings[i].codec->name);
		values[2] = Int32GetDatum(settings[i].level);
		nulls[2] = !settings[i].codec->has_levels;
		values[3] = Int32GetDatum(settings[i].min_size);
		values[4] = BoolGetDatum(settings[i].explicit_setting);
		values[5] = Int32GetDatum(settings[i].dict_id);
		nulls[5] = settings[i].dict_id == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * After a change of the settings row of column attnum of relid (codec: its
 * codec now, NULL when the row was deleted; was_none: its codec was none):
 * a compressx table's attcompression shows the codec where core has a name
 * for it (pglz, lz4), and nothing otherwise (zstd, none, no row:
 * compressx.default_codec); a column set to none gets storage EXTERNAL,
 * and one leaving none its type's storage (cx_set_attstorage_for_none,
 * attcompression.c says why).
 * Writers of settings hold SHARE UPDATE EXCLUSIVE on relid (the lock of
 * set_column_codec) or stronger; a restore's COPY holds none, and then it is
 * taken here, only when pg_attribute must change (in a consistent dump it
 * need not: attcompression and attstorage are dumped too).  Not in binary
 * upgrade, where pg_attribute comes from the old cluster as it was.
 */
static void
follow_setting(Oid relid, AttrNumber attnum, const char *codec, bool was_none)
{
	HeapTuple	tup;
	Oid			amoid;
	char		method;
	bool		is_cx;
	bool		to_none = codec != NULL && strcmp(codec, "none") == 0;
	Form_pg_attribute att;
	bool		storage_changes;

	if (IsBinaryUpgrade || attnum <= 0)
		return;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return;
	amoid = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
	is_cx = OidIsValid(amoid) && amoid == get_table_am_oid("compressx", true);
	if (!is_cx)
		return;					/* heap keeps its own attcompression */
	method = InvalidCompressionMethod;
	if (codec != NULL && strcmp(codec, "pglz") == 0)
		method = cx_core_method_of_codec(CX_CODEC_PGLZ);
	else if (codec != NULL && strcmp(codec, "lz4") == 0)
		method = cx_core_method_of_codec(CX_CODEC_LZ4);
	tup = SearchSysCacheAttNum(relid, attnum);
	if (!HeapTupleIsValid(tup))
		return;
	att = (Form_pg_attribute) GETSTRUCT(tup);
	storage_changes = to_none ?
		(att->attstorage == TYPSTORAGE_EXTENDED || att->attstorage == TYPSTORAGE_MAIN) :
		(was_none && att->attstorage == TYPSTORAGE_EXTERNAL);
	if (att->attcompression == method && !storage_changes)
	{
		ReleaseSysCache(tup);
		return;
	}
	ReleaseSysCache(tup);
	if (!cx_relation_oid_locked_by_me(relid, ShareUpdateExclusiveLock, true))
		LockRelationOid(relid, ShareUpdateExclusiveLock);
	/* the second update of the row must find the first one's version */
	if (cx_set_attcompression(relid, attnum, method) && storage_changes)
		CommandCounterIncrement();
	if (storage_changes)
		(void) cx_set_attstorage_for_none(relid, attnum, to_none);
}

/*
 * Row trigger on compressx.column_settings: invalidate the relcache of the
 * tables whose settings changed, so every backend reloads them, and keep
 * the attcompression of compressx tables in step (follow_setting).
 */
Datum
compressx_settings_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuples[2];

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "compressx_settings_changed: not called by trigger manager");
	tuples[0] = trigdata->tg_trigtuple;
	tuples[1] = trigdata->tg_newtuple;
	/* the row as it is now: the new one, none when deleted */
	{
		HeapTuple	now = TRIGGER_FIRED_BY_DELETE(trigdata->tg_event) ? NULL :
			TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ? tuples[1] : tuples[0];
		HeapTuple	was = TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) ? NULL : tuples[0];
		TupleDesc	desc = RelationGetDescr(trigdata->tg_relation);
		HeapTuple	any = now ? now : was;
		bool		isnull;
		bool		codec_isnull = true;
		Datum		relid = heap_getattr(any, Anum_cs_relid, desc, &isnull);
		Datum		attnum = heap_getattr(any, Anum_cs_attnum, desc, &isnull);
		Datum		codec = now ? heap_getattr(now, Anum_cs_codec, desc, &codec_isnull) : (Datum) 0;
		char	   *now_codec = codec_isnull ? NULL : TextDatumGetCString(codec);
		char	   *was_codec = NULL;

		if (was)
		{
			codec = heap_getattr(was, Anum_cs_codec, desc, &codec_isnull);
			was_codec = codec_isnull ? NULL : TextDatumGetCString(codec);
		}
		/* a new codec, a new row or a deleted one (not a rename) */
		if (!isnull && !(was && now && was_codec && now_codec &&
						 strcmp(was_codec, now_codec) == 0))
			follow_setting(DatumGetObjectId(relid), DatumGetInt16(attnum), now_codec,
						   was_codec != NULL && strcmp(was_codec, "none") == 0);
	}
	for (int i = 0; i < 2; i++)
	{
		bool		isnull;
		Datum		relid;

		if (tuples[i] == NULL)
			continue;
		relid = heap_getattr(tuples[i], Anum_cs_relid,
							 RelationGetDescr(trigdata->tg_relation), &isnull);
		if (!isnull && SearchSysCacheExists1(RELOID, relid))
		{
			CacheInvalidateRelcacheByRelid(DatumGetObjectId(relid));
			if (cx_distribution)
				cx_distribution->settings_changed(DatumGetObjectId(relid));
		}
	}
	return PointerGetDatum(NULL);
}

/*
 * Whether the server reads core's lz4 format.  A server built without lz4
 * raises "compression method lz4 not supported" on such values
 * (toast_compression.c, #ifndef USE_LZ4), and the headers compressx was
 * compiled against need not match the server on this, so the server is
 * asked, once per process: default_toast_compression accepts lz4 only when
 * it was built with it (a test of the value, nothing is set).
 */
bool
cx_codec_core_has_lz4(void)
{
	static int	has_lz4 = -1;

	if (has_lz4 < 0)
		has_lz4 = set_config_option("default_toast_compression", "lz4",
									PGC_USERSET, PGC_S_TEST, GUC_ACTION_SET,
									false, DEBUG5, false) != 0;
	return has_lz4;
}

void
cx_codec_check_storable(const CxCodec *codec)
{
	if (codec->id == CX_CODEC_LZ4 && !cx_codec_core_has_lz4())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("codec \"lz4\" is not available: this server was built without lz4"),
				 errdetail("Columns set to lz4 store their values in PostgreSQL's own lz4 format, which only a server built with lz4 (configure --with-lz4) can read."),
				 errhint("Choose zstd or pglz.")));
}
