/*-------------------------------------------------------------------------
 *
 * citus.c
 *	  compressx tables distributed with Citus (see citus.h).
 *
 * Citus never moves compressx's stored bytes between nodes: every shard
 * creation, move, copy and split scans the source (the access method
 * decodes) and inserts into the target (it encodes again).  So settings and
 * dictionaries are per node: each node keeps rows for its own copy of the
 * distributed table (the "shell", same schema and name), a shard follows
 * the rows of its shell, and dictionary ids are local to the node.  The
 * coordinator sends a table's rows to the other nodes whenever they change
 * (compressx.citus_apply), in the caller's transaction.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"


#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_namespace.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "citus/citus.h"
#include "catalog/relation.h"
#include "catalog/settings.h"

PG_FUNCTION_INFO_V1(compressx_citus_shell);

bool		cx_citus_in_fan_out = false;

static text *table_state(Oid relid);
static char *quoted_name(Oid relid);
static Oid	rel_owner(Oid relid);
static void citus_xact_callback(XactEvent event, void *arg);
static void citus_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								   SubTransactionId parentSubid, void *arg);
static void register_callbacks(void);

/* compressx.citus_send_in_transaction */
static bool send_in_transaction = true;

/* see citus_xact_callback */
#define CITUS_PENDING_MAX 64
static bool saw_invalidation = false;
static bool xact_callback_registered = false;

/* pg_catalog.<name>, a table of Citus's, or InvalidOid without Citus. */
static Oid
citus_catalog(const char *name)
{
	if (!OidIsValid(get_extension_oid("citus", true)))
		return InvalidOid;
	return get_relname_relid(name, PG_CATALOG_NAMESPACE);
}

/*
 * The first row of Citus catalog table "catalog" whose column keycol equals
 * key (compared with procedure eqproc): its column outcol, *found set, and
 * *is_new (if not NULL) whether the current transaction wrote the row.
 */
static Datum
citus_lookup(const char *catalog, const char *keycol, RegProcedure eqproc, Datum key,
			 const char *outcol, bool *found, bool *is_new)
{
	Oid			catoid = citus_catalog(catalog);
	Relation	crel;
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tup;
	Datum		result = (Datum) 0;
	AttrNumber	keyatt;
	AttrNumber	outatt;

	*found = false;
	if (is_new)
		*is_new = false;
	if (!OidIsValid(catoid))
		return result;
	keyatt = get_attnum(catoid, keycol);
	outatt = get_attnum(catoid, outcol);
	if (keyatt == InvalidAttrNumber || outatt == InvalidAttrNumber)
		return result;
	crel = table_open(catoid, AccessShareLock);
	ScanKeyInit(&skey, keyatt, BTEqualStrategyNumber, eqproc, key);
	scan = systable_beginscan(crel, InvalidOid, false, NULL, 1, &skey);
	if ((tup = systable_getnext(scan)) != NULL)
	{
		bool		isnull;

		result = heap_getattr(tup, outatt, RelationGetDescr(crel), &isnull);
		*found = !isnull;
		if (is_new)
			*is_new = TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data));
	}
	systable_endscan(scan);
	table_close(crel, AccessShareLock);
	return result;
}

bool
cx_citus_is_table(Oid relid)
{
	bool		found;

	(void) citus_lookup("pg_dist_partition", "logicalrelid", F_OIDEQ,
						ObjectIdGetDatum(relid), "logicalrelid", &found, NULL);
	return found;
}

/*
 * Whether relid became a Citus table in the current transaction: its
 * pg_dist_partition row was inserted by it.
 */
static bool
citus_table_is_new(Oid relid)
{
	bool		found;
	bool		is_new;

	(void) citus_lookup("pg_dist_partition", "logicalrelid", F_OIDEQ,
						ObjectIdGetDatum(relid), "logicalrelid", &found, &is_new);
	return found && is_new;
}

static const CxDistributionHooks citus_hooks = {
	.shell_of = cx_citus_shell_of,
	.is_distributed = cx_citus_is_table,
	.push = cx_citus_push,
	.settings_changed = cx_citus_settings_changed,
	.invalidated = cx_citus_note_invalidation,
	.renamed = cx_citus_renamed,
	.dropped = cx_citus_stash_dropped,
};

