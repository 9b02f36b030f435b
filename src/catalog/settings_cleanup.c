/*-------------------------------------------------------------------------
 *
 * settings_cleanup.c
 *	  Settings follow their table's and columns' DDL: renames, drops.
 *
 * The event trigger compressx.on_ddl_end keeps column_settings.attname in
 * step with renames, and deletes the settings of a column whose type
 * changed to one that cannot be compressed.  Settings go with their table or column: an object
 * access hook deletes them (and the table's dictionaries, kept as dropped
 * while a logical slot may still decode them) as the table or column is
 * dropped, and the sql_drop event trigger does the same for backends that
 * had not loaded this library when they dropped it (see
 * cx_object_access()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "catalog/catalog.h"
#include "commands/defrem.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_namespace.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "compat.h"
#include "catalog/generation.h"
#include "catalog/relation.h"
#include "catalog/settings.h"
#include "catalog/dict_dropped.h"

PG_FUNCTION_INFO_V1(compressx_on_ddl_end);
PG_FUNCTION_INFO_V1(compressx_on_sql_drop);

static object_access_hook_type prev_object_access_hook = NULL;

static void cx_object_access(ObjectAccessType access, Oid classId,
							 Oid objectId, int subId, void *arg);

/* the transaction whose drops purged dropped dictionaries last */
static FullTransactionId purged_in_xact = {0};

/* Install the object access hook (from cx_settings_init). */
void
cx_settings_cleanup_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = cx_object_access;
}

/*
 * ALTER TABLE .. SET ACCESS METHOD rewrote the table: to compressx, every
 * row was encoded to its columns' settings as they are (recorded applied,
 * catalog/generation.c); to heap, the settings stay behind, pending, and
 * the user hears which and how to drop them (issue 34, item 7).  The ALTER
 * held ACCESS EXCLUSIVE on the table, and still does.  rewritten: the
 * table a rewrite of this statement encoded (cx_take_rewrite_note()); a
 * table that was compressx already is not rewritten (core skips the
 * subcommand), and its settings stay as they were, pending or not.
 */
static void
access_method_changed(AlterTableStmt *stmt, Oid rewritten)
{
	Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	HeapTuple	tup;
	Oid			relam;

	if (!OidIsValid(relid))
		return;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return;
	relam = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
	if (relam == get_am_oid("compressx", true))
	{
		if (rewritten == relid)
			cx_mark_settings_applied(relid, NULL, NULL);
	}
	else if (cx_has_settings_rows(relid))
		cx_notice_settings_left(relid);
}

/*
 * Event trigger on ALTER TABLE, ALTER MATERIALIZED VIEW and ALTER TYPE: a
 * renamed column's row takes its new name (ALTER TYPE .. RENAME ATTRIBUTE
 * .. CASCADE renames the columns of typed tables).  Rows are keyed by
 * column number, so this touches only attname and cannot conflict with
 * another row, whoever's table it names: it also mends the names of rows
 * whose renames it missed (made while event triggers were disabled).  Runs
 * as the settings table's owner (any role's DDL fires it).
 */
