/*-------------------------------------------------------------------------
 *
 * runs.c
 *	  recompress_online's record of runs (compressx.online_runs): the
 *	  settings before a run, the epoch of a level change, and
 *	  recompress_online_cleanup(), which abandons an interrupted run.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/toast_compression.h"
#include "catalog/partition.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_inherits.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "am/am.h"
#include "online/move.h"
#include "online/runs.h"

PG_FUNCTION_INFO_V1(compressx_recompress_online_cleanup);

/*
 * Record a run on relid in compressx.online_runs: what it was asked to do
 * (codec, level, columns, access method: what recompress_online_leftovers
 * offers to resume), and the table's settings as they are (compressx's
 * rows, attcompression).  When a run interrupted earlier recorded the table
 * already, the request becomes this run's (the latest intent: resuming an
 * older one would undo this one), while the settings of before that first
 * run stay, for recompress_online_cleanup, and so does the start time; a
 * level change's epoch stays only while codec and level are the same.  Rows
 * of tables that no longer exist go.
 */
void
cx_online_record_run(OnlineRun *run, Oid relid)
{
	Oid			types[5] = {OIDOID, TEXTOID, INT4OID, NAMEARRAYOID, TEXTOID};
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};

	if (!OidIsValid(cx_extension_table_oid("online_runs")))
		return;					/* extension not updated to 0.2.0 yet */
	values[0] = ObjectIdGetDatum(relid);
	values[1] = run->req.codec ? CStringGetTextDatum(run->req.codec->name) : (Datum) 0;
	nulls[1] = run->req.codec ? ' ' : 'n';
	values[2] = Int32GetDatum(run->req.level);
	nulls[2] = run->req.level_isnull ? 'n' : ' ';
	values[3] = PointerGetDatum(run->columns);
	nulls[3] = run->columns ? ' ' : 'n';
	values[4] = OidIsValid(run->target_am) ?
		CStringGetTextDatum(run->target_am == HEAP_TABLE_AM_OID ? "heap" : "compressx") : (Datum) 0;
	nulls[4] = OidIsValid(run->target_am) ? ' ' : 'n';
	cx_settings_exec("DELETE FROM compressx.online_runs r WHERE NOT EXISTS "
					 "(SELECT FROM pg_class c WHERE c.oid = r.relid::oid)",
					 0, NULL, NULL, NULL);
	cx_settings_exec("INSERT INTO compressx.online_runs "
					 "SELECT $1::oid::regclass, now(), $2, $3, $4, $5, "
					 "(SELECT jsonb_agg(to_jsonb(s) - 'relid' ORDER BY s.attnum) "
					 " FROM compressx.column_settings s WHERE s.relid = $1), "
					 "(SELECT string_agg(a.attnum || ':' || a.attcompression::text, ',' ORDER BY a.attnum) "
					 " FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 "
					 " AND NOT a.attisdropped AND a.attlen = -1) "
					 "ON CONFLICT (relid) DO UPDATE SET "
					 "codec = EXCLUDED.codec, level = EXCLUDED.level, "
					 "columns = EXCLUDED.columns, access_method = EXCLUDED.access_method, "
					 "epoch = CASE WHEN online_runs.codec IS NOT DISTINCT FROM EXCLUDED.codec "
					 "  AND online_runs.level IS NOT DISTINCT FROM EXCLUDED.level "
					 "  THEN online_runs.epoch END",
					 5, types, values, nulls);
}

/*
 * A level named on a compressx table: the stored form does not record the
 * level, so values already in the target codec are re-encoded when their
 * row version was written by a transaction older than the run.  After the
 * setting changed and the writers that started before have ended, every
 * transaction with a newer xid encodes with the new level; the first xid
 * after that is the run's epoch, kept in compressx.online_runs so that a
 * resumed call (with the same codec and level) goes on from it instead of
 * re-encoding what it rewrote already.
 */
void
cx_online_start_relevel(OnlineRun *run)
{
	Oid			types[4] = {OIDOID, INT8OID, TEXTOID, INT4OID};
	Datum		values[4];
	text	   *epoch;
	FullTransactionId next;

	run->relevel_xid = InvalidTransactionId;
	if (!run->is_cx)
		return;

	/*
	 * No level named, but a column's setting changed since its last rewrite
	 * (catalog/generation.c): the same, from an epoch of this call's own (a
	 * resumed call re-encodes what an interrupted one did: its epoch could
	 * predate a later change of the setting).
	 */
	if ((run->req.codec == NULL || run->req.level_isnull) && run->settings_pending)
	{
		cx_online_wait_for_writers(run);
		run->relevel_xid = XidFromFullTransactionId(ReadNextFullTransactionId());
		return;
	}
	if (run->req.codec == NULL || run->req.level_isnull ||
		!OidIsValid(cx_extension_table_oid("online_runs")))
		return;
	cx_online_wait_for_writers(run);
	next = ReadNextFullTransactionId();
	values[0] = ObjectIdGetDatum(run->relid);
	values[1] = Int64GetDatum((int64) U64FromFullTransactionId(next));
	values[2] = CStringGetTextDatum(run->req.codec->name);
	values[3] = Int32GetDatum(run->req.level);
	epoch = cx_settings_exec_text("UPDATE compressx.online_runs SET "
								  "epoch = CASE WHEN epoch IS NULL OR codec IS DISTINCT FROM $3 "
								  "  OR level IS DISTINCT FROM $4 THEN $2 ELSE epoch END, "
								  "codec = $3, level = $4 "
								  "WHERE relid = $1 RETURNING epoch::text",
								  4, types, values, NULL);
	if (epoch != NULL)
		next = FullTransactionIdFromU64((uint64) strtou64(text_to_cstring(epoch), NULL, 10));
	run->relevel_xid = XidFromFullTransactionId(next);
}