void
cx_citus_init(void)
{
	DefineCustomBoolVariable("compressx.citus_send_in_transaction",
							 "Sends the compression settings of Citus tables to the other nodes inside the coordinator's transaction, where Citus allows it.",
							 "Off: they are sent when the transaction commits, each node in a transaction of its own, as with Citus builds for PostgreSQL 16 and later (for tests).",
							 &send_in_transaction, true,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	cx_distribution = &citus_hooks;
}

/*
 * The md5 of the settings rows of relid on this node and their
 * dictionaries' contents (not their ids), columns by name: equal on two
 * nodes when they encode relid's columns alike.
 */
text *
cx_citus_settings_digest(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1];

	values[0] = ObjectIdGetDatum(relid);
	return cx_settings_exec_text(
		"SELECT pg_catalog.md5(COALESCE(pg_catalog.string_agg(pg_catalog.jsonb_build_array("
		"s.attname, s.codec, s.level, s.min_size, pg_catalog.to_jsonb(s)->'inline_max', "
		"pg_catalog.md5(d.dict))::text, ';' ORDER BY s.attname), '')) "
		"FROM compressx.column_settings s LEFT JOIN compressx.dictionaries d "
		"ON d.dict_id = s.dict_id AND d.relid = s.relid WHERE s.relid = $1",
		1, types, values, NULL);
}

/* Whether this node is the coordinator (Citus group 0). */
bool
cx_citus_on_coordinator(void)
{
	Oid			catoid = citus_catalog("pg_dist_local_group");
	Relation	crel;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		result = false;

	if (!OidIsValid(catoid))
		return false;
	crel = table_open(catoid, AccessShareLock);
	scan = systable_beginscan(crel, InvalidOid, false, NULL, 0, NULL);
	if ((tup = systable_getnext(scan)) != NULL)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, get_attnum(catoid, "groupid"),
									 RelationGetDescr(crel), &isnull);

		result = !isnull && DatumGetInt32(d) == 0;
	}
	systable_endscan(scan);
	table_close(crel, AccessShareLock);
	return result;
}

bool
cx_citus_fan_out(Oid relid)
{
	return !cx_citus_in_fan_out && cx_citus_is_table(relid) && cx_citus_on_coordinator();
}

Oid
cx_citus_shell_of(Oid relid, bool new_relation, bool *with_dictionaries)
{
	HeapTuple	tup;
	Form_pg_class form;
	const char *name;
	const char *us;
	char	   *end;
	int64		shardid;
	Oid			shell = InvalidOid;
	Oid			nsp;
	Oid			owner;
	bool		found;

	*with_dictionaries = false;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	form = (Form_pg_class) GETSTRUCT(tup);
	name = pstrdup(NameStr(form->relname));
	nsp = form->relnamespace;
	owner = form->relowner;
	ReleaseSysCache(tup);

	/* <name>_<digits> */
	us = strrchr(name, '_');
	if (us == NULL || us == name || !isdigit((unsigned char) us[1]))
		return InvalidOid;
	errno = 0;
	shardid = strtoi64(us + 1, &end, 10);
	if (errno != 0 || *end != '\0' || shardid <= 0 ||
		!OidIsValid(citus_catalog("pg_dist_shard")))
		return InvalidOid;

	shell = DatumGetObjectId(citus_lookup("pg_dist_shard", "shardid", F_INT8EQ,
										  Int64GetDatum(shardid), "logicalrelid",
										  &found, NULL));
	if (found)
		*with_dictionaries = true;
	else if (new_relation)
	{
		/*
		 * A split child, filled before its metadata is committed, in the
		 * transaction that created it.  It takes the codecs of its table,
		 * not its dictionaries: nothing proves it is a shard, and a value
		 * must never depend on the dictionary of a table that can be
		 * dropped without it (Citus's undistribute_table makes such a
		 * table, named <table>_<hash>, and then drops <table>).
		 */
		shell = get_relname_relid(pnstrdup(name, us - name), nsp);
		if (!OidIsValid(shell) || !cx_citus_is_table(shell))
			return InvalidOid;
	}
	else
		return InvalidOid;
	if (!OidIsValid(shell) || shell == relid)
		return InvalidOid;
	/*
	 * Same schema, same owner, and the shard's name is the table's name and
	 * the shard id (Citus's names for long table names, cut and hashed, are
	 * not recognized): no role borrows another's settings, and no table of
	 * the owner's is taken for a shard by chance.
	 */
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(shell));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	form = (Form_pg_class) GETSTRUCT(tup);
	if (form->relnamespace != nsp || form->relowner != owner ||
		strlen(NameStr(form->relname)) != (size_t) (us - name) ||
		strncmp(NameStr(form->relname), name, us - name) != 0)
		shell = InvalidOid;
	ReleaseSysCache(tup);
	if (!OidIsValid(shell))
		*with_dictionaries = false;
	return shell;
}

