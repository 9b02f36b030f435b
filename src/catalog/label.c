/*-------------------------------------------------------------------------
 *
 * label.c
 *	  Each column's settings, mirrored as a security label of provider
 *	  "compressx", so that every dump carries them before the table's rows.
 *
 * pg_dump writes the rows of compressx.column_settings and
 * compressx.dictionaries (extension configuration tables) in the data
 * section, and pg_restore -j loads data in parallel, in any order: a
 * table's rows could be encoded before its settings existed.  Security
 * labels of a table and its columns are dumped right after the table's
 * CREATE, in pre-data, which pg_restore runs in one session before any
 * data (also with -j); pg_dump -t carries them too.  So since 0.5.0 the
 * label is what a dump carries, and the configuration tables dump no rows
 * (sql/compressx--0.4.0--0.5.0.sql).
 *
 * The label of a column with settings reads (one line, keys in this order,
 * each at most once, all but codec optional):
 *
 *	  v2 codec=zstd level=19 min_size=64 inline_max=2000 dictionary=auto dict=<uuid>
 *
 * dict is the key (compressx.dictionaries.dict_key) of the column's current
 * dictionary (lz4 or zstd): a random uuid, never the dictionary's bytes.
 * pg_seclabel is readable by every role and a dictionary holds pieces of
 * the rows it was trained on, so nothing derived from row data goes into a
 * label (0.5.0's first form, "v1", carried the bytes in base64 and the
 * trained ratio: refused).  The bytes travel in the dump's data section
 * (catalog/dict_transfer.c).  A column without settings has no label.
 *
 * Two directions:
 *	- compressx writes the label: the row triggers settings_labels on
 *	  compressx.column_settings (any writer: set_column_codec, reset,
 *	  training, the automatic dictionary worker, online runs, Citus) and on
 *	  compressx.dictionaries (rows loaded by the restore of a dump taken
 *	  before 0.5.0, whose settings rows may come before their dictionary)
 *	  rewrite it from the rows (SetSecurityLabel, no hook involved).
 *	- SECURITY LABEL FOR compressx ON COLUMN t.c IS '...' (core checks the
 *	  user owns t, and takes SHARE UPDATE EXCLUSIVE on it) runs the hook
 *	  here: it checks the label strictly and makes it the column's settings.
 *	  A dict key names a dictionary of this same table (re-applying a
 *	  label) or one a restore is to bring: the column then waits for it
 *	  (restored_dict), and meanwhile stores values with the codec and
 *	  level alone; such a label applies to an empty table only (a restore
 *	  writes it right after CREATE TABLE), else one statement by any owner
 *	  would buy a training and a whole-table rewrite by the worker, again
 *	  and again (check_may_wait).  A key is public, so a key of another table's dictionary
 *	  gives nothing of that dictionary (dict_transfer.c attaches a restored
 *	  dictionary to its own table's columns only).  NULL resets the column.
 *	  A label on a column whose type cannot be compressed (its type changed
 *	  since it was dumped: pg_dump copies labels as they are) is skipped
 *	  with a WARNING, so that a strict restore (--single-transaction
 *	  --exit-on-error) goes on.  In binary upgrade (pg_upgrade) it only
 *	  checks: the configuration tables' files come from the old cluster.
 *	  While the hook writes rows, the triggers leave the label to core,
 *	  which stores the text given.
 *
 * Core refuses a label of a provider no library in the session has
 * registered ("security label provider ... is not loaded").  The event
 * trigger compressx_security_label (ddl_command_start, SECURITY LABEL)
 * calls this library before core looks the provider up, so that a session
 * that has not used compressx yet (pg_dump -t of a heap table with a
 * pending setting, restored into a database with the extension) loads it.
 *
 * DROP EXTENSION deletes every label of the provider in the database: a
 * label left on a heap table would make its next restore fail.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_seclabel.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/seclabel.h"
#include "commands/trigger.h"
#include "mb/pg_wchar.h"
#include "storage/bufmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/uuid.h"

#include "storage/format.h"
#include "catalog/label.h"
#include "catalog/relation.h"
#include "catalog/settings.h"

PG_FUNCTION_INFO_V1(compressx_settings_labels);
PG_FUNCTION_INFO_V1(compressx_on_security_label);

#define CX_LABEL_PROVIDER	"compressx"
#define CX_LABEL_VERSION	"v2"

/* Column of compressx.dictionaries (column_settings': catalog/settings.h) */
#define Anum_dict_dict_id	1