Datum
compressx_on_ddl_end(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata = (EventTriggerData *) fcinfo->context;
	RenameStmt *stmt;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "compressx_on_ddl_end: not called by event trigger manager");
	if (IsA(trigdata->parsetree, AlterTableStmt))
	{
		/*
		 * ALTER COLUMN .. TYPE to a type compressx cannot compress (int,
		 * say): the column's settings go, and with them its label, which a
		 * restore could not apply (issue 33 A4).  Mends rows of any table.
		 */
		ListCell   *lc;
		/* what this statement rewrote, forgotten for the next one */
		Oid			rewritten = cx_take_rewrite_note();

		foreach(lc, ((AlterTableStmt *) trigdata->parsetree)->cmds)
			if (castNode(AlterTableCmd, lfirst(lc))->subtype == AT_AlterColumnType)
			{
				cx_settings_exec("DELETE FROM compressx.column_settings s "
								 "USING pg_catalog.pg_attribute a "
								 "WHERE a.attrelid = s.relid AND a.attnum = s.attnum "
								 "AND NOT a.attisdropped AND a.attlen <> -1",
								 0, NULL, NULL, NULL);
				break;
			}
		foreach(lc, ((AlterTableStmt *) trigdata->parsetree)->cmds)
			if (castNode(AlterTableCmd, lfirst(lc))->subtype == AT_SetAccessMethod)
			{
				access_method_changed((AlterTableStmt *) trigdata->parsetree, rewritten);
				break;
			}
		PG_RETURN_VOID();
	}
	/* only a column rename changes what the settings rows must name */
	if (!IsA(trigdata->parsetree, RenameStmt))
		PG_RETURN_VOID();
	stmt = (RenameStmt *) trigdata->parsetree;
	if (stmt->renameType == OBJECT_TABLE && stmt->relation != NULL)
	{
		/* a table Citus made to replace one it dropped */
		Oid			relid = RangeVarGetRelid(makeRangeVar(stmt->relation->schemaname,
														  stmt->newname, -1),
											 NoLock, true);

		if (OidIsValid(relid) && cx_distribution)
			cx_distribution->renamed(relid);
		PG_RETURN_VOID();
	}
	if (stmt->renameType != OBJECT_COLUMN && stmt->renameType != OBJECT_ATTRIBUTE)
		PG_RETURN_VOID();
	cx_settings_exec("UPDATE compressx.column_settings s SET attname = a.attname "
				  "FROM pg_catalog.pg_attribute a "
				  "WHERE a.attrelid = s.relid AND a.attnum = s.attnum "
				  "AND NOT a.attisdropped AND a.attname <> s.attname",
				  0, NULL, NULL, NULL);
	PG_RETURN_VOID();
}

/*
 * Delete the dictionaries of earlier drops that no replication slot needs
 * now (catalog/dict_dropped.c), once per transaction that drops a table;
 * never waiting for a row another session holds (rows it cannot delete
 * now stay for a later purge).
 */
static void
purge_dropped_once(Oid dicts_oid)
{
	if (!OidIsValid(dicts_oid) ||
		FullTransactionIdEquals(purged_in_xact, GetTopFullTransactionId()))
		return;
	purged_in_xact = GetTopFullTransactionId();
	if (cx_dict_purge_dropped(dicts_oid) > 0)
		CacheInvalidateRelcacheByRelid(dicts_oid);
}

/*
 * Event trigger on sql_drop: settings go with their table or column.
 *
 * cx_object_access() already deletes them in backends that have loaded
 * this library; this trigger covers the others (calling it loads the
 * library, but only after the drop), and then finds nothing left to do
 * when the hook has run.
 */
Datum
compressx_on_sql_drop(PG_FUNCTION_ARGS)
{
	int			dropped;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "compressx_on_sql_drop: not called by event trigger manager");

	/*
	 * What the command dropped: 2 when a table or materialized view (their
	 * settings, dictionaries, and the purge of earlier drops' dictionaries),
	 * 1 when only columns (their settings), 0 when nothing of either (DROP
	 * FUNCTION, DROP INDEX, ...): then nothing is done, no row of
	 * compressx's tables is touched, so that no DROP of any role waits on
	 * this one's open transaction (issue 33).  The trigger fires for every
	 * DROP: event trigger tags cannot tell, since DROP TYPE, DROP DOMAIN or
	 * DROP FUNCTION .. CASCADE drop columns too.
	 */
	dropped = cx_settings_exec("SELECT CASE "
							   "WHEN pg_catalog.bool_or(d.objsubid OPERATOR(pg_catalog.=) 0 "
							   "AND d.object_type OPERATOR(pg_catalog.=) ANY ('{table,materialized view}'::pg_catalog.text[])) "
							   "THEN 2 "
							   "WHEN pg_catalog.bool_or(d.objsubid OPERATOR(pg_catalog.>) 0) THEN 1 "
							   "ELSE 0 END "
							   "FROM pg_catalog.pg_event_trigger_dropped_objects() d "
							   "WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass",
							   0, NULL, NULL, NULL);
	if (dropped == 0)
		PG_RETURN_VOID();
	cx_settings_exec("DELETE FROM compressx.column_settings s "
				  "USING pg_catalog.pg_event_trigger_dropped_objects() d "
				  "WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass "
				  "AND d.objid = s.relid::pg_catalog.oid "
				  "AND (d.objsubid = 0 OR d.objsubid = s.attnum)",
				  0, NULL, NULL, NULL);
	if (dropped < 2)
		PG_RETURN_VOID();
	/* not shared ones (see cx_object_access) */
	{
		Oid			dicts = cx_extension_table_oid("dictionaries");
		bool		has_shared = OidIsValid(dicts) && get_attnum(dicts, "shared") > 0;

		/* kept, marked dropped, while a slot may need them (dict_dropped.c) */
		if (cx_dict_has_dropped_column(dicts) && cx_dict_slots_may_decode())
			cx_settings_exec("UPDATE compressx.dictionaries s "
							 "SET relid = 0::pg_catalog.oid::pg_catalog.regclass, "
							 "dropped = pg_catalog.pg_current_xact_id() "
							 "FROM pg_catalog.pg_event_trigger_dropped_objects() d "
							 "WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass "
							 "AND d.objid OPERATOR(pg_catalog.=) s.relid::pg_catalog.oid "
							 "AND d.objsubid OPERATOR(pg_catalog.=) 0 "
							 "AND NOT s.shared",
							 0, NULL, NULL, NULL);
		else
			cx_settings_exec(has_shared ?
							 "DELETE FROM compressx.dictionaries s "
							 "USING pg_catalog.pg_event_trigger_dropped_objects() d "
							 "WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass "
							 "AND d.objid = s.relid::pg_catalog.oid AND d.objsubid = 0 "
							 "AND NOT s.shared" :
							 "DELETE FROM compressx.dictionaries s "
							 "USING pg_catalog.pg_event_trigger_dropped_objects() d "
							 "WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass "
							 "AND d.objid = s.relid::pg_catalog.oid AND d.objsubid = 0",
							 0, NULL, NULL, NULL);
		purge_dropped_once(dicts);
	}
	PG_RETURN_VOID();
}