/* The run on relid completed: forget it. */
void
cx_online_forget_run(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	if (OidIsValid(cx_extension_table_oid("online_runs")))
		cx_settings_exec("DELETE FROM compressx.online_runs WHERE relid = $1",
						 1, types, values, NULL);
}

/*
 * Whether a dictionary of compressx.dictionaries serves relid (trained on it
 * or on a partitioned ancestor): only then can a stored zstd value name
 * one, so only then are values' dictionaries compared (a reference's needs
 * a TOAST chunk read).
 */
bool
cx_online_table_has_dictionaries(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	if (!OidIsValid(cx_extension_table_oid("dictionaries")))
		return false;
	return cx_settings_exec("SELECT count(*)::int4 FROM compressx.dictionaries d "
							"WHERE d.relid = $1 OR d.relid IN "
							"(SELECT p.relid FROM pg_partition_ancestors($1) p)",
							1, types, values, NULL) > 0;
}

/*
 * The columns of relid whose attcompression differs from the one recorded
 * before its interrupted run (compression_before: "attnum:method,...",
 * method empty for the default), with the method to restore; palloc'd.
 */
static TargetColumn *
compression_to_restore(Oid relid, int *ntargets)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	text	   *before;
	char	   *list;
	char	   *item;
	char	   *save;
	int			maxtargets = 8;
	TargetColumn *targets = palloc(sizeof(TargetColumn) * maxtargets);

	*ntargets = 0;
	before = cx_settings_exec_text("SELECT compression_before FROM compressx.online_runs "
								   "WHERE relid = $1", 1, types, values, NULL);
	list = before ? text_to_cstring(before) : pstrdup("");
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save))
	{
		char	   *colon = strchr(item, ':');
		AttrNumber	attnum = (AttrNumber) atoi(item);
		char		method = colon && colon[1] ? colon[1] : InvalidCompressionMethod;
		HeapTuple	tup = SearchSysCacheAttNum(relid, attnum);

		if (!HeapTupleIsValid(tup))
			continue;
		if (!((Form_pg_attribute) GETSTRUCT(tup))->attisdropped &&
			((Form_pg_attribute) GETSTRUCT(tup))->attcompression != method)
		{
			if (*ntargets == maxtargets)
			{
				maxtargets *= 2;
				targets = repalloc(targets, sizeof(TargetColumn) * maxtargets);
			}
			memset(&targets[*ntargets], 0, sizeof(TargetColumn));
			namestrcpy((Name) targets[*ntargets].name,
					   NameStr(((Form_pg_attribute) GETSTRUCT(tup))->attname));
			targets[*ntargets].method = method;
			(*ntargets)++;
		}
		ReleaseSysCache(tup);
	}
	return targets;
}

/*
 * Restore the settings relid had before its interrupted run and forget the
 * run; false when no run of relid is recorded (or relid is gone).
 * compressx's rows need SHARE UPDATE EXCLUSIVE (as set_column_codec),
 * attcompression ACCESS EXCLUSIVE (as ALTER COLUMN .. SET COMPRESSION),
 * both waited for as those commands wait.  One lock, the stronger one when
 * some attcompression differs: holding the weaker while queueing for the
 * stronger deadlocks with a client that read the table and then alters it.
 * Should the answer change between the look and the lock, the weaker lock
 * goes (nothing was changed under it) and the stronger is taken.  The
 * changes are made as the table's owner.
 */