/* A label, checked. */
typedef struct CxLabel
{
	const CxCodec *codec;
	bool		level_isnull;
	int			level;
	bool		min_size_isnull;
	int			min_size;
	bool		inline_max_isnull;
	int			inline_max;
	bool		dict_auto;
	pg_uuid_t  *dict_key;		/* NULL: no dictionary */
} CxLabel;

/* true while the hook writes settings rows: the triggers leave the label */
static bool applying = false;

static object_access_hook_type prev_object_access_hook = NULL;

/* errcontext of everything the hook checks and does */
typedef struct LabelContext
{
	const char *relname;
	const char *column;
} LabelContext;

static void
label_error_context(void *arg)
{
	LabelContext *c = (LabelContext *) arg;

	errcontext("compressx security label of column \"%s\" of relation \"%s\"",
			   c->column, c->relname);
}

static void
bad_label(const LabelContext *c, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid compressx security label for column \"%s\" of relation \"%s\"",
					c->column, c->relname),
			 errdetail("%s", detail),
			 errhint("The label reads \"v2 codec=<codec> [level=<n>] [min_size=<n>] [inline_max=<n>] [dictionary=auto] [dict=<uuid>]\"; compressx.set_column_codec() sets a column's settings and writes the label itself.")));
}

/* s, cut to its first 40 bytes (whole characters) for a message */
static const char *
clip(const char *s)
{
	int			len = strlen(s);
	int			cut = pg_mbcliplen(s, len, 40);

	return cut < len ? psprintf("%.*s...", cut, s) : s;
}

/* An integer value of key, whole and within int32, else an error. */
static int
label_int(const LabelContext *c, const char *key, const char *value)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (*value == '\0' || *end != '\0' || errno != 0 || v < PG_INT32_MIN || v > PG_INT32_MAX)
		bad_label(c, psprintf("The value of %s, \"%s\", is not an integer.", key, value));
	return (int) v;
}

/*
 * Parse and check label into *out (palloc'd dictionary), or error with
 * SQLSTATE 22023.  The checks are those of set_column_codec(),
 * set_column_inline() and train_dictionary(), made before anything is
 * written.
 */