void
cx_citus_settings_changed(Oid relid)
{
	/*
	 * The shards of relid on this node cache settings resolved through it.
	 * Settings change rarely: invalidate every relation rather than find
	 * the shards (split children have no metadata yet).
	 */
	if (cx_citus_is_table(relid))
		CacheInvalidateRelcacheAll();
}

/* The installed version of compressx in this database. */
char *
cx_citus_installed_version(void)
{
	text	   *v = cx_settings_exec_text("SELECT extversion FROM pg_catalog.pg_extension "
										  "WHERE extname = 'compressx'", 0, NULL, NULL, NULL);

	return v ? text_to_cstring(v) : pstrdup("");
}

/* The command that makes the settings of relid on another node these. */
static char *
apply_command(Oid relid)
{
	return psprintf("SELECT compressx.citus_apply(%s::pg_catalog.regclass, %s::pg_catalog.jsonb, %s)",
					quote_literal_cstr(quote_qualified_identifier(
						get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid))),
					quote_literal_cstr(text_to_cstring(table_state(relid))),
					quote_literal_cstr(cx_citus_installed_version()));
}

/*
 * Citus's SendCommandToWorkersWithMetadata, or NULL.  Citus built for
 * PostgreSQL 16 and later hides its internal symbols (PGXS compiles with
 * -fvisibility=hidden), so only builds for 15 have it.
 */
static void (*
send_function(void)) (const char *)
{
	static bool looked = false;
	static void (*send) (const char *) = NULL;

	if (!send_in_transaction)
		return NULL;
	if (!looked)
	{
		send = (void (*) (const char *))
			load_external_function("$libdir/citus", "SendCommandToWorkersWithMetadata",
								   false, NULL);
		looked = true;
	}
	return send;
}

/*
 * Relations to send at commit, when Citus's function is not there, each
 * with the subtransaction that asked first: a rollback to a savepoint
 * forgets what was asked after it (citus_subxact_callback).
 */
static Oid	deferred[CITUS_PENDING_MAX];
static SubTransactionId deferred_subid[CITUS_PENDING_MAX];
static int	ndeferred = 0;

/*
 * Names of the tables whose settings went to the other nodes at commit,
 * each node in a transaction of its own (in TopTransactionContext): if this
 * transaction aborts after that, they are named in a warning.
 */
static List *pushed_outside = NIL;

static void
defer_push(Oid relid)
{
	for (int i = 0; i < ndeferred; i++)
		if (deferred[i] == relid)
			return;
	if (ndeferred >= CITUS_PENDING_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many Citus tables change their compression settings in one transaction"),
				 errhint("Change the settings of at most %d tables per transaction.", CITUS_PENDING_MAX)));
	deferred_subid[ndeferred] = GetCurrentSubTransactionId();
	deferred[ndeferred++] = relid;
}

static void
citus_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	int			kept = 0;

	if (event != SUBXACT_EVENT_COMMIT_SUB && event != SUBXACT_EVENT_ABORT_SUB)
		return;
	for (int i = 0; i < ndeferred; i++)
	{
		if (deferred_subid[i] != mySubid)
		{
			deferred_subid[kept] = deferred_subid[i];
			deferred[kept++] = deferred[i];
		}
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
		{
			deferred_subid[kept] = parentSubid;
			deferred[kept++] = deferred[i];
		}
		/* SUBXACT_EVENT_ABORT_SUB: forgotten */
	}
	ndeferred = kept;
}

