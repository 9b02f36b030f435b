/*-------------------------------------------------------------------------
 *
 * restored.c
 *	  The automatic-dictionary worker's part in a restore: re-encode the
 *	  values a restore loaded before their column's dictionary arrived, or
 *	  train one where the dump carried none.
 *
 * A restored label that names a dictionary leaves the column with
 * restored_dict = <key> and restored_at = the time (catalog/label.c); the
 * dictionary's row of compressx.dictionary_dump, later in the same restore,
 * attaches it (catalog/dict_transfer.c: dict_id set, restored_at set
 * again).  Each pass of the worker (worker.c) looks at those columns,
 * table by table:
 *
 *	- a dictionary attached (dict_id set): CALL compressx.recompress_online
 *	  on those columns, which rewrites online, in committed batches, every
 *	  value stored with another dictionary or none (online/online.c); then
 *	  restored_at is cleared, and restored_dict too once the dictionary is
 *	  the one the label named.
 *	- still none, the label restored at least compressx.
 *	  auto_dictionary_naptime ago, and the table has pages: the dump did not
 *	  carry it (pg_dump -t and -n leave extension data out).  A column with
 *	  dictionary => 'auto' is left to the automatic checks (restored_dict
 *	  cleared); another gets compressx.train_dictionary() run on the
 *	  restored rows, as the table's owner in a security-restricted
 *	  operation, then the values are re-encoded as above.  restored_dict
 *	  stays: if the named dictionary still arrives (a parallel restore
 *	  loads small tables last), it replaces the trained one and the values
 *	  are re-encoded once more.
 *	- otherwise it waits: while the table has pages, the worker stays for
 *	  at most that naptime; with no page, the table's first write starts a
 *	  worker again (catalog/dict_auto.c).
 *
 * Who can make it wait or fail.  recompress_online takes every lock
 * without queueing and gives way to clients (max_lock_wait 1 s); it runs the
 * owner's code as the owner.  Here its waits (retrying a lock or a row
 * another session holds, waiting for old snapshots) may last one
 * compressx.auto_dictionary_naptime of naps in all (cx_online_wait_budget_ms;
 * it counts the naps, not the lock attempts between them: with a 2 s
 * naptime one call held by a row took about 6 s in 064), so no session, the
 * table's owner included, can keep the worker, which serves every table of
 * the database, waiting much longer on one table; a table another session
 * holds ACCESS EXCLUSIVE on when the pass looks at it is not waited for
 * (its next write starts a worker again).  And once one owner's tables
 * took a naptime of a pass, that owner's other tables wait for the next
 * pass (OwnerSpent): a role holding rows of many tables cannot keep the
 * worker from other roles' tables.  The call runs as the worker's session user, which
 * may rewrite any table; the rows it touches are the restored table's.
 * Being a superuser, the worker's session has search_path pinned to
 * pg_catalog, pg_temp for its whole life (worker.c; a GUC nest level would
 * not outlive the procedure's commits), and the statements here qualify
 * their operators: an operator "=" (regclass, integer) a role planted in
 * public matched "relid = <oid>" exactly and ran as the superuser
 * (test/t/064_restore_worker_hostile.pl).  An
 * error is logged, and the column is left to the user (restored_at
 * cleared, restored_dict kept: a dictionary still to come is attached),
 * who can run recompress_online.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "compat.h"
#include "tcop/pquery.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/portal.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/syscache.h"

#include "catalog/dict_auto.h"
#include "catalog/relation.h"
#include "catalog/settings.h"
#include "dictionaries/restored.h"
#include "online/run.h"

/* One column of a restored label that still has work. */
typedef struct RestoredColumn
{
	Oid			relid;
	char	   *attname;
	int32		dict_id;		/* 0: none yet */
	bool		auto_dict;
	double		age_s;			/* since restored_at */
} RestoredColumn;

/* Order by table, then as listed (list_sort is not stable: by name). */
static int
restored_column_cmp(const ListCell *a, const ListCell *b)
{
	const RestoredColumn *x = lfirst(a);
	const RestoredColumn *y = lfirst(b);

	if (x->relid != y->relid)
		return x->relid < y->relid ? -1 : 1;
	return strcmp(x->attname, y->attname);
}

/* The most columns one pass lists (the worker's memory stays bounded). */
#define CX_RESTORED_MAX_COLUMNS 1000

/*
 * The columns with restored_at set, in relid order, allocated in cxt (a
 * transaction of its own).
 */