static void
parse_label(const LabelContext *c, const char *label, CxLabel *out)
{
	static const char *const keys[] = {"codec", "level", "min_size", "inline_max",
	"dictionary", "dict"};
	char	   *copy = pstrdup(label);
	char	   *tok;
	char	   *next;
	int			last = -1;

	memset(out, 0, sizeof(*out));
	out->level_isnull = out->min_size_isnull = out->inline_max_isnull = true;

	next = strchr(copy, ' ');
	if (next)
		*next++ = '\0';
	if (strcmp(copy, "v1") == 0)
		bad_label(c, "Labels of version v1 (an unreleased 0.5.0) carried the dictionary's bytes, which every role can read; they are not accepted.");
	if (strcmp(copy, CX_LABEL_VERSION) != 0)
		bad_label(c, psprintf("It starts with \"%s\", not with the version \"%s\".",
							  clip(copy), CX_LABEL_VERSION));
	while (next != NULL)
	{
		char	   *eq;
		int			k;

		tok = next;
		next = strchr(tok, ' ');
		if (next)
			*next++ = '\0';
		eq = strchr(tok, '=');
		if (eq == NULL)
			bad_label(c, psprintf("\"%s\" is not of the form key=value.", clip(tok)));
		*eq = '\0';
		for (k = 0; k < lengthof(keys); k++)
			if (strcmp(tok, keys[k]) == 0)
				break;
		if (k == lengthof(keys))
			bad_label(c, psprintf("Unknown key \"%s\".", clip(tok)));
		if (k <= last)
			bad_label(c, psprintf("Key \"%s\" comes twice or out of order.", tok));
		last = k;
		switch (k)
		{
			case 0:
				{
					const struct config_enum_entry *e;

					for (e = cx_codec_options; e->name != NULL; e++)
						if (strcmp(e->name, eq + 1) == 0)
							break;
					if (e->name == NULL)
						bad_label(c, psprintf("Unknown codec \"%s\".", eq + 1));
					out->codec = cx_codec_by_id(e->val);
					break;
				}
			case 1:
				out->level = label_int(c, tok, eq + 1);
				out->level_isnull = false;
				break;
			case 2:
				out->min_size = label_int(c, tok, eq + 1);
				out->min_size_isnull = false;
				if (out->min_size < 0)
					bad_label(c, "min_size must not be negative.");
				break;
			case 3:
				out->inline_max = label_int(c, tok, eq + 1);
				out->inline_max_isnull = false;
				if (out->inline_max <= CX_REF_SIZE)
					bad_label(c, psprintf("inline_max must be larger than %d bytes.", CX_REF_SIZE));
				break;
			case 4:
				if (strcmp(eq + 1, "auto") != 0)
					bad_label(c, psprintf("dictionary can only be \"auto\", not \"%s\".", eq + 1));
				out->dict_auto = true;
				break;
			case 5:
				{
					const char *v = eq + 1;
					bool		ok = strlen(v) == 36;

					for (int j = 0; ok && j < 36; j++)
						ok = (j == 8 || j == 13 || j == 18 || j == 23) ? v[j] == '-' :
							isxdigit((unsigned char) v[j]);
					if (!ok)
						bad_label(c, psprintf("The value of dict, \"%s\", is not a dictionary key (a uuid).",
											  clip(v)));
					out->dict_key = DatumGetUUIDP(DirectFunctionCall1(uuid_in, CStringGetDatum(v)));
					break;
				}
		}
	}
	if (out->codec == NULL)
		bad_label(c, "It names no codec.");
	(void) cx_codec_resolve_level(out->codec, out->level_isnull, out->level);
	if (out->dict_auto && out->codec->id != CX_CODEC_ZSTD)
		bad_label(c, psprintf("dictionary=auto needs codec zstd, not %s.", out->codec->name));
	if (out->dict_key && out->codec->id != CX_CODEC_ZSTD && out->codec->id != CX_CODEC_LZ4)
		bad_label(c, psprintf("Codec %s takes no dictionary.", out->codec->name));
}

/* Whether column attnum of relid has a variable-length type (one compressx compresses). */
static bool
column_is_varlena(Oid relid, AttrNumber attnum)
{
	HeapTuple	tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attnum));
	bool		result;

	if (!HeapTupleIsValid(tup))
		return false;
	result = ((Form_pg_attribute) GETSTRUCT(tup))->attlen == -1;
	ReleaseSysCache(tup);
	return result;
}

/* Whether this database's compressx keeps labels (0.5.0 and later). */
static bool
labels_in_use(void)
{
	Oid			settings = cx_extension_table_oid("column_settings");

	return OidIsValid(settings) &&
		OidIsValid(get_trigger_oid(settings, "settings_labels", true));
}

/*
 * A label naming key, a dictionary relid does not have, makes the column
 * wait for a restore's dictionary, and the automatic-dictionary worker
 * train one and rewrite the table when none comes (dictionaries/
 * restored.c).  A restore writes it right after CREATE TABLE: so on a table
 * with pages it is refused, unless the column already waits for that key
 * (the same label again, which changes nothing).  Otherwise any owner could
 * buy, with one statement, a training and a rewrite of a whole table by
 * the worker that serves every table of the database, as often as liked.
 */
static void
check_may_wait(Oid relid, const char *column, AttrNumber attnum, pg_uuid_t *key)
{
	Oid			types[3] = {OIDOID, INT2OID, UUIDOID};
	Datum		values[3];
	Relation	rel;
	BlockNumber pages;

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = UUIDPGetDatum(key);
	if (cx_settings_exec("SELECT 1 FROM compressx.column_settings "
						 "WHERE relid = $1 AND attnum = $2 AND restored_dict = $3",
						 3, types, values, NULL) == 1)
		return;
	/* core holds SHARE UPDATE EXCLUSIVE on it */
	rel = relation_open(relid, NoLock);
	pages = RELKIND_HAS_STORAGE(rel->rd_rel->relkind) ? RelationGetNumberOfBlocks(rel) : 0;
	relation_close(rel, NoLock);
	if (pages > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("compressx security label of column \"%s\" of relation \"%s\" names a dictionary the table does not have",
						column, get_rel_name(relid)),
				 errdetail("Such a label comes from a dump and applies to an empty table only: the table's dictionary is restored, or trained on the rows restored after it."),
				 errhint("compressx.train_dictionary() makes a dictionary for a table with rows.")));
}