static void
register_callbacks(void)
{
	if (xact_callback_registered)
		return;
	RegisterXactCallback(citus_xact_callback, NULL);
	RegisterSubXactCallback(citus_subxact_callback, NULL);
	xact_callback_registered = true;
}

/*
 * Run command on every worker, each in a transaction of its own
 * (run_command_on_workers), after checking that every worker answers, so
 * that a worker that is down changes nothing anywhere.
 */
static void
push_outside_transaction(Oid relid, const char *command)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	char		nulls[2] = {' ', ' '};
	const char *probe = "SELECT pg_catalog.string_agg(nodename || ':' || nodeport || ': ' || "
		"CASE WHEN success THEN 'compressx ' || coalesce(nullif(result, ''), 'not') || ' installed there' "
		"ELSE result END, '; ') "
		"FROM pg_catalog.run_command_on_workers($1) "
		"WHERE NOT success OR ($2 IS NOT NULL AND result IS DISTINCT FROM $2)";

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	for (int step = 0; step < 2; step++)
	{
		/* first every worker must answer, with the same compressx */
		values[0] = CStringGetTextDatum(step == 0 ?
										"SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'compressx'" :
										command);
		values[1] = CStringGetTextDatum(cx_citus_installed_version());
		nulls[1] = step == 0 ? ' ' : 'n';
		if (SPI_execute_with_args(probe, 2, types, values, nulls, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "run_command_on_workers failed");
		if (SPI_processed == 1)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
				ereport(ERROR,
						(errcode(ERRCODE_CONNECTION_FAILURE),
						 errmsg("could not send the compression settings of \"%s\" to every node",
								get_rel_name(relid)),
						 errdetail(step == 0 ? "Nothing was sent: %s" :
								   "The nodes not named have them: %s", TextDatumGetCString(d)),
						 errhint("Call SELECT compressx.citus_push(%s) when every node answers with compressx %s.",
								 quoted_name(relid), cx_citus_installed_version())));
		}
	}
	SPI_finish();
}

void
cx_citus_push(Oid relid)
{
	void		(*send) (const char *command);

	if (!cx_citus_fan_out(relid))
		return;
	send = send_function();
	if (send != NULL)
		send(apply_command(relid));
	else
	{
		/* at commit, when this transaction's changes are final */
		register_callbacks();
		defer_push(relid);
	}
}

/*
 * The settings rows of relid and their dictionaries, as jsonb text; with
 * each column's inline limit where this node's schema has it (0.4.0: read
 * through to_jsonb, which yields NULL for a column an older schema lacks).
 */
static text *
table_state(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1];

	values[0] = ObjectIdGetDatum(relid);
	return cx_settings_exec_text(
		"SELECT jsonb_build_object('columns', COALESCE(jsonb_agg(jsonb_build_object("
		"'attname', s.attname, 'codec', s.codec, 'level', s.level, "
		"'min_size', s.min_size, 'inline_max', pg_catalog.to_jsonb(s)->'inline_max', "
		"'dict', pg_catalog.encode(d.dict, 'base64'), "
		"'sample_values', d.sample_values, 'sample_bytes', d.sample_bytes) "
		"ORDER BY s.attnum), '[]'::jsonb))::text "
		"FROM compressx.column_settings s LEFT JOIN compressx.dictionaries d "
		"ON d.dict_id = s.dict_id AND d.relid = s.relid WHERE s.relid = $1",
		1, types, values, NULL);
}

/*
 * Make the settings rows of relid those of state (jsonb text, from
 * table_state on this node or another): dictionaries by content, with ids
 * of this node; columns by name.  Rows of relid's shards here are removed:
 * the shards follow relid.  The caller has checked ownership.
 */
