/*-------------------------------------------------------------------------
 *
 * followup.c
 *	  The statements that give back the room an online rewrite leaves:
 *	  VACUUM of the table (it frees the old versions and truncates the end
 *	  the compaction emptied) and REINDEX INDEX CONCURRENTLY of each of its
 *	  indexes (every row rewritten or moved got new entries, and a B-tree
 *	  gives the room of the replaced ones back only when rebuilt).  VACUUM
 *	  and REINDEX CONCURRENTLY refuse to run in a procedure or a transaction
 *	  block, so recompress_online prints them in a NOTICE at its end and
 *	  advise lists them in apply (issue 34, item 4: 66 MB -> 31 MB after
 *	  the procedure and VACUUM, 24 MB after REINDEX CONCURRENTLY, the
 *	  offline rewrite 22 MB).
 *
 * Not an invalid index (a failed CREATE INDEX CONCURRENTLY: REINDEX
 * CONCURRENTLY fails on it again and leaves one more invalid index behind)
 * nor an exclusion constraint's (CONCURRENTLY refuses it): REINDEX TABLE
 * CONCURRENTLY skips both too, so every statement listed runs as printed.
 *
 * Not the TOAST relation's index: its name holds an OID, its keys are
 * chunk ids that only grow (new values' entries go to its right end, and
 * VACUUM recycles the leaf pages the old values emptied), and it takes
 * about 1% of the TOAST relation.
 *
 * Who reads it: names of the table, its schema and its indexes, as every
 * role reads them in pg_class; nothing derived from row data.  Waits for
 * no lock: pg_index is scanned and names are read from the syscache under
 * no lock on the table.  Memory: the statements, in the caller's context.
 * Statements are schema-qualified, each identifier quoted as needed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/genam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_index.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

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

/*
 * REINDEX INDEX CONCURRENTLY of each valid index of relid that is no
 * exclusion constraint's, in OID order
 */
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

		/*
		 * As REINDEX TABLE CONCURRENTLY skips them: an invalid index (a
		 * failed CREATE INDEX CONCURRENTLY; REINDEX CONCURRENTLY would fail
		 * again and leave one more invalid index, "_ccnew") and an
		 * exclusion constraint's (CONCURRENTLY refuses it).
		 */
		if (idx->indislive && idx->indisvalid && !idx->indisexclusion)
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

/*
 * Append to buf (one statement a line, the first on a line of its own) the
 * statements that give back the room a rewrite of every row of relid left:
 * VACUUM of it, and with reindex, REINDEX INDEX CONCURRENTLY of each of its
 * indexes.  A partitioned
 * table's indexes are partitioned ones (REINDEX recurses, from 14 on).
 * Appends nothing for a relation dropped meanwhile.
 */
void
cx_followup_statements(Oid relid, bool reindex, StringInfo buf)
{
	char	   *name = qualified_name(relid);

	if (name == NULL)
		return;
	appendStringInfo(buf, "\nVACUUM %s;", name);
	if (!reindex)
		return;
	append_reindex(relid, buf);
}