/* Make the checked label l the settings of column attnum of relid. */
static void
apply_label(Oid relid, const char *column, AttrNumber attnum, const CxLabel *l)
{
	Oid			types[6] = {OIDOID, INT2OID, INT4OID, BOOLOID, INT4OID, NAMEOID};
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	NameData	name;
	int32		dict_id = 0;

	namestrcpy(&name, column);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[5] = NameGetDatum(&name);
	if (l == NULL)
	{
		cx_settings_exec("DELETE FROM compressx.column_settings WHERE relid = $1 AND attnum = $2",
						 2, types, values, nulls);
		return;
	}
	if (l->dict_key != NULL)
	{
		Oid			dtypes[2] = {OIDOID, UUIDOID};
		Datum		dvalues[2];

		dvalues[0] = ObjectIdGetDatum(relid);
		dvalues[1] = UUIDPGetDatum(l->dict_key);
		/* this table's own dictionary of that key (a label applied again) */
		dict_id = cx_settings_exec("SELECT max(dict_id) FROM compressx.dictionaries "
								   "WHERE relid = $1 AND dict_key = $2 AND dropped IS NULL",
								   2, dtypes, dvalues, NULL);
		if (dict_id <= 0)
			check_may_wait(relid, column, attnum, l->dict_key);
	}
	cx_store_column_setting(relid, column, attnum, l->codec, l->level_isnull, l->level,
							l->min_size_isnull, l->min_size, false);
	values[2] = Int32GetDatum(l->inline_max);
	nulls[2] = l->inline_max_isnull ? 'n' : ' ';
	values[3] = BoolGetDatum(l->dict_auto);
	values[4] = Int32GetDatum(dict_id);
	nulls[4] = dict_id > 0 ? ' ' : 'n';
	/* a key of no dictionary here: the column waits for it (a restore) */
	values[5] = l->dict_key && dict_id <= 0 ? UUIDPGetDatum(l->dict_key) : (Datum) 0;
	nulls[5] = l->dict_key && dict_id <= 0 ? ' ' : 'n';
	types[5] = UUIDOID;
	cx_settings_exec("UPDATE compressx.column_settings "
					 "SET inline_max = $3, auto_dictionary = $4, dict_id = $5, "
					 "    restored_dict = $6, "
					 "    restored_at = CASE WHEN $6 IS NULL THEN NULL "
					 "                       WHEN restored_dict = $6 THEN restored_at "
					 "                       ELSE pg_catalog.now() END "
					 "WHERE relid = $1 AND attnum = $2",
					 6, types, values, nulls);
	/* the automatic dictionary's state starts afresh, as set_column_codec's */
	cx_settings_exec("DELETE FROM compressx.auto_dictionary_state "
					 "WHERE relid = $1 AND attnum = $2",
					 2, types, values, nulls);
}

/*
 * The label provider's hook: SECURITY LABEL FOR compressx ON COLUMN.
 * Core has checked the user owns the table and locked it (SHARE UPDATE
 * EXCLUSIVE); core stores the label after this returns.
 */