void
cx_citus_apply_state(Oid relid, text *state)
{
	Oid			types[2] = {OIDOID, TEXTOID};
	Datum		values[2];

	values[0] = ObjectIdGetDatum(relid);
	values[1] = PointerGetDatum(state);
	if (cx_settings_exec("SELECT pg_catalog.count(*)::int4 FROM pg_catalog.jsonb_to_recordset($2::jsonb->'columns') "
						 "AS x(attname name, codec text) WHERE x.attname IS NULL OR x.codec IS NULL "
						 "OR x.codec NOT IN (SELECT c.name FROM compressx.codecs() c)",
						 2, types, values, NULL) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("compression settings of \"%s\" name an unknown codec or no column",
						get_rel_name(relid))));
	if (cx_settings_exec("SELECT pg_catalog.count(*)::int4 FROM pg_catalog.jsonb_to_recordset($2::jsonb->'columns') "
						 "AS x(dict text) WHERE pg_catalog.octet_length(pg_catalog.decode(x.dict, 'base64')) > 1048576",
						 2, types, values, NULL) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("compression settings of \"%s\" hold a dictionary larger than 1 MB",
						get_rel_name(relid))));
	/* shared: kept when relid is dropped, for the shards that use them */
	cx_settings_exec("INSERT INTO compressx.dictionaries (relid, attname, dict, sample_values, sample_bytes, shared) "
					 "SELECT DISTINCT ON (x.dict) $1::pg_catalog.oid::pg_catalog.regclass, x.attname, "
					 "pg_catalog.decode(x.dict, 'base64'), x.sample_values, x.sample_bytes, true "
					 "FROM pg_catalog.jsonb_to_recordset($2::jsonb->'columns') "
					 "AS x(attname name, dict text, sample_values int4, sample_bytes int8) "
					 "WHERE x.dict IS NOT NULL AND NOT EXISTS (SELECT FROM compressx.dictionaries d "
					 "WHERE d.relid = $1 AND d.dict = pg_catalog.decode(x.dict, 'base64'))",
					 2, types, values, NULL);
	cx_settings_exec("DELETE FROM compressx.column_settings s "
					 "WHERE s.relid = $1 OR compressx.citus_shell(s.relid) = $1",
					 2, types, values, NULL);
	cx_settings_exec("INSERT INTO compressx.column_settings "
					 "(relid, attname, attnum, codec, level, min_size, dict_id) "
					 "SELECT $1::pg_catalog.oid::pg_catalog.regclass, x.attname, 0, x.codec, x.level, "
					 "x.min_size, (SELECT pg_catalog.max(d.dict_id) FROM compressx.dictionaries d "
					 "WHERE d.relid = $1 AND d.dict = pg_catalog.decode(x.dict, 'base64')) "
					 "FROM pg_catalog.jsonb_to_recordset($2::jsonb->'columns') "
					 "AS x(attname name, codec text, level int4, min_size int4, dict text)",
					 2, types, values, NULL);

	/*
	 * Inline limits: a state carries them only from a node whose schema has
	 * them, and citus_apply accepts states of its own version only.
	 */
	if (cx_extension_table_has_column("column_settings", "inline_max", InvalidAttrNumber))
		cx_settings_exec("UPDATE compressx.column_settings s SET inline_max = x.inline_max "
						 "FROM pg_catalog.jsonb_to_recordset($2::jsonb->'columns') "
						 "AS x(attname name, inline_max int4) "
						 "WHERE s.relid = $1 AND s.attname = x.attname AND x.inline_max IS NOT NULL",
						 2, types, values, NULL);
	cx_citus_settings_changed(relid);
}

/*
 * Citus replaces a table to change its distribution or access method
 * (alter_distributed_table, undistribute_table, alter_table_set_access_method):
 * it creates a new table, copies the rows, drops the old table and renames
 * the new one to the old name, in one transaction.  The old table's
 * settings are kept here from its drop to that rename.
 */
typedef struct DroppedState
{
	Oid			nsp;
	Oid			owner;
	char	   *name;
	text	   *state;
} DroppedState;

static List *dropped = NIL;

/* Tables that took a dropped table's settings in this transaction. */
static List *restored = NIL;

