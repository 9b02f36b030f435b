/*-------------------------------------------------------------------------
 *
 * attcompression.c
 *	  A column's COMPRESSION (pg_attribute.attcompression) on compressx
 *	  tables: what it means there, and what \d+ shows.
 *
 * The rule (doc/access-method.md, "COMPRESSION and \d+"):
 *
 * - compressx's own setting (compressx.column_settings, written by
 *	 set_column_codec and the functions that set codecs) decides a column's
 *	 codec.
 * - A column of a compressx table without one follows its COMPRESSION
 *	 (pglz, lz4) when that was chosen on the compressx table: CREATE TABLE
 *	 .. USING compressx with COMPRESSION (or LIKE .. INCLUDING COMPRESSION),
 *	 ALTER TABLE .. ALTER COLUMN .. SET COMPRESSION or ADD COLUMN ..
 *	 COMPRESSION.  Such a statement raises a NOTICE when the codec it gives
 *	 differs from compressx.default_codec, naming the call that returns the
 *	 column to it (the event trigger compressx_compression_ddl).  A
 *	 COMPRESSION given to a column that has a setting does not apply; a
 *	 NOTICE says so, and attcompression goes back to the setting's.
 * - A heap table's COMPRESSION is heap's: moving the table to compressx
 *	 (ALTER TABLE .. SET ACCESS METHOD compressx, recompress_online with
 *	 access_method => 'compressx') does not keep it.  Its columns get their
 *	 settings or compressx.default_codec, and one NOTICE names the columns
 *	 whose COMPRESSION was dropped.  (settings.c resolves a rewrite's
 *	 settings without COMPRESSION while the table is not yet compressx.)
 * - attcompression of a compressx table mirrors the setting where core has
 *	 a name for the codec: pglz and lz4 show as such, zstd, none and no
 *	 setting blank.  The row trigger on column_settings keeps it so
 *	 (settings.c, follow_setting).  A heap table's attcompression is heap's
 *	 own; its settings are pending.  Moving back to heap keeps the mirror: a
 *	 method heap stores, or blank (default_toast_compression).
 * - Codec none also sets the column's storage (attstorage) to EXTERNAL,
 *	 core's name for "never compressed, out of line when the row needs it",
 *	 and \d+ shows it so.  Nothing else keeps a value whole: heap's
 *	 toaster compresses every EXTENDED or MAIN value of a row over the toast
 *	 target (with default_toast_compression when attcompression is blank),
 *	 and an out-of-line value compressx saved itself is fetched back and
 *	 toasted again on insert (toast_tuple_init); a value in compressx's
 *	 own format would be one core cannot read.  Leaving none gives the
 *	 column its type's storage again when it is EXTERNAL (a MAIN chosen
 *	 before none is not remembered); a storage chosen while the column is
 *	 not none (SET STORAGE) is the user's, and stays.
 *
 * Locks: the mirror is written under SHARE UPDATE EXCLUSIVE (what
 * set_column_codec holds), not the ACCESS EXCLUSIVE of ALTER COLUMN .. SET
 * COMPRESSION.  As ALTER COLUMN .. SET STATISTICS, which also updates
 * pg_attribute under SHARE UPDATE EXCLUSIVE: a session that still writes
 * with the tuple descriptor it had stores values with the previous method,
 * which is as readable (every value carries its method), and its next
 * statement sees the new one.  The moves hold ACCESS EXCLUSIVE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/toast_compression.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "commands/event_trigger.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "compat.h"
#include "catalog/attcompression.h"
#include "catalog/relation.h"
#include "catalog/settings.h"

PG_FUNCTION_INFO_V1(compressx_on_compression_ddl);

static object_access_hook_type prev_object_access_hook = NULL;

static const char *
method_name(char method)
{
	return CompressionMethodIsValid(method) ? GetCompressionMethodName(method) : "default";
}

static char *
qualified_name(Relation rel)
{
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
}

/*
 * relid has just become a compressx table (the caller holds ACCESS
 * EXCLUSIVE on it): every variable-length column's attcompression becomes
 * the mirror of its setting, blank without one, and a NOTICE names the
 * columns whose COMPRESSION is not kept.  Returns whether some
 * attcompression changed (the caller makes it visible).
 */