/*
 * One of compressx's own tables, if it can be written now: the extension is
 * installed, name is a table of it, and neither the table nor its TOAST
 * table is being dropped (DROP EXTENSION drops them in the same command as
 * the tables using the access method, in an order we do not control).
 */
static Oid
own_table_for_cleanup(Oid extoid, const char *name)
{
	Oid			relid = cx_extension_table_oid(name);
	HeapTuple	tup;
	Oid			toastrelid;

	if (!OidIsValid(relid) ||
		getExtensionOfObject(RelationRelationId, relid) != extoid)
		return InvalidOid;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	toastrelid = ((Form_pg_class) GETSTRUCT(tup))->reltoastrelid;
	ReleaseSysCache(tup);
	if (OidIsValid(toastrelid) &&
		!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(toastrelid)))
		return InvalidOid;
	return relid;
}

/*
 * Delete the rows of tableoid (compressx.column_settings or
 * compressx.dictionaries) whose column relid_attno is relid; with attnum
 * set, only those whose attnum_attno column is attnum or whose attname_attno
 * column is attname.  Directly through the heap: no SPI inside a DROP, no
 * change of user, and no triggers (the caller invalidates what they would
 * have).  Returns the number of rows deleted.
 *
 * A row updated by a concurrent transaction (the rename event trigger of
 * another session, say) is waited for; then the scan starts again, with a
 * new snapshot that sees the row's latest version.
 */
