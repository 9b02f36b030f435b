/*-------------------------------------------------------------------------
 *
 * generation.c
 *	  Which columns' settings a rewrite has still to apply.
 *
 * A stored value records its codec (and, in compressx's own format, its
 * dictionary) but not its level: after set_column_codec(.., 'zstd', 19) on
 * a column of zstd level 3 values, no value looks out of date.  So every
 * change of a column's codec, level or dictionary takes a new generation,
 * a number from compressx.settings_generation_seq (the trigger
 * compressx.settings_generation: whatever path changes the setting,
 * set_column_codec, a dictionary attached or replaced by hand or
 * automatically, a restored label), and every rewrite that covered all the
 * values of a column records in compressx.settings_applied the generation
 * it applied:
 *	  - recompress_table, at the end of a leaf's rewrite (or when no value
 *		needed one), under ACCESS EXCLUSIVE;
 *	  - recompress_online, when a table's passes complete, with the
 *		generation each column had when the run began: a setting changed
 *		meanwhile has another generation, and its column stays pending;
 *	  - VACUUM FULL and CLUSTER (relation_copy_for_cluster re-encodes every
 *		row), ALTER TABLE .. SET ACCESS METHOD compressx (every row through
 *		tuple_insert; the ddl_command_end event trigger).
 * A change made while the table stores no row (new, truncated, a restore's
 * table before its data) is applied at once: there is nothing to rewrite.
 * "Stores no row" is compressx.stores_no_row(): no block, read under a
 * SHARE lock taken without waiting and kept to the end of the transaction,
 * so that no session is inserting with the old setting meanwhile (a change
 * beside a writer in progress stays pending instead).  That lock is the only
 * one the settings path takes beyond the callers' own; it never waits, and
 * it keeps writers of that table out for the rest of the transaction that
 * changes its setting (one statement, from set_column_codec).
 * A rewrite re-encodes the compressed values of a pending column even when
 * they are in the target codec already; values left uncompressed (too
 * small, or not shrinking) stay as they are.
 *
 * Generations are numbers only (nothing derived from row data); the tables
 * grant nothing to PUBLIC.  Only the settings table's owner writes them, on
 * behalf of a caller that owns the table (the rewrites check that first).
 * Both reads and writes go through SQL with search_path pinned
 * (cx_settings_exec), take no lock on the user's table, and wait on no row
 * lock another role's transaction holds: settings_applied rows of a table
 * are written only by rewrites of it, which exclude each other, and by the
 * trigger while the table is empty.  Memory: one entry per pending column.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "catalog/generation.h"
#include "catalog/relation.h"

/* Whether the extension's schema has the tables (0.5.0). */
static bool
generations_available(void)
{
	return OidIsValid(cx_extension_table_oid("settings_applied")) &&
		cx_extension_table_has_column("column_settings", "generation", InvalidAttrNumber);
}

CxPendingSettings *
cx_pending_settings(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	text	   *list;
	char	   *s;
	char	   *item;
	char	   *save;
	CxPendingSettings *p;
	int			max = 8;

	if (!generations_available())
		return NULL;
	list = cx_settings_exec_text("SELECT string_agg(s.attnum::text || ':' || s.generation::text, ',' "
								 "ORDER BY s.attnum) "
								 "FROM compressx.column_settings s "
								 "LEFT JOIN compressx.settings_applied a "
								 "ON a.relid = s.relid::oid AND a.attnum = s.attnum "
								 "WHERE s.relid::oid = $1 "
								 "AND s.generation > COALESCE(a.generation, 0)",
								 1, types, values, NULL);
	if (list == NULL)
		return NULL;
	p = palloc0(sizeof(CxPendingSettings));
	p->attnum = palloc(sizeof(AttrNumber) * max);
	p->generation = palloc(sizeof(int64) * max);
	s = text_to_cstring(list);
	for (item = strtok_r(s, ",", &save); item; item = strtok_r(NULL, ",", &save))
	{
		char	   *colon = strchr(item, ':');

		if (colon == NULL)
			continue;
		if (p->n == max)
		{
			max *= 2;
			p->attnum = repalloc(p->attnum, sizeof(AttrNumber) * max);
			p->generation = repalloc(p->generation, sizeof(int64) * max);
		}
		p->attnum[p->n] = (AttrNumber) atoi(item);
		p->generation[p->n] = strtoi64(colon + 1, NULL, 10);
		p->n++;
	}
	if (p->n == 0)
		return NULL;
	return p;
}

bool
cx_setting_pending(const CxPendingSettings *pending, AttrNumber attnum)
{
	if (pending == NULL)
		return false;
	for (int i = 0; i < pending->n; i++)
		if (pending->attnum[i] == attnum)
			return true;
	return false;
}