bool
cx_attcompression_moved_in(Oid relid)
{
	Relation	rel = relation_open(relid, NoLock);
	TupleDesc	desc = RelationGetDescr(rel);
	CxColumnSetting *settings = palloc(sizeof(CxColumnSetting) * Max(desc->natts, 1));
	StringInfoData dropped;
	const char *first = NULL;
	char		first_method = InvalidCompressionMethod;
	int			n = 0;
	bool		changed = false;

	initStringInfo(&dropped);
	cx_resolve_settings(rel, settings);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const CxColumnSetting *s = &settings[i];
		char		target;

		if (att->attisdropped || att->attlen != -1)
			continue;
		target = s->explicit_setting ? cx_core_method_of_codec(s->codec->id) :
			InvalidCompressionMethod;
		if (!s->explicit_setting && CompressionMethodIsValid(att->attcompression))
		{
			appendStringInfo(&dropped, "%s%s (%s)", n > 0 ? ", " : "",
							 quote_identifier(NameStr(att->attname)),
							 method_name(att->attcompression));
			if (n++ == 0)
			{
				first = pstrdup(NameStr(att->attname));
				first_method = att->attcompression;
			}
		}
		if (cx_set_attcompression(relid, att->attnum, target))
			changed = true;
		if (s->explicit_setting && s->codec->id == CX_CODEC_NONE &&
			cx_set_attstorage_for_none(relid, att->attnum, true))
			changed = true;
	}
	if (n > 0)
	{
		const char *defname = cx_codec_by_id(cx_default_codec)->name;
		char	   *name = qualified_name(rel);

		ereport(NOTICE,
				(errmsg_plural("%d column of table \"%s\" is stored with %s (compressx.default_codec), not with the COMPRESSION it had as a heap table",
							   "%d columns of table \"%s\" are stored with %s (compressx.default_codec), not with the COMPRESSION they had as a heap table",
							   n, n, RelationGetRelationName(rel), defname),
				 errdetail("Not kept: %s.  A table moved to the compressx access method stores each column as compressx.set_column_codec() chose, else with compressx.default_codec.",
						   dropped.data),
				 errhint("SELECT compressx.set_column_codec('%s', '%s', '%s'), then compressx.recompress_table('%s'), stores that column with %s again.",
						 name, first, method_name(first_method), name,
						 method_name(first_method))));
	}
	relation_close(rel, NoLock);
	pfree(settings);
	return changed;
}

/*
 * Object access hook: ALTER TABLE .. SET ACCESS METHOD compressx swaps the
 * transient relation it rewrote the table into ("pg_temp_<oid>", a
 * compressx relation) with the table (cluster.c, swap_relation_files), and
 * reports the change of both.  On the transient's report, the swap's
 * catalog updates are not visible yet (no command counter increment in
 * between): the relation cache still shows the transient as compressx and
 * the table as what it was.  When that was not compressx, the table has
 * just moved in.  VACUUM FULL and CLUSTER swap too, but keep the access
 * method; moves to heap swap the other way.
 */
static void
attcompression_access(ObjectAccessType access, Oid classId, Oid objectId,
					  int subId, void *arg)
{
	char	   *relname;
	unsigned int oid;
	char		tail;
	Relation	transient;
	Relation	table;
	bool		moved_in = false;

	if (prev_object_access_hook)
		(*prev_object_access_hook) (access, classId, objectId, subId, arg);

	if (access != OAT_POST_ALTER || classId != RelationRelationId || subId != 0 ||
		IsBinaryUpgrade || !IsTransactionState() || cx_am_routine == NULL)
		return;
	relname = get_rel_name(objectId);
	if (relname == NULL || strncmp(relname, "pg_temp_", 8) != 0 ||
		sscanf(relname + 8, "%u%c", &oid, &tail) != 1 || oid == 0 ||
		(Oid) oid == objectId ||
		!cx_relation_oid_locked_by_me((Oid) oid, AccessExclusiveLock, false))
		return;

	/*
	 * Only a swap makes the table's file new in this subtransaction while
	 * the transient, of its schema and owner, is reported
	 * (swap_relation_files sets it just before); the name alone proves
	 * nothing (cx_settings_relid()).
	 */
	transient = RelationIdGetRelation(objectId);
	if (transient == NULL)
		return;
	table = RelationIdGetRelation((Oid) oid);
	if (table != NULL)
	{
		moved_in = cx_is_compressx_relation(transient) &&
			!cx_is_compressx_relation(table) &&
			cx_rel_new_file_subid(table) == GetCurrentSubTransactionId() &&
			table->rd_rel->relowner == transient->rd_rel->relowner &&
			table->rd_rel->relnamespace == transient->rd_rel->relnamespace;
		RelationClose(table);
	}
	RelationClose(transient);
	if (moved_in)
		(void) cx_attcompression_moved_in((Oid) oid);
}

void
cx_attcompression_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = attcompression_access;
}

/*
 * After a statement that chose the COMPRESSION of column (NULL: every
 * column) of relid: on a compressx table, say when that makes the column
 * stored with something other than compressx.default_codec, and undo it
 * where a setting of compressx's own applies (with a NOTICE when the
 * statement named a COMPRESSION: always for ALTER, pglz or lz4 for CREATE;
 * a new partition without one just shows the setting it follows).
 * created: CREATE TABLE, only for a table created in this transaction.  The
 * statement holds its lock on relid (ACCESS EXCLUSIVE).
 */