static int
delete_rows_of(Oid tableoid, AttrNumber relid_attno, Oid relid,
			   AttrNumber attnum_attno, AttrNumber attname_attno,
			   AttrNumber attnum, const char *attname, AttrNumber keep_attno)
{
	Relation	rel = table_open(tableoid, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			deleted = 0;
	bool		again;

	do
	{
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;

		again = false;
		ScanKeyInit(&key, relid_attno, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(relid));
		/* no index: DROP EXTENSION may have dropped it already */
		scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
		while ((tup = systable_getnext(scan)) != NULL)
		{
			TM_Result	result;
			TM_FailureData tmfd;

			if (attnum > 0)
			{
				bool		isnull;
				Datum		num = heap_getattr(tup, attnum_attno, desc, &isnull);
				Datum		name = heap_getattr(tup, attname_attno, desc, &isnull);

				if (DatumGetInt16(num) != attnum &&
					(attname == NULL ||
					 strcmp(NameStr(*DatumGetName(name)), attname) != 0))
					continue;
			}
			if (keep_attno > 0)
			{
				bool		isnull;
				Datum		keep = heap_getattr(tup, keep_attno, desc, &isnull);

				if (!isnull && DatumGetBool(keep))
					continue;
			}
			result = cx_heap_delete(rel, &tup->t_self, GetCurrentCommandId(true),
									InvalidSnapshot, true, &tmfd);
			if (result == TM_Ok)
				deleted++;
			else if (result == TM_Updated)
			{
				again = true;
				break;
			}
			else if (result != TM_Deleted && result != TM_SelfModified)
				elog(ERROR, "unexpected heap_delete status %u on %s",
					 result, RelationGetRelationName(rel));
		}
		systable_endscan(scan);
	} while (again);

	table_close(rel, RowExclusiveLock);
	return deleted;
}

/*
 * Object access hook: as a table, materialized view or partitioned table
 * is dropped (OAT_DROP, subId 0), delete its settings and dictionaries; as
 * a column of one is dropped (subId > 0), delete that column's setting.
 *
 * Unlike the sql_drop event trigger, this runs in single-user mode, with
 * event triggers disabled and for internal drops, and before the relation
 * is gone, in the dropping transaction.  It runs only in backends that have
 * loaded the library, hence the event trigger stays too.  Nothing to do in
 * binary-upgrade mode (the extension's tables are filled from the old
 * cluster's files afterwards), in databases without the extension, for
 * compressx's own tables, or for temporary tables (they cannot have
 * settings or dictionaries).
 */
static void
cx_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	HeapTuple	tup;
	Form_pg_class form;
	bool		skip;
	Oid			extoid;
	Oid			settings_oid;
	Oid			dicts_oid;
	char	   *attname = NULL;

	if (prev_object_access_hook)
		(*prev_object_access_hook) (access, classId, objectId, subId, arg);

	if (access != OAT_DROP || classId != RelationRelationId || subId < 0 ||
		IsBinaryUpgrade || !IsTransactionState())
		return;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(objectId));
	if (!HeapTupleIsValid(tup))
		return;
	form = (Form_pg_class) GETSTRUCT(tup);
	skip = (form->relkind != RELKIND_RELATION && form->relkind != RELKIND_MATVIEW &&
			form->relkind != RELKIND_PARTITIONED_TABLE) ||
		form->relpersistence == RELPERSISTENCE_TEMP;
	ReleaseSysCache(tup);
	if (skip)
		return;

	extoid = get_extension_oid("compressx", true);
	if (!OidIsValid(extoid))
		return;
	settings_oid = own_table_for_cleanup(extoid, "column_settings");
	dicts_oid = own_table_for_cleanup(extoid, "dictionaries");
	if (objectId == settings_oid || objectId == dicts_oid)
		return;

	if (subId > 0)
		attname = get_attname(objectId, (AttrNumber) subId, true);
	else if (OidIsValid(settings_oid) && !IsCatalogRelationOid(objectId) &&
			 get_rel_namespace(objectId) != PG_CATALOG_NAMESPACE &&
			 !OidIsValid(getExtensionOfObject(RelationRelationId, objectId)) &&
			 cx_distribution)
		cx_distribution->dropped(objectId);
	if (OidIsValid(settings_oid) &&
		delete_rows_of(settings_oid, Anum_cs_relid, objectId,
					   Anum_cs_attnum, Anum_cs_attname,
					   (AttrNumber) subId, attname, InvalidAttrNumber) > 0)
		CacheInvalidateRelcacheByRelid(objectId);
	/*
	 * A dictionary serves its table; it goes with the table only.  Not a
	 * shared one (compressx.dictionaries.shared, since 0.3.0): a Citus
	 * table's, which its shards on this node use too, while Citus drops and
	 * makes again the table without its shards (metadata resync).  Those
	 * stay, named by the dropped table's OID: a leak, not a value that
	 * cannot be read.
	 */
	if (subId == 0 && OidIsValid(dicts_oid))
	{
		AttrNumber	shared_attno = get_attnum(dicts_oid, "shared");
		int			changed;

		/*
		 * A replication slot may still decode the table's earlier values:
		 * keep their dictionaries, marked dropped, until no slot can
		 * (catalog/dict_dropped.c).
		 */
		if (cx_dict_has_dropped_column(dicts_oid) && cx_dict_slots_may_decode())
			changed = cx_dict_mark_dropped(dicts_oid, objectId, shared_attno);
		else
			changed = delete_rows_of(dicts_oid, Anum_dict_relid, objectId,
									 InvalidAttrNumber, InvalidAttrNumber, 0, NULL,
									 shared_attno);
		if (changed > 0)
			CacheInvalidateRelcacheByRelid(dicts_oid);
		purge_dropped_once(dicts_oid);
	}
}
