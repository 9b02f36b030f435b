/*-------------------------------------------------------------------------
 *
 * followup.c
 *	  The statements that give back the room an online rewrite leaves:
 *	  VACUUM of the table (it truncates the end the compaction emptied and
 *	  frees the old versions) and REINDEX INDEX CONCURRENTLY of each of its
 *	  indexes and of its TOAST relation's (every row rewritten or moved got
 *	  new entries, and a B-tree does not shrink; the old entries' room
 *	  comes back only by a rebuild).  Both refuse to run in a procedure or
 *	  a transaction block, so recompress_online prints them in a NOTICE at
 *	  its end and advise lists them in apply (issue 34, item 4: 66 MB ->
 *	  31 MB after the procedure and VACUUM, 24 MB after REINDEX
 *	  CONCURRENTLY, the offline rewrite 22 MB).
 *
 * Who reads it: names of the table, its schema and its indexes, as every
 * role reads them in pg_class; nothing derived from row data.  Waits for
 * no lock: pg_index is scanned and names are read from the syscache under
 * no lock on the table; the TOAST relation's size is read only when its
 * ACCESS SHARE lock is free at once (else its index is listed).  Memory:
 * the statements, in the caller's context.  Statements are
 * schema-qualified, each identifier quoted as needed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "nodes/pg_list.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "sql/followup.h"

/* the schema-qualified, quoted name of relation relid; NULL when gone */
static char *
qualified_name(Oid relid)
{
	char	   *name = get_rel_name(relid);
	char	   *nsp;

	if (name == NULL)
		return NULL;
	nsp = get_namespace_name(get_rel_namespace(relid));
	if (nsp == NULL)
		return NULL;
	return quote_qualified_identifier(nsp, name);
}

/* REINDEX INDEX CONCURRENTLY of each live index of relid, in OID order */
static void
append_reindex(Oid relid, StringInfo buf)
{
	Relation	indrel = table_open(IndexRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *oids = NIL;
	ListCell   *lc;

	ScanKeyInit(&key, Anum_pg_index_indrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(indrel, IndexIndrelidIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_index idx = (Form_pg_index) GETSTRUCT(tup);

		if (idx->indislive)
			oids = lappend_oid(oids, idx->indexrelid);
	}
	systable_endscan(scan);
	table_close(indrel, AccessShareLock);
	list_sort(oids, list_oid_cmp);
	foreach(lc, oids)
	{
		char	   *name = qualified_name(lfirst_oid(lc));

		if (name)
			appendStringInfo(buf, "\nREINDEX INDEX CONCURRENTLY %s;", name);
	}
	list_free(oids);
}

/* whether the TOAST relation toastid holds a page (true when it cannot tell) */
static bool
toast_has_data(Oid toastid)
{
	Relation	toast;
	bool		has;

	if (!ConditionalLockRelationOid(toastid, AccessShareLock))
		return true;
	toast = try_relation_open(toastid, NoLock);
	has = toast == NULL || RelationGetNumberOfBlocks(toast) > 0;
	if (toast)
		relation_close(toast, NoLock);
	UnlockRelationOid(toastid, AccessShareLock);
	return has;
}

/*
 * Append to buf (one statement a line, the first on a line of its own) the
 * statements that give back the room a rewrite of every row of relid left:
 * VACUUM of it, and with reindex, REINDEX INDEX CONCURRENTLY of each of its
 * indexes and of its TOAST relation's when that holds data.  A partitioned
 * table's indexes are partitioned ones (REINDEX recurses, from 14 on).
 * Appends nothing for a relation dropped meanwhile.
 */
void
cx_followup_statements(Oid relid, bool reindex, StringInfo buf)
{
	char	   *name = qualified_name(relid);
	HeapTuple	tup;
	Oid			toastid = InvalidOid;

	if (name == NULL)
		return;
	appendStringInfo(buf, "\nVACUUM %s;", name);
	if (!reindex)
		return;
	append_reindex(relid, buf);
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (HeapTupleIsValid(tup))
	{
		toastid = ((Form_pg_class) GETSTRUCT(tup))->reltoastrelid;
		ReleaseSysCache(tup);
	}
	if (OidIsValid(toastid) && toast_has_data(toastid))
		append_reindex(toastid, buf);
}