static void
check_compression(Oid relid, const char *column, bool created)
{
	Relation	rel = try_relation_open(relid, NoLock);
	TupleDesc	desc;
	CxColumnSetting *settings;
	bool		changed = false;

	if (rel == NULL)
		return;
	if (!cx_is_compressx_relation(rel) ||
		(created && rel->rd_createSubid == InvalidSubTransactionId))
	{
		relation_close(rel, NoLock);
		return;
	}
	desc = RelationGetDescr(rel);
	settings = palloc(sizeof(CxColumnSetting) * Max(desc->natts, 1));
	cx_resolve_settings(rel, settings);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const CxColumnSetting *s = &settings[i];
		char	   *name;

		if (att->attisdropped || att->attlen != -1 ||
			(column != NULL && strcmp(NameStr(att->attname), column) != 0))
			continue;
		name = qualified_name(rel);
		if (s->explicit_setting)
		{
			char		target = cx_core_method_of_codec(s->codec->id);

			if (att->attcompression == target)
				continue;
			if (!created || CompressionMethodIsValid(att->attcompression))
				ereport(NOTICE,
						(errmsg("COMPRESSION %s of column \"%s\" of table \"%s\" does not apply: compressx's setting stores it with %s",
								method_name(att->attcompression), NameStr(att->attname),
								RelationGetRelationName(rel), s->codec->name),
						 errdetail("A setting of compressx.set_column_codec() comes before COMPRESSION; the column's COMPRESSION shows the setting again."),
						 errhint("SELECT compressx.set_column_codec('%s', '%s', '<codec>') changes the setting; compressx.reset_column_codec('%s', '%s') removes it.",
								 name, NameStr(att->attname), name, NameStr(att->attname))));
			if (cx_set_attcompression(relid, att->attnum, target))
				changed = true;
		}
		else if (CompressionMethodIsValid(att->attcompression) &&
				 s->codec->id != cx_default_codec)
			ereport(NOTICE,
					(errmsg("column \"%s\" of table \"%s\" is stored with %s, not with compressx.default_codec (%s), because of its COMPRESSION",
							NameStr(att->attname), RelationGetRelationName(rel),
							s->codec->name, cx_codec_by_id(cx_default_codec)->name),
					 errdetail("On a compressx table, a column without a setting of compressx.set_column_codec() follows its COMPRESSION (pglz or lz4)."),
					 errhint("SELECT compressx.reset_column_codec('%s', '%s') returns it to compressx.default_codec; compressx.set_column_codec() chooses another codec.",
							 name, NameStr(att->attname))));
	}
	pfree(settings);
	relation_close(rel, NoLock);
	if (changed)
		CommandCounterIncrement();
}

/*
 * Event trigger compressx_compression_ddl (ddl_command_end of CREATE TABLE,
 * ALTER TABLE and ALTER MATERIALIZED VIEW): the statements that choose a
 * column's COMPRESSION, checked by check_compression().  CREATE TABLE:
 * every column of a table it created; ALTER: the columns of SET
 * COMPRESSION, and of ADD COLUMN .. COMPRESSION in the table and its
 * children.
 */
Datum
compressx_on_compression_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	Node	   *tree;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "compressx_on_compression_ddl: not called by event trigger manager");
	trigdata = (EventTriggerData *) fcinfo->context;
	tree = trigdata->parsetree;
	if (cx_am_routine == NULL)
		PG_RETURN_VOID();		/* no compressx table in this backend yet */
	if (IsA(tree, CreateStmt))
	{
		Oid			relid = RangeVarGetRelid(((CreateStmt *) tree)->relation, NoLock, true);

		if (OidIsValid(relid))
			check_compression(relid, NULL, true);
	}
	else if (IsA(tree, AlterTableStmt))
	{
		AlterTableStmt *stmt = (AlterTableStmt *) tree;
		Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);
		ListCell   *lc;

		if (!OidIsValid(relid))
			PG_RETURN_VOID();
		foreach(lc, stmt->cmds)
		{
			AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

			if (cmd->subtype == AT_SetCompression && cmd->name != NULL)
				check_compression(relid, cmd->name, false);
			else if (cmd->subtype == AT_AddColumn && IsA(cmd->def, ColumnDef) &&
					 ((ColumnDef *) cmd->def)->compression != NULL)
			{
				List	   *rels = find_all_inheritors(relid, NoLock, NULL);
				ListCell   *rc;

				foreach(rc, rels)
					check_compression(lfirst_oid(rc), ((ColumnDef *) cmd->def)->colname,
									  false);
			}
		}
	}
	PG_RETURN_VOID();
}