static List *
restored_columns(MemoryContext cxt)
{
	List	   *out = NIL;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (cx_extension_table_has_column("column_settings", "restored_at", Anum_cs_restored_dict + 1))
	{
		SPI_connect();
		if (SPI_execute("SELECT s.relid::pg_catalog.oid, s.attname::pg_catalog.text, "
						"       coalesce(s.dict_id, 0), coalesce(s.auto_dictionary, false), "
						"       extract(epoch FROM pg_catalog.now() OPERATOR(pg_catalog.-) s.restored_at)::pg_catalog.float8 "
						"FROM compressx.column_settings s "
						"JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.relid::pg_catalog.oid "
						"WHERE s.restored_at IS NOT NULL "
						/* a bounded list: work before waiting, tables with pages first */
						"ORDER BY s.dict_id IS NULL, c.relpages OPERATOR(pg_catalog.=) 0, s.restored_at "
						"LIMIT " CppAsString2(CX_RESTORED_MAX_COLUMNS),
						true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not list the restored columns");
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			MemoryContext old = MemoryContextSwitchTo(cxt);
			RestoredColumn *c = palloc(sizeof(RestoredColumn));

			c->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
			c->attname = TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull));
			c->dict_id = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
			c->auto_dict = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
			c->age_s = DatumGetFloat8(SPI_getbinval(tup, desc, 5, &isnull));
			out = lappend(out, c);
			MemoryContextSwitchTo(old);
		}
		SPI_finish();
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(cxt);
	/* each table's columns together */
	list_sort(out, restored_column_cmp);
	return out;
}

/*
 * The columns cols (a list of quoted names) of relid with their current
 * dict_id, as a text[] literal of "name:dict_id" (allocated in cxt), or
 * NULL when they could not be read.
 */
static char *
dict_ids_now(Oid relid, const char *cols, MemoryContext cxt)
{
	char	   *result = NULL;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	SPI_connect();
	if (SPI_execute(psprintf("SELECT pg_catalog.array_agg(s.attname::pg_catalog.text || ':' || "
							 "coalesce(s.dict_id, 0)::pg_catalog.text)::pg_catalog.text "
							 "FROM compressx.column_settings s "
							 "WHERE s.relid OPERATOR(pg_catalog.=) %u::pg_catalog.oid::pg_catalog.regclass "
							 "AND s.attname OPERATOR(pg_catalog.=) ANY (ARRAY[%s]::pg_catalog.name[])",
							 relid, cols),
					true, 1) == SPI_OK_SELECT && SPI_processed == 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v != NULL)
			result = MemoryContextStrdup(cxt, v);
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(cxt);
	return result;
}

/*
 * Run one statement as a client's top-level statement would run: parsed,
 * planned and run in a portal, so that a procedure may commit (it needs the
 * portal's snapshot handling: SPI alone has none to give it in a
 * background worker).
 */
static void
run_in_portal(const char *sql, MemoryContext cxt)
{
	/* the plan must outlive the commits of the procedure (as MessageContext) */
	MemoryContext old = MemoryContextSwitchTo(cxt);
	List	   *raw = pg_parse_query(sql);
	RawStmt    *stmt = linitial_node(RawStmt, raw);
	List	   *queries = pg_analyze_and_rewrite_fixedparams(stmt, sql, NULL, 0, NULL);
	List	   *plans = pg_plan_queries(queries, sql, CURSOR_OPT_PARALLEL_OK, NULL);
	Portal		portal = CreatePortal("", true, true);
	QueryCompletion qc;

	Assert(list_length(raw) == 1);
	portal->visible = false;
	PortalDefineQuery(portal, NULL, sql, CreateCommandTag(stmt->stmt), plans, NULL);
	MemoryContextSwitchTo(old);
	PortalStart(portal, NULL, 0, InvalidSnapshot);
	InitializeQueryCompletion(&qc);
	(void) cx_portal_run(portal, FETCH_ALL, true, None_Receiver, None_Receiver, &qc);
	PortalDrop(portal, false);
}

/*
 * Run sql in a transaction of its own: a CALL (top_level) as a client's
 * statement, anything else through SPI, as owner in a security-restricted
 * operation when owner is valid.  Returns false on error (logged, the
 * transaction rolled back).
 */