void
cx_citus_stash_dropped(Oid relid)
{
	MemoryContext old;
	DroppedState *d;
	text	   *state;

	/*
	 * On the coordinator Citus tables only; on a worker, Citus removes a
	 * table's metadata before it drops the table, so every table there.
	 * Nothing while Citus itself is being dropped (its planner would meet
	 * its half-dropped catalogs in the query below).
	 */
	if (!OidIsValid(citus_catalog("pg_dist_local_group")) ||
		!OidIsValid(citus_catalog("pg_dist_partition")) ||
		(cx_citus_on_coordinator() && !cx_citus_is_table(relid)) ||
		!cx_has_settings_rows(relid))
		return;
	state = table_state(relid);
	register_callbacks();
	old = MemoryContextSwitchTo(TopTransactionContext);
	d = palloc(sizeof(DroppedState));
	d->nsp = get_rel_namespace(relid);
	d->owner = rel_owner(relid);
	d->name = pstrdup(get_rel_name(relid));
	d->state = (text *) PG_DETOAST_DATUM_COPY(PointerGetDatum(state));
	dropped = lappend(dropped, d);
	MemoryContextSwitchTo(old);
}

void
cx_citus_renamed(Oid relid)
{
	ListCell   *lc;
	Oid			nsp = get_rel_namespace(relid);
	char	   *name = get_rel_name(relid);
	Oid			types[1] = {OIDOID};
	Datum		values[1];
	MemoryContext old;

	if (dropped == NIL || name == NULL)
		return;
	foreach(lc, dropped)
	{
		DroppedState *d = lfirst(lc);

		if (d->nsp != nsp || strcmp(d->name, name) != 0 ||
			d->owner != rel_owner(relid))
			continue;
		dropped = foreach_delete_current(dropped, lc);
		values[0] = ObjectIdGetDatum(relid);
		if (cx_settings_exec("SELECT 1 FROM compressx.column_settings WHERE relid = $1 LIMIT 1",
							 1, types, values, NULL) == 1)
			return;
		cx_citus_apply_state(relid, d->state);
		old = MemoryContextSwitchTo(TopTransactionContext);
		restored = lappend_oid(restored, relid);
		MemoryContextSwitchTo(old);
		return;
	}
}

/*
 * Just before a transaction that invalidated a relcache entry commits
 * (Citus does when it writes a table's metadata), the tables that became
 * Citus tables in it and have compressx settings (create_distributed_table,
 * create_reference_table of a table that had them) get their settings sent
 * to the other nodes.
 */

/* The owner of relid, or InvalidOid. */
static Oid
rel_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/* quote_literal of the qualified name of relid, for hints */
static char *
quoted_name(Oid relid)
{
	return quote_literal_cstr(quote_qualified_identifier(
		get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid)));
}

/*
 * The Citus tables that became Citus tables in this transaction (their
 * pg_dist_partition rows are its own) and have compressx settings.
 */
static List *
tables_distributed_now(void)
{
	Oid			catoid = citus_catalog("pg_dist_partition");
	Relation	crel;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *result = NIL;
	AttrNumber	att;

	if (!OidIsValid(catoid))
		return NIL;
	att = get_attnum(catoid, "logicalrelid");
	crel = table_open(catoid, AccessShareLock);
	scan = systable_beginscan(crel, InvalidOid, false, NULL, 0, NULL);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		bool		isnull;
		Datum		d;

		if (!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data)))
			continue;
		d = heap_getattr(tup, att, RelationGetDescr(crel), &isnull);
		if (!isnull)
			result = lappend_oid(result, DatumGetObjectId(d));
	}
	systable_endscan(scan);
	table_close(crel, AccessShareLock);
	return result;
}