static bool
cleanup_table(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	TargetColumn *targets;
	int			ntargets;
	LOCKMODE	mode;
	Relation	rel;
	CxOwnerScope owner = {0};

	targets = compression_to_restore(relid, &ntargets);
	mode = ntargets > 0 ? AccessExclusiveLock : ShareUpdateExclusiveLock;
	for (;;)
	{
		LockRelationOid(relid, mode);
		rel = try_relation_open(relid, NoLock);
		if (rel == NULL)
			return false;		/* dropped meanwhile */
		if (!cx_relation_ownercheck(relid, GetUserId()))
			aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(rel->rd_rel->relkind),
						   RelationGetRelationName(rel));
		if (cx_settings_exec("SELECT count(*)::int4 FROM compressx.online_runs WHERE relid = $1",
							 1, types, values, NULL) == 0)
		{
			relation_close(rel, NoLock);
			return false;
		}
		targets = compression_to_restore(relid, &ntargets);
		if (ntargets == 0 || mode == AccessExclusiveLock)
			break;
		relation_close(rel, NoLock);
		UnlockRelationOid(relid, mode);
		mode = AccessExclusiveLock;
	}

	cx_owner_scope_enter(&owner, rel->rd_rel->relowner);
	cx_settings_exec("DELETE FROM compressx.column_settings WHERE relid = $1",
					 1, types, values, NULL);
	/* with dictionary => 'auto' and the inline limit since 0.4.0 */
	cx_settings_exec(cx_settings_have_auto_column() ?
					 "INSERT INTO compressx.column_settings "
					 "(relid, attname, attnum, codec, level, min_size, dict_id, auto_dictionary, "
					 " inline_max) "
					 "SELECT $1::oid::regclass, a.attname, a.attnum, x.codec, x.level, "
					 "       x.min_size, x.dict_id, COALESCE(x.auto_dictionary, false), x.inline_max "
					 "FROM compressx.online_runs r, "
					 "     jsonb_to_recordset(r.settings_before) AS x(attnum smallint, codec text, "
					 "         level int, min_size int, dict_id int, auto_dictionary boolean, "
					 "         inline_max int) "
					 "JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = x.attnum "
					 "     AND NOT a.attisdropped "
					 "WHERE r.relid = $1" :
					 "INSERT INTO compressx.column_settings "
					 "(relid, attname, attnum, codec, level, min_size, dict_id) "
					 "SELECT $1::oid::regclass, a.attname, a.attnum, x.codec, x.level, "
					 "       x.min_size, x.dict_id "
					 "FROM compressx.online_runs r, "
					 "     jsonb_to_recordset(r.settings_before) AS x(attnum smallint, codec text, "
					 "         level int, min_size int, dict_id int) "
					 "JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = x.attnum "
					 "     AND NOT a.attisdropped "
					 "WHERE r.relid = $1",
					 1, types, values, NULL);
	if (ntargets > 0)
		cx_set_column_compression(relid, targets, ntargets);
	cx_online_forget_run(relid);
	cx_owner_scope_leave(&owner);
	relation_close(rel, NoLock);
	return true;
}

/*
 * compressx.recompress_online_cleanup(rel regclass) RETURNS text
 *
 * Abandon the interrupted run of rel (of each of its partitions, for a
 * partitioned table): the column settings it changed are restored as they
 * were before the first interrupted CALL; the rows it rewrote stay as they
 * are (each whole, in a codec the table reads), and so does the access
 * method.  Refused while a run is active on the table.
 */
Datum
compressx_recompress_online_cleanup(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	List	   *rels;
	ListCell   *lc;
	int			n = 0;
	List	   *tags = NIL;

	cx_prevent_if_read_only("recompress_online_cleanup", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
	cx_online_check_target(relid, true);
	if (!OidIsValid(cx_extension_table_oid("online_runs")))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension compressx must be updated to version 0.2.0"),
				 errhint("ALTER EXTENSION compressx UPDATE")));
	rels = get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE ?
		find_all_inheritors(relid, NoLock, NULL) : list_make1_oid(relid);
	foreach(lc, rels)
		cx_online_check_target(lfirst_oid(lc), true);

	/* no run may be active on any of them (nor on an ancestor) */
	foreach(lc, rels)
	{
		LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

		cx_online_claim_table(tag, lfirst_oid(lc));
		tags = lappend(tags, tag);
	}
	if (get_rel_relispartition(relid))
	{
		foreach(lc, get_partition_ancestors(relid))
		{
			LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

			cx_online_claim_table(tag, lfirst_oid(lc));
			tags = lappend(tags, tag);
		}
	}
	PG_TRY();
	{
		foreach(lc, rels)
			n += cleanup_table(lfirst_oid(lc)) ? 1 : 0;
	}
	PG_FINALLY();
	{
		foreach(lc, tags)
			LockRelease((LOCKTAG *) lfirst(lc), ExclusiveLock, true);
	}
	PG_END_TRY();
	if (n == 0)
		PG_RETURN_TEXT_P(cstring_to_text(psprintf("no interrupted recompress_online run on \"%s\"",
												  get_rel_name(relid))));
	PG_RETURN_TEXT_P(cstring_to_text(psprintf("restored the settings of %d table%s of \"%s\" as they were before the interrupted run",
											  n, n == 1 ? "" : "s", get_rel_name(relid))));
}