void
cx_mark_settings_applied(Oid relid, const CxPendingSettings *pending, const Bitmapset *only)
{
	Oid			types[2] = {OIDOID, TEXTOID};
	Datum		values[2];
	char		nulls[2] = {' ', ' '};
	StringInfoData items;
	bool		any = false;

	if (XactReadOnly || RecoveryInProgress() || !generations_available())
		return;
	initStringInfo(&items);
	appendStringInfoChar(&items, '{');
	for (int i = 0; pending != NULL && i < pending->n; i++)
	{
		if (only != NULL && !bms_is_member(pending->attnum[i], only))
			continue;
		appendStringInfo(&items, "%s\"%d:" INT64_FORMAT "\"", any ? "," : "",
						 pending->attnum[i], pending->generation[i]);
		any = true;
	}
	appendStringInfoChar(&items, '}');
	if (pending != NULL && !any)
		return;
	values[0] = ObjectIdGetDatum(relid);
	values[1] = CStringGetTextDatum(items.data);
	nulls[1] = pending == NULL ? 'n' : ' ';
	cx_settings_exec("INSERT INTO compressx.settings_applied AS a (relid, attnum, generation) "
					 "SELECT s.relid::oid, s.attnum, s.generation "
					 "FROM compressx.column_settings s "
					 "WHERE s.relid::oid = $1 AND s.generation > 0 "
					 "AND ($2::text IS NULL OR "
					 "     (s.attnum::text || ':' || s.generation::text) = ANY ($2::text[])) "
					 "ON CONFLICT (relid, attnum) DO UPDATE "
					 "SET generation = greatest(a.generation, EXCLUDED.generation) "
					 "WHERE a.generation < EXCLUDED.generation",
					 2, types, values, nulls);
}

/*
 * The NOTICE goes to the session that moved the table, which owns it (both
 * moves check that first); it names the table, its columns and their
 * codecs, as column_codecs shows them to whoever may read the table, and
 * nothing derived from row data.  It reads the settings rows through SQL
 * (no lock on the user's table beyond the move's own).
 */
void
cx_notice_settings_left(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	text	   *list;
	char	   *relname = get_rel_name(relid);
	char	   *nspname;
	char	   *qualified;

	if (relname == NULL || !OidIsValid(cx_extension_table_oid("column_settings")))
		return;
	list = cx_settings_exec_text("SELECT string_agg(quote_ident(s.attname::text) || ' (' || s.codec || ')', "
								 "', ' ORDER BY s.attnum) "
								 "FROM compressx.column_settings s WHERE s.relid::oid = $1",
								 1, types, values, NULL);
	if (list == NULL)
		return;
	nspname = get_namespace_name(get_rel_namespace(relid));
	qualified = quote_qualified_identifier(nspname, relname);
	ereport(NOTICE,
			(errmsg("table \"%s\" keeps compressx settings for columns %s",
					relname, text_to_cstring(list)),
			 errdetail("Heap does not use them: they are pending, and apply again if the table moves back to the compressx access method."),
			 errhint("To drop them: SELECT compressx.reset_column_codec(%s);",
					 quote_literal_cstr(qualified))));
}

PG_FUNCTION_INFO_V1(compressx_stores_no_row);

/*
 * compressx.stores_no_row(relid oid) RETURNS bool: whether relid stores no
 * row a rewrite would have to re-encode, for the trigger
 * compressx.settings_generation.  True for a table without storage (a
 * partitioned parent), and for a table without a block whose SHARE lock
 * this transaction got without waiting: no writer is in progress, and none
 * starts before this transaction ends (the lock is kept then).  False when
 * the lock is taken by a writer (the setting change then stays pending,
 * the safe side), when the table has a block, or when it is gone.  Not
 * granted to PUBLIC (any table's SHARE lock); the trigger runs as the
 * settings' owner.
 */
Datum
compressx_stores_no_row(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char		relkind = get_rel_relkind(relid);
	Relation	rel;
	bool		empty;

	if (relkind == '\0')
		PG_RETURN_BOOL(false);
	if (!RELKIND_HAS_STORAGE(relkind))
		PG_RETURN_BOOL(true);

	/*
	 * A table with a block: a rewrite applies the setting; no lock beyond
	 * ACCESS SHARE (as pg_relation_size() takes), so that writers of a table
	 * with rows never wait for a setting change.
	 */
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		PG_RETURN_BOOL(false);
	empty = RelationGetNumberOfBlocks(rel) == 0;
	relation_close(rel, AccessShareLock);
	if (!empty)
		PG_RETURN_BOOL(false);

	/*
	 * Empty: no writer may be in progress (one that extended the table, or
	 * is about to store with the old setting), and none may start before
	 * the change commits.  Once the lock is ours, a writer that extended
	 * the table has committed, so the size read again is final.
	 */
	if (!ConditionalLockRelationOid(relid, ShareLock))
		PG_RETURN_BOOL(false);
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
	{
		UnlockRelationOid(relid, ShareLock);
		PG_RETURN_BOOL(false);
	}
	empty = RelationGetNumberOfBlocks(rel) == 0;
	relation_close(rel, NoLock);
	if (!empty)
		UnlockRelationOid(relid, ShareLock);
	PG_RETURN_BOOL(empty);
}
