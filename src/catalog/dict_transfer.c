/*-------------------------------------------------------------------------
 *
 * dict_transfer.c
 *	  How a dump carries dictionaries without showing them to every role:
 *	  compressx.dictionary_dump, its type compressx.table_ref, and the
 *	  trigger that keeps it and attaches restored dictionaries.
 *
 * Who can read what (issue 33 A1).  A zstd or lz4 dictionary holds verbatim
 * pieces of the rows it was trained on.  Its bytes live in
 * compressx.dictionaries and compressx.dictionary_dump, which have no grant:
 * only their owner (the superuser who created the extension) and superusers
 * read them.  What every role reads (pg_seclabel, the views) names a
 * dictionary only by dict_key, a random uuid drawn when the dictionary is
 * made (gen_random_uuid(), nothing of the rows or the bytes).  So a
 * schema-only dump holds no dictionary byte, and a dump's data section holds
 * them only when its maker could read compressx.dictionary_dump.
 *
 * How a restore gets them back (label.c for the first half):
 *	1. pre-data: the column's label "v2 codec=zstd level=7 dict=<key>" makes
 *	   its settings; the dictionary is not there yet, so the settings row
 *	   says restored_dict = <key>, dict_id NULL: values loaded now are
 *	   encoded with the codec and level, without a dictionary.
 *	2. data: the row of compressx.dictionary_dump with that key arrives
 *	   (before or after the table's rows: pg_dump orders data by schema and
 *	   name, pg_restore -j in any order); the trigger below makes it the
 *	   column's dictionary (a compressx.dictionaries row with the same key
 *	   and bytes); values loaded from then on use it.
 *	3. the automatic-dictionary worker (dictionaries/restored.c), started
 *	   by the trigger's commit or the table's writes, rewrites online the
 *	   values loaded before step 2 and clears restored_dict.  Where the dump
 *	   had no such row (pg_dump -t, -n: pg_dump leaves extension data out of
 *	   those), it trains a dictionary on the restored rows instead, as the
 *	   table's owner.
 *
 * A restored dictionary row is attached only to columns of the table it
 * names (rel) whose restored label named its key: the key is public (a
 * label), so a role that copies another table's key into its own label
 * must not get that table's dictionary (it could then measure compressed
 * sizes against it).  Only a role that can write compressx.dictionary_dump
 * (a superuser restoring) makes such rows; rows naming no waiting column
 * (a table pg_dump -T left out reads as rel 0) are deleted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/uuid.h"
#include "utils/varlena.h"

#include "compat.h"
#include "catalog/dict_auto.h"
#include "catalog/dict_transfer.h"
#include "catalog/relation.h"

PG_FUNCTION_INFO_V1(compressx_table_ref_in);
PG_FUNCTION_INFO_V1(compressx_table_ref_out);
PG_FUNCTION_INFO_V1(compressx_dictionary_dump_sync);

/*
 * compressx.table_ref input: a table's name, qualified as pg_dump writes it
 * (search_path is empty during a restore); a name that resolves to no
 * relation, "-" and a bare OID (meaningless in another database) read as 0.
 */
Datum
compressx_table_ref_in(PG_FUNCTION_ARGS)
{
	char	   *s = PG_GETARG_CSTRING(0);
	List	   *names;

	if (strcmp(s, "-") == 0 || strspn(s, "0123456789") == strlen(s))
		PG_RETURN_OID(InvalidOid);
	names = cx_qualified_name_list(s);
	PG_RETURN_OID(RangeVarGetRelid(makeRangeVarFromNameList(names), NoLock, true));
}

/* Output: the name as regclass prints it, "-" for no (or no such) table. */
Datum
compressx_table_ref_out(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);

	if (!OidIsValid(relid) || get_rel_name(relid) == NULL)
		PG_RETURN_CSTRING(pstrdup("-"));
	return DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid));
}

/*
 * Attach the restored dictionary row of key key (table relid) to the
 * columns of relid whose restored label named it; returns how many.  The
 * dictionary becomes a row of compressx.dictionaries with the same key and
 * bytes; restored_dict stays set, for the worker to re-encode the values
 * loaded before it.
 */
