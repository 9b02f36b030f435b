/*-------------------------------------------------------------------------
 *
 * relation.c
 *	  Which relations are compressx's (see relation.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/toast_compression.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/syscache.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "catalog/relation.h"
#include "storage/codec.h"

const TableAmRoutine *cx_am_routine = NULL;

Oid
cx_extension_table_oid(const char *name)
{
	Oid			nsp = get_namespace_oid("compressx", true);

	return OidIsValid(nsp) ? get_relname_relid(name, nsp) : InvalidOid;
}

/*
 * Whether the table compressx.<name> has the column, at attnum unless that
 * is InvalidAttrNumber (columns that later versions of the extension added:
 * the schema is older than the library until ALTER EXTENSION UPDATE).
 */
bool
cx_extension_table_has_column(const char *name, const char *column, AttrNumber attnum)
{
	Oid			tableoid = cx_extension_table_oid(name);
	AttrNumber	found;

	if (!OidIsValid(tableoid))
		return false;
	found = get_attnum(tableoid, column);
	return attnum == InvalidAttrNumber ? found != InvalidAttrNumber : found == attnum;
}

void
cx_prevent_if_read_only(const char *funcname, Oid relid)
{
	bool		recovery;
	char	   *relname = NULL;
	char	   *nspname = NULL;

	recovery = RecoveryInProgress();
	if (!XactReadOnly && !recovery)
		return;
	/* names from the syscache: no lock taken */
	if (OidIsValid(relid))
	{
		relname = get_rel_name(relid);
		if (relname != NULL)
			nspname = get_namespace_name(get_rel_namespace(relid));
	}
	/* as PreventCommandIfReadOnly, then PreventCommandDuringRecovery */
	if (relname != NULL && nspname != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 XactReadOnly ?
				 errmsg("cannot execute %s() in a read-only transaction", funcname) :
				 errmsg("cannot execute %s() during recovery", funcname),
				 errcontext("%s() on relation %s", funcname,
							quote_qualified_identifier(nspname, relname))));
	ereport(ERROR,
			(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
			 XactReadOnly ?
			 errmsg("cannot execute %s() in a read-only transaction", funcname) :
			 errmsg("cannot execute %s() during recovery", funcname)));
}

static Datum settings_exec(const char *sql, int nargs, Oid *types, Datum *values,
						   const char *nulls, bool as_text);

/*
 * Run SQL against the settings table as its owner: callers have checked
 * that the current user owns the table whose settings change.  Returns the
 * first column of the first row the SQL returns (an int4), or 0.
 */
int32
cx_settings_exec(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls)
{
	Datum		d = settings_exec(sql, nargs, types, values, nulls, false);

	return DatumGetInt32(d);
}

/*
 * The same, returning the first column of the first row as a text in the
 * caller's memory context, or NULL.
 */
text *
cx_settings_exec_text(const char *sql, int nargs, Oid *types, Datum *values,
					  const char *nulls)
{
	Datum		d = settings_exec(sql, nargs, types, values, nulls, true);

	return (text *) DatumGetPointer(d);
}

static Datum
settings_exec(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
			  bool as_text)
{
	Datum		result = as_text ? PointerGetDatum(NULL) : Int32GetDatum(0);
	Oid			tableoid = cx_extension_table_oid("column_settings");
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	HeapTuple	tup;
	Oid			owner;

	if (!OidIsValid(tableoid))
		elog(ERROR, "compressx.column_settings is missing");
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(tableoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", tableoid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	/* objects planted in the caller's search_path must not be picked up */
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0) < 0)
		elog(ERROR, "SPI_execute_with_args failed: %s", sql);
	if (SPI_processed > 0 && SPI_tuptable != NULL)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull && as_text)
			result = SPI_datumTransfer(d, false, -1);
		else if (!isnull)
			result = d;
	}
	SPI_finish();
	AtEOXact_GUC(true, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return result;
}