static void
label_hook(const ObjectAddress *object, const char *seclabel)
{
	Oid			relid = object->objectId;
	AttrNumber	attnum = (AttrNumber) object->objectSubId;
	LabelContext c;
	ErrorContextCallback cb;
	CxLabel		l;

	if (object->classId != RelationRelationId || object->objectSubId <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("compressx security labels are for columns only"),
				 errhint("compressx.set_column_codec() sets the settings of a column.")));
	c.relname = get_rel_name(relid);
	c.column = get_attname(relid, attnum, false);
	cb.callback = label_error_context;
	cb.arg = &c;
	cb.previous = error_context_stack;
	error_context_stack = &cb;

	if (seclabel != NULL)
		parse_label(&c, seclabel, &l);
	if (seclabel != NULL && !IsBinaryUpgrade &&
		!column_is_varlena(relid, attnum))
	{
		/* a dump's label for a column whose type has changed since */
		ereport(WARNING,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("compressx security label of column \"%s\" of relation \"%s\" skipped",
						c.column, c.relname),
				 errdetail("Its type %s cannot be compressed; the column keeps no compressx settings.",
						   format_type_be(get_atttype(relid, attnum))),
				 errhint("The label was probably written when the column had another type; SECURITY LABEL FOR compressx ON COLUMN .. IS NULL removes it.")));
		error_context_stack = cb.previous;
		return;
	}
	if (!IsBinaryUpgrade)
	{
		if (!labels_in_use())
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("compressx security labels need the extension compressx 0.5.0 or later in this database"),
					 errhint("CREATE EXTENSION compressx, or ALTER EXTENSION compressx UPDATE.")));
		cx_check_settings_target(relid);
		/* NULL removes a label whatever the column's type */
		if (seclabel != NULL || column_is_varlena(relid, attnum))
			(void) cx_check_settings_column(relid, c.column);
		if (seclabel != NULL)
			cx_codec_check_storable(l.codec);
		/*
		 * Citus copies a table's labels to its shards and to the table on
		 * each node (shard DDL, metadata sync).  A shard follows its table
		 * on this node (settings.c), and Citus sends a distributed table's
		 * settings and dictionaries itself (citus/citus.c, citus_push): the
		 * label of a shard or of a distributed table is not applied (it
		 * names a dictionary by key only, which would leave the column
		 * waiting for a dictionary Citus sends by other means).
		 */
		if (cx_distribution != NULL && seclabel != NULL)
		{
			Relation	r = relation_open(relid, NoLock);
			bool		isnew = r->rd_createSubid != InvalidSubTransactionId;
			bool		dicts;

			relation_close(r, NoLock);
			if (OidIsValid(cx_distribution->shell_of(relid, isnew, &dicts)) ||
				cx_distribution->is_distributed(relid))
			{
				error_context_stack = cb.previous;
				return;
			}
		}
		applying = true;
		PG_TRY();
		{
			apply_label(relid, c.column, attnum, seclabel != NULL ? &l : NULL);
		}
		PG_FINALLY();
		{
			applying = false;
		}
		PG_END_TRY();
	}
	error_context_stack = cb.previous;
}

/* Write the label of column attnum of relid from its settings row. */
static void
label_sync(Oid relid, AttrNumber attnum)
{
	Oid			types[2] = {OIDOID, INT2OID};
	Datum		values[2];
	HeapTuple	atttup;
	bool		exists;
	text	   *label;
	ObjectAddress addr;

	if (applying || IsBinaryUpgrade || !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return;
	atttup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attnum));
	if (!HeapTupleIsValid(atttup))
		return;
	exists = !((Form_pg_attribute) GETSTRUCT(atttup))->attisdropped;
	ReleaseSysCache(atttup);
	if (!exists)
		return;
	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	label = cx_settings_exec_text(
		"SELECT '" CX_LABEL_VERSION " codec=' || s.codec"
		" || coalesce(' level=' || s.level, '')"
		" || coalesce(' min_size=' || s.min_size, '')"
		" || coalesce(' inline_max=' || s.inline_max, '')"
		" || CASE WHEN s.auto_dictionary THEN ' dictionary=auto' ELSE '' END"
		" || coalesce(' dict=' || coalesce(d.dict_key, s.restored_dict), '')"
		" FROM compressx.column_settings s"
		" LEFT JOIN compressx.dictionaries d ON d.dict_id = s.dict_id"
		" WHERE s.relid = $1 AND s.attnum = $2",
		2, types, values, NULL);
	ObjectAddressSubSet(addr, RelationRelationId, relid, attnum);
	SetSecurityLabel(&addr, CX_LABEL_PROVIDER, label ? text_to_cstring(label) : NULL);
}

/*
 * Row trigger settings_labels on compressx.column_settings (AFTER INSERT,
 * UPDATE, DELETE) and on compressx.dictionaries (AFTER INSERT): rewrite the
 * labels of the columns whose rows changed, or that use the dictionary
 * inserted.
 */