static int
attach_restored(Oid relid, Datum key)
{
	Oid			types[2] = {OIDOID, UUIDOID};
	Datum		values[2];
	int32		dict_id;

	values[0] = ObjectIdGetDatum(relid);
	values[1] = key;
	dict_id = cx_settings_exec(
		"WITH w AS (SELECT s.attname FROM compressx.column_settings s "
		"           WHERE s.relid = $1::pg_catalog.oid::pg_catalog.regclass AND s.restored_dict = $2 "
		"           ORDER BY s.attnum LIMIT 1), "
		"d AS (INSERT INTO compressx.dictionaries "
		"      (relid, attname, dict, sample_values, sample_bytes, auto, trained_ratio, dict_key) "
		"      SELECT $1::pg_catalog.oid::pg_catalog.regclass, w.attname, t.dict, t.sample_values, "
		"             t.sample_bytes, t.auto, t.trained_ratio, t.dict_key "
		"      FROM w, compressx.dictionary_dump t WHERE t.dict_key = $2 "
		"      RETURNING dict_id) "
		"SELECT dict_id FROM d",
		2, types, values, NULL);
	if (dict_id <= 0)
		return 0;
	{
		Oid			utypes[3] = {OIDOID, UUIDOID, INT4OID};
		Datum		uvalues[3];

		uvalues[0] = ObjectIdGetDatum(relid);
		uvalues[1] = key;
		uvalues[2] = Int32GetDatum(dict_id);
		return cx_settings_exec(
			"WITH u AS (UPDATE compressx.column_settings s SET dict_id = $3, restored_at = pg_catalog.now() "
			"           WHERE s.relid = $1::pg_catalog.oid::pg_catalog.regclass AND s.restored_dict = $2 "
			"           RETURNING 1) "
			"SELECT count(*)::pg_catalog.int4 FROM u",
			3, utypes, uvalues, NULL);
	}
}

/*
 * Row trigger dictionaries_dump (AFTER INSERT on compressx.dictionaries) and
 * dictionary_dump_restored (AFTER INSERT on compressx.dictionary_dump).
 *	- A dictionary made: its copy for dumps (the same key, table, bytes).
 *	- A copy inserted otherwise (a restore's data): attached to the columns
 *	  waiting for it (see the header), the worker asked to start at commit;
 *	  deleted when no column waits for it and no dictionary has its key.
 */
Datum
compressx_dictionary_dump_sync(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	TupleDesc	desc;
	HeapTuple	tup;
	bool		isnull;
	Datum		key;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "compressx_dictionary_dump_sync: not called by trigger manager");
	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	tup = trigdata->tg_trigtuple;

	if (RelationGetRelid(rel) == cx_extension_table_oid("dictionaries"))
	{
		Oid			types[1] = {INT4OID};
		Datum		values[1];

		values[0] = heap_getattr(tup, 1, desc, &isnull);	/* dict_id */
		Assert(!isnull);
		cx_settings_exec("INSERT INTO compressx.dictionary_dump "
						 "(dict_key, rel, dict, sample_values, sample_bytes, auto, trained_ratio) "
						 "SELECT d.dict_key, d.relid::pg_catalog.oid::compressx.table_ref, d.dict, "
						 "       d.sample_values, d.sample_bytes, d.auto, d.trained_ratio "
						 "FROM compressx.dictionaries d WHERE d.dict_id = $1 "
						 "ON CONFLICT (dict_key) DO NOTHING",
						 1, types, values, NULL);
		/*
		 * Copies whose dictionary is gone (pruned, or purged with its
		 * table), but not a restore's copies still waiting for their
		 * trigger (a COPY fires them at its end): columns name those.
		 */
		cx_settings_exec("DELETE FROM compressx.dictionary_dump t WHERE NOT EXISTS "
						 "(SELECT FROM compressx.dictionaries d WHERE d.dict_key = t.dict_key) "
						 "AND NOT EXISTS (SELECT FROM compressx.column_settings s "
						 "                WHERE s.restored_dict = t.dict_key)",
						 0, NULL, NULL, NULL);
		return PointerGetDatum(NULL);
	}

	if (RelationGetRelid(rel) != cx_extension_table_oid("dictionary_dump"))
		elog(ERROR, "compressx_dictionary_dump_sync: fired on an unexpected table");
	key = heap_getattr(tup, 1, desc, &isnull);	/* dict_key */
	Assert(!isnull);
	{
		Oid			relid = DatumGetObjectId(heap_getattr(tup, 2, desc, &isnull));
		Oid			types[1] = {UUIDOID};
		Datum		values[1];

		values[0] = key;
		/* the copy of a dictionary just made, or one already here */
		if (cx_settings_exec("SELECT 1 FROM compressx.dictionaries d WHERE d.dict_key = $1 LIMIT 1",
							 1, types, values, NULL) == 1)
			return PointerGetDatum(NULL);
		if (OidIsValid(relid) && attach_restored(relid, key) > 0)
		{
			cx_autodict_launch_at_commit();
			return PointerGetDatum(NULL);
		}
		cx_settings_exec("DELETE FROM compressx.dictionary_dump t WHERE t.dict_key = $1",
						 1, types, values, NULL);
	}
	return PointerGetDatum(NULL);
}