bool
cx_has_settings_rows(Oid relid)
{
	Oid			tableoid = cx_extension_table_oid("column_settings");
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	bool		found;

	if (!OidIsValid(tableoid))
		return false;
	rel = table_open(tableoid, AccessShareLock);
	/* column 1 is relid */
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	found = systable_getnext(scan) != NULL;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Run as owner from here on, as core's cluster_rel() and reindex_index() do
 * (SECURITY_RESTRICTED_OPERATION: no SET ROLE, no temporary objects, no
 * transaction control; settings changed meanwhile are rolled back at the
 * leave).
 */
void
cx_owner_scope_enter(CxOwnerScope *scope, Oid owner)
{
	Assert(!scope->active);
	GetUserIdAndSecContext(&scope->save_userid, &scope->save_sec_context);
	SetUserIdAndSecContext(owner, scope->save_sec_context | SECURITY_RESTRICTED_OPERATION);
	scope->save_nestlevel = NewGUCNestLevel();
	cx_restrict_search_path();
	scope->owner = owner;
	scope->active = true;
}

void
cx_owner_scope_leave(CxOwnerScope *scope)
{
	if (!scope->active)
		return;
	/* roll back the settings the owner's code changed, as core does */
	AtEOXact_GUC(false, scope->save_nestlevel);
	SetUserIdAndSecContext(scope->save_userid, scope->save_sec_context);
	scope->active = false;
}

/*
 * The method core knows a codec by (pg_attribute.attcompression), or
 * InvalidCompressionMethod for a codec core has no name for (zstd, none).
 */
char
cx_core_method_of_codec(int codec_id)
{
	switch (codec_id)
	{
		case CX_CODEC_PGLZ:
			return TOAST_PGLZ_COMPRESSION;
		case CX_CODEC_LZ4:
			return TOAST_LZ4_COMPRESSION;
		default:
			return InvalidCompressionMethod;
	}
}

/*
 * Set pg_attribute.attcompression of column attnum of relid to method,
 * unless it is that already; returns whether it changed.  A catalog update
 * as ALTER COLUMN .. SET COMPRESSION makes (it invalidates the relation's
 * relcache entry), but under the caller's lock: see attcompression.c for
 * which.  The caller makes it visible (CommandCounterIncrement) when it
 * reads it back in the same command.
 */
bool
cx_set_attcompression(Oid relid, AttrNumber attnum, char method)
{
	Relation	attrel;
	HeapTuple	tup;
	Form_pg_attribute att;
	bool		changed = false;

	attrel = table_open(AttributeRelationId, RowExclusiveLock);
	tup = SearchSysCacheCopyAttNum(relid, attnum);
	if (HeapTupleIsValid(tup))
	{
		att = (Form_pg_attribute) GETSTRUCT(tup);
		if (!att->attisdropped && att->attlen == -1 && att->attcompression != method)
		{
			att->attcompression = method;
			CatalogTupleUpdate(attrel, &tup->t_self, tup);
			changed = true;
		}
		heap_freetuple(tup);
	}
	table_close(attrel, RowExclusiveLock);
	return changed;
}

/*
 * pg_attribute.attstorage of column attnum of relid as codec none wants it
 * (catalog/attcompression.c): to_none, a column set to none: EXTENDED or
 * MAIN becomes EXTERNAL, core's storage for values kept whole (heap's
 * toaster compresses EXTENDED and MAIN values of a row over the toast
 * target, whatever compressx stored); otherwise (a column leaving none),
 * EXTERNAL becomes its type's storage again.  Other storages stay (PLAIN,
 * or what the user chose).  Same catalog update and lock rule as
 * cx_set_attcompression; returns whether it changed.
 */
bool
cx_set_attstorage_for_none(Oid relid, AttrNumber attnum, bool to_none)
{
	Relation	attrel;
	HeapTuple	tup;
	Form_pg_attribute att;
	bool		changed = false;

	attrel = table_open(AttributeRelationId, RowExclusiveLock);
	tup = SearchSysCacheCopyAttNum(relid, attnum);
	if (HeapTupleIsValid(tup))
	{
		char		target;

		att = (Form_pg_attribute) GETSTRUCT(tup);
		target = att->attstorage;
		if (to_none && (att->attstorage == TYPSTORAGE_EXTENDED ||
						att->attstorage == TYPSTORAGE_MAIN))
			target = TYPSTORAGE_EXTERNAL;
		else if (!to_none && att->attstorage == TYPSTORAGE_EXTERNAL)
			target = get_typstorage(att->atttypid);
		if (!att->attisdropped && att->attlen == -1 && att->attstorage != target)
		{
			att->attstorage = target;
			CatalogTupleUpdate(attrel, &tup->t_self, tup);
			changed = true;
		}
		heap_freetuple(tup);
	}
	table_close(attrel, RowExclusiveLock);
	return changed;
}