static bool
run_own_transaction(const char *sql, bool top_level, Oid as_owner, const char *what)
{
	MemoryContext cxt = CurrentMemoryContext;
	bool		ok = true;

	Assert(!top_level || !OidIsValid(as_owner));
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		Oid			save_userid;
		int			save_sec_context;
		int			nest = -1;

		pgstat_report_activity(STATE_RUNNING, sql);
		if (top_level)
		{
			/* no session keeps the worker waiting longer than a naptime */
			cx_online_wait_budget_ms = (int64) cx_auto_naptime * 1000;
			run_in_portal(sql, cxt);
			cx_online_wait_budget_ms = -1;
		}
		else
		{
			PushActiveSnapshot(GetTransactionSnapshot());
			GetUserIdAndSecContext(&save_userid, &save_sec_context);
			if (OidIsValid(as_owner))
			{
				SetUserIdAndSecContext(as_owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
									   SECURITY_RESTRICTED_OPERATION);
				nest = NewGUCNestLevel();
				(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
										 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
			}
			SPI_connect();
			if (SPI_execute(sql, false, 0) < 0)
				elog(ERROR, "could not run %s", sql);
			SPI_finish();
			if (nest >= 0)
				AtEOXact_GUC(true, nest);
			if (OidIsValid(as_owner))
				SetUserIdAndSecContext(save_userid, save_sec_context);
			PopActiveSnapshot();
		}
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		ereport(LOG,
				(errmsg("compressx automatic dictionaries: could not %s after a restore", what),
				 errdetail("%s", edata->message)));
		FreeErrorData(edata);
		cx_online_wait_budget_ms = -1;
		ok = false;
	}
	PG_END_TRY();
	pgstat_report_activity(STATE_IDLE, NULL);
	MemoryContextSwitchTo(cxt);
	return ok;
}

/*
 * The time the current pass spent on each owner's tables (OwnerSpent, in
 * the pass's context).  Once an owner's tables took a naptime, that owner's
 * other tables are left for the next pass: the per-call wait budget alone
 * let one role with N tables whose rows it held keep the worker N naptimes
 * (more: the budget counts naps, not the waits between them) ahead of every
 * other role's restored tables (test/t/064_restore_worker_hostile.pl).
 */
typedef struct OwnerSpent
{
	Oid			owner;
	int64		spent_ms;
} OwnerSpent;

static List *owners_spent = NIL;

static OwnerSpent *
owner_spent(Oid owner, MemoryContext cxt)
{
	ListCell   *lc;
	OwnerSpent *o;
	MemoryContext old;

	foreach(lc, owners_spent)
	{
		o = lfirst(lc);
		if (o->owner == owner)
			return o;
	}
	old = MemoryContextSwitchTo(cxt);	/* not the transaction's */
	o = palloc0(sizeof(OwnerSpent));
	o->owner = owner;
	owners_spent = lappend(owners_spent, o);
	MemoryContextSwitchTo(old);
	return o;
}

/*
 * Work on the restored columns cols (all of one table): see the header.
 * Returns seconds until one waiting with pages is due, or -1.
 */