static void
citus_xact_callback(XactEvent event, void *arg)
{
	bool		look = saw_invalidation;
	ListCell   *lc;

	if (event == XACT_EVENT_PRE_PREPARE && ndeferred > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot PREPARE a transaction that changed the compression settings of a Citus table"),
				 errdetail("This build of Citus can send them to the other nodes only when the transaction commits.")));
	if (event != XACT_EVENT_PRE_COMMIT)
	{
		if (event == XACT_EVENT_ABORT && pushed_outside != NIL)
		{
			/*
			 * Something failed after the settings were sent: the other
			 * nodes committed them, this node did not.
			 */
			StringInfoData names;

			initStringInfo(&names);
			foreach(lc, pushed_outside)
				appendStringInfo(&names, "%s%s", names.len > 0 ? ", " : "",
								 (char *) lfirst(lc));
			ereport(WARNING,
					(errcode(ERRCODE_TRANSACTION_RESOLUTION_UNKNOWN),
					 errmsg("the other nodes kept compression settings that this transaction did not commit"),
					 errdetail("They were sent at commit, each node in a transaction of its own, for: %s.",
							   names.data),
					 errhint("Call SELECT * FROM compressx.citus_settings_repair() to send the coordinator's settings again.")));
		}
		if (event == XACT_EVENT_ABORT || event == XACT_EVENT_COMMIT ||
			event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PREPARE)
		{
			saw_invalidation = false;
			ndeferred = 0;
			dropped = NIL;		/* in TopTransactionContext */
			restored = NIL;
			pushed_outside = NIL;
		}
		return;
	}
	if (!look && ndeferred == 0)
		return;
	saw_invalidation = false;
	if (!OidIsValid(cx_extension_table_oid("column_settings")) ||
		!OidIsValid(citus_catalog("pg_dist_partition")) || !cx_citus_on_coordinator())
	{
		ndeferred = 0;
		return;
	}
	/* SPI and Citus need a snapshot; at commit there is none */
	PushActiveSnapshot(GetTransactionSnapshot());
	foreach(lc, look ? tables_distributed_now() : NIL)
	{
		Oid			relid = lfirst_oid(lc);

		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)) ||
			!cx_has_settings_rows(relid))
			continue;
		if (send_function() != NULL)
			cx_citus_push(relid);
		else if (!list_member_oid(restored, relid))
			defer_push(relid);
	}
	/*
	 * Without Citus's function: each worker in a transaction of its own.
	 * Such a transaction does not see tables this one made or changed on
	 * the workers, and waits for its locks there: those tables are left to
	 * citus_push after this transaction.
	 */
	for (int i = 0; i < ndeferred; i++)
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(deferred[i]));
		bool		changed_now;

		if (!HeapTupleIsValid(tup))
			continue;
		changed_now = TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data));
		ReleaseSysCache(tup);
		if (changed_now || citus_table_is_new(deferred[i]))
			ereport(WARNING,
					(errmsg("the compression settings of \"%s\" were not sent to the other nodes",
							get_rel_name(deferred[i])),
					 errdetail("This build of Citus sends them outside the transaction, which created or altered the table."),
					 errhint("Call SELECT compressx.citus_push(%s) after this transaction.",
							 quoted_name(deferred[i]))));
		else
		{
			MemoryContext old;

			push_outside_transaction(deferred[i], apply_command(deferred[i]));
			old = MemoryContextSwitchTo(TopTransactionContext);
			pushed_outside = lappend(pushed_outside,
									 pstrdup(quote_qualified_identifier(get_namespace_name(get_rel_namespace(deferred[i])),
																		get_rel_name(deferred[i]))));
			MemoryContextSwitchTo(old);
		}
	}
	ndeferred = 0;
	PopActiveSnapshot();
}

void
cx_citus_note_invalidation(Oid relid)
{
	/*
	 * Registered on first use, so after Citus's own callback (Citus is
	 * preloaded): callbacks run newest first, so this one sends its
	 * commands before Citus prepares the remote transactions.
	 */
	register_callbacks();
	if (IsTransactionState() && relid >= FirstNormalObjectId)
		saw_invalidation = true;
}

/*
 * compressx.citus_shell(rel regclass) RETURNS regclass
 *	  The Citus table whose settings shard rel follows on this node, or NULL.
 */
Datum
compressx_citus_shell(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel = RelationIdGetRelation(relid);
	bool		is_new = false;
	bool		with_dictionaries;
	Oid			shell;

	if (RelationIsValid(rel))
	{
		is_new = rel->rd_createSubid != InvalidSubTransactionId;
		RelationClose(rel);
	}
	shell = cx_citus_shell_of(relid, is_new, &with_dictionaries);

	if (!OidIsValid(shell))
		PG_RETURN_NULL();
	PG_RETURN_OID(shell);
}