Datum
compressx_settings_labels(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	HeapTuple	tuples[2];

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "compressx_settings_labels: not called by trigger manager");
	if (applying)
		return PointerGetDatum(NULL);
	rel = trigdata->tg_relation;
	tuples[0] = trigdata->tg_trigtuple;
	tuples[1] = trigdata->tg_newtuple;
	if (RelationGetRelid(rel) == cx_extension_table_oid("dictionaries"))
	{
		bool		isnull;
		Datum		dict_id = heap_getattr(tuples[0], Anum_dict_dict_id,
										   RelationGetDescr(rel), &isnull);
		Relation	srel = table_open(cx_extension_table_oid("column_settings"), AccessShareLock);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;
		List	   *rels = NIL;
		List	   *atts = NIL;
		ListCell   *lc1,
				   *lc2;
		Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());

		ScanKeyInit(&key, Anum_cs_dict_id, BTEqualStrategyNumber, F_INT4EQ, dict_id);
		scan = systable_beginscan(srel, InvalidOid, false, snapshot, 1, &key);
		while ((tup = systable_getnext(scan)) != NULL)
		{
			bool		n1,
						n2;
			Oid			relid = DatumGetObjectId(heap_getattr(tup, Anum_cs_relid,
															  RelationGetDescr(srel), &n1));
			AttrNumber	attnum = DatumGetInt16(heap_getattr(tup, Anum_cs_attnum,
															RelationGetDescr(srel), &n2));

			rels = lappend_oid(rels, relid);
			atts = lappend_int(atts, attnum);
		}
		systable_endscan(scan);
		UnregisterSnapshot(snapshot);
		table_close(srel, AccessShareLock);
		forboth(lc1, rels, lc2, atts)
			label_sync(lfirst_oid(lc1), (AttrNumber) lfirst_int(lc2));
		return PointerGetDatum(NULL);
	}
	for (int i = 0; i < 2; i++)
	{
		bool		isnull;
		Oid			relid;
		AttrNumber	attnum;

		if (tuples[i] == NULL)
			continue;
		relid = DatumGetObjectId(heap_getattr(tuples[i], Anum_cs_relid,
											  RelationGetDescr(rel), &isnull));
		attnum = DatumGetInt16(heap_getattr(tuples[i], Anum_cs_attnum,
											RelationGetDescr(rel), &isnull));
		/* an update that keeps the column: once is enough */
		if (i == 1 && tuples[0] != NULL &&
			relid == DatumGetObjectId(heap_getattr(tuples[0], Anum_cs_relid,
												   RelationGetDescr(rel), &isnull)) &&
			attnum == DatumGetInt16(heap_getattr(tuples[0], Anum_cs_attnum,
												 RelationGetDescr(rel), &isnull)))
			continue;
		label_sync(relid, attnum);
	}
	return PointerGetDatum(NULL);
}

/*
 * Delete every label of provider compressx in this database (the extension
 * is being dropped).
 */
static void
delete_all_labels(void)
{
	Relation	rel = table_open(SecLabelRelationId, RowExclusiveLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	ScanKeyInit(&key, Anum_pg_seclabel_provider, BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(CX_LABEL_PROVIDER));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
		CatalogTupleDelete(rel, &tup->t_self);
	systable_endscan(scan);
	table_close(rel, RowExclusiveLock);
}

static void
label_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					int subId, void *arg)
{
	if (prev_object_access_hook)
		(*prev_object_access_hook) (access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == ExtensionRelationId && !IsBinaryUpgrade &&
		IsTransactionState() && objectId == get_extension_oid("compressx", true))
		delete_all_labels();
}

/*
 * Event trigger compressx_security_label (ddl_command_start, SECURITY
 * LABEL): nothing to do; being called loads this library, which registers
 * the label provider before core looks it up.
 */
Datum
compressx_on_security_label(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "compressx_on_security_label: not called by event trigger manager");
	PG_RETURN_VOID();
}

void
cx_label_init(void)
{
	register_label_provider(CX_LABEL_PROVIDER, label_hook);
	prev_object_access_hook = object_access_hook;
	object_access_hook = label_object_access;
}