static double
one_table(List *cols, MemoryContext cxt)
{
	RestoredColumn *first = linitial(cols);
	Oid			relid = first->relid;
	HeapTuple	tup;
	Oid			owner;
	char	   *relname;
	StringInfoData reencode;
	double		wait = -1;
	bool		has_pages;
	bool		citus_managed = false;
	ListCell   *lc;
	OwnerSpent *spent;
	TimestampTz started;

	/* the table: its owner, name and whether it has pages */
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
	{
		CommitTransactionCommand();
		MemoryContextSwitchTo(cxt);
		return -1;
	}
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	spent = owner_spent(owner, cxt);
	if (spent->spent_ms >= (int64) cx_auto_naptime * 1000)
	{
		/* this owner had its share of the pass: the next pass */
		CommitTransactionCommand();
		MemoryContextSwitchTo(cxt);
		return cx_auto_naptime;
	}
	started = GetCurrentTimestamp();
	relname = MemoryContextStrdup(cxt, get_rel_name(relid));
	{
		/* a table someone holds ACCESS EXCLUSIVE on is for a later pass */
		Relation	rel = NULL;

		if (ConditionalLockRelationOid(relid, AccessShareLock))
			rel = try_relation_open(relid, NoLock);
		if (rel == NULL)
		{
			/* not waited for: the table's next write starts a worker again */
			CommitTransactionCommand();
			MemoryContextSwitchTo(cxt);
			return -1;
		}
		has_pages = RELKIND_HAS_STORAGE(rel->rd_rel->relkind) &&
			RelationGetNumberOfBlocks(rel) > 0;
		if (cx_distribution != NULL)
		{
			bool		dicts;

			citus_managed = cx_distribution->is_distributed(relid) ||
				OidIsValid(cx_distribution->shell_of(relid, false, &dicts));
		}
		relation_close(rel, AccessShareLock);
	}
	CommitTransactionCommand();
	MemoryContextSwitchTo(cxt);

	/*
	 * Citus sends a distributed table's settings and dictionaries to every
	 * node, and shards follow their table (label.c): nothing to wait for
	 */
	if (citus_managed)
	{
		run_own_transaction(psprintf("UPDATE compressx.column_settings "
									 "SET restored_dict = NULL, restored_at = NULL "
									 "WHERE relid OPERATOR(pg_catalog.=) %u::pg_catalog.oid::pg_catalog.regclass",
									 relid),
							false, InvalidOid, "leave a Citus table's column to Citus");
		return -1;
	}
	initStringInfo(&reencode);
	foreach(lc, cols)
	{
		RestoredColumn *c = lfirst(lc);
		const char *col = quote_literal_cstr(c->attname);

		if (c->dict_id == 0)
		{
			if (!has_pages)
				continue;
			if (c->age_s < cx_auto_naptime)
			{
				double		left = cx_auto_naptime - c->age_s;

				wait = wait < 0 ? left : Min(wait, left);
				continue;
			}
			if (c->auto_dict)
			{
				/* the automatic checks train one (after the restore) */
				run_own_transaction(psprintf("UPDATE compressx.column_settings "
											 "SET restored_dict = NULL, restored_at = NULL "
											 "WHERE relid OPERATOR(pg_catalog.=) %u::pg_catalog.oid::pg_catalog.regclass "
											 "AND attname OPERATOR(pg_catalog.=) %s::pg_catalog.name",
											 relid, col),
									false, InvalidOid, "hand a column to the automatic checks");
				continue;
			}
			ereport(LOG,
					(errmsg("compressx: the dump restored into table \"%s\" carried no dictionary for column \"%s\"; training one on the restored rows",
							relname, c->attname)));
			if (!run_own_transaction(psprintf("SELECT compressx.train_dictionary(%u::pg_catalog.oid::pg_catalog.regclass, %s)",
											  relid, col),
									 false, owner, "train a dictionary"))
			{
				run_own_transaction(psprintf("UPDATE compressx.column_settings SET restored_at = NULL "
											 "WHERE relid OPERATOR(pg_catalog.=) %u::pg_catalog.oid::pg_catalog.regclass "
											 "AND attname OPERATOR(pg_catalog.=) %s::pg_catalog.name",
											 relid, col),
									false, InvalidOid, "give up on a column");
				continue;
			}
		}
		appendStringInfo(&reencode, "%s%s", reencode.len ? ", " : "", col);
	}
	if (reencode.len > 0)
	{
		bool		ok;
		char	   *seen = dict_ids_now(relid, reencode.data, cxt);

		ok = run_own_transaction(psprintf("CALL compressx.recompress_online(%u::pg_catalog.oid::pg_catalog.regclass, "
										  "columns => ARRAY[%s]::pg_catalog.name[])",
										  relid, reencode.data),
								 true, InvalidOid, "re-encode restored values");
		/*
		 * Done (or given up, logged): the dictionary the label named is
		 * the column's for good; a trained one keeps waiting for it.
		 */
		/*
		 * A column whose dictionary changed meanwhile (a restore attached
		 * one during the CALL) keeps restored_at: the next pass re-encodes
		 * it again.
		 */
		run_own_transaction(psprintf("UPDATE compressx.column_settings s SET restored_at = NULL, "
									 "restored_dict = CASE WHEN d.dict_key OPERATOR(pg_catalog.=) s.restored_dict "
									 "THEN NULL ELSE s.restored_dict END "
									 "FROM compressx.dictionaries d "
									 "WHERE d.dict_id OPERATOR(pg_catalog.=) s.dict_id "
									 "AND s.relid OPERATOR(pg_catalog.=) %u::pg_catalog.oid::pg_catalog.regclass "
									 "AND s.attname OPERATOR(pg_catalog.=) ANY (ARRAY[%s]::pg_catalog.name[])%s",
									 relid, reencode.data,
									 ok && seen ? psprintf(" AND (s.attname::pg_catalog.text || ':' || s.dict_id::pg_catalog.text) "
														   "OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.text[])",
														   quote_literal_cstr(seen)) : ""),
							false, InvalidOid, "finish a restored column");
	}
	pfree(reencode.data);
	{
		long		secs;
		int			usecs;

		TimestampDifference(started, GetCurrentTimestamp(), &secs, &usecs);
		spent->spent_ms += (int64) secs * 1000 + usecs / 1000;
	}
	return wait;
}

bool
cx_restored_pass(MemoryContext cxt, double *next_s)
{
	List	   *cols = restored_columns(cxt);
	List	   *table = NIL;
	double		wait = -1;

	owners_spent = NIL;			/* the previous pass's, in cxt, is gone */

	for (int i = 0; i <= list_length(cols); i++)
	{
		RestoredColumn *c = i < list_length(cols) ? list_nth(cols, i) : NULL;

		if (table != NIL && (c == NULL || ((RestoredColumn *) linitial(table))->relid != c->relid))
		{
			double		w = one_table(table, cxt);

			if (w >= 0)
				wait = wait < 0 ? w : Min(wait, w);
			table = NIL;
			CHECK_FOR_INTERRUPTS();
			cx_autodict_leave_if_wanted();
		}
		if (c != NULL)
			table = lappend(table, c);
	}
	*next_s = wait;
	return wait >= 0;
}
