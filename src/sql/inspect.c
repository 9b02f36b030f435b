/*-------------------------------------------------------------------------
 *
 * inspect.c
 *	  Inspection of stored values, and compressx.stored_summary().
 *
 * Reads each varlena value as it lies in the heap tuple: inline or out of
 * line, compression method, raw and stored size.  Nothing is decompressed
 * and no TOAST data is read: the external pointer carries all of it.
 * stored_bytes matches pg_column_size() and the method matches
 * pg_column_compression() on heap tables.
 *
 * Locking: AccessShareLock on the relation (and on every partition of a
 * partitioned table) for the duration of the scan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "access/detoast.h"
#include "access/heapam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/toast_compression.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "common/hashfn.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rls.h"
#include "utils/sampling.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "catalog/dict_auto.h"
#include "catalog/relation.h"
#include "compat.h"
#include "storage/format.h"
#include "sql/inspect.h"
#include "citus/fanout.h"

PG_FUNCTION_INFO_V1(compressx_stored_summary);
PG_FUNCTION_INFO_V1(compressx_ratio_sample_rows);

/* GUCs */
static int	cx_ratio_sample_rows = 3000;
static int	cx_sample_memory_kb = 256 * 1024;

void
cx_inspect_init(void)
{
	DefineCustomIntVariable("compressx.ratio_sample_rows",
							"Rows sampled per table by the compressx ratio views.",
							"The views read blocks holding about this many rows of each table; "
							"compressx.column_stats() with sample_rows NULL reads every row.",
							&cx_ratio_sample_rows,
							3000, 1, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("compressx.sample_memory",
							"Memory a sample of rows may take in compressx.advise() and compressx.train_dictionary().",
							"A sample that needs more stops with an error: ask for fewer rows or raise this setting.",
							&cx_sample_memory_kb,
							256 * 1024, 1024, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
}

/*
 * compressx.ratio_sample_rows(): the GUC's value, callable from the views
 * before the library has been loaded in this backend.
 */
Datum
compressx_ratio_sample_rows(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(cx_ratio_sample_rows);
}

static const char *const stored_method_names[CX_STORED_METHOD_COUNT] = {
	"none", "pglz", "lz4", "zstd", "other", "lz4+dict"
};

const char *
cx_stored_method_name(CxStoredMethod method)
{
	return stored_method_names[method];
}

static CxStoredMethod
method_from_core_id(ToastCompressionId id)
{
	switch (id)
	{
		case TOAST_PGLZ_COMPRESSION_ID:
			return CX_STORED_PGLZ;
		case TOAST_LZ4_COMPRESSION_ID:
			return CX_STORED_LZ4;
		default:
			return CX_STORED_OTHER;
	}
}

void
cx_inspect_datum(Datum value, CxStoredValue *out)
{
	struct varlena *attr = (struct varlena *) DatumGetPointer(value);

	out->external = false;
	out->method = CX_STORED_NONE;

	if (VARATT_IS_EXTERNAL_ONDISK(attr))
	{
		struct varatt_external toast_pointer;

		VARATT_EXTERNAL_GET_POINTER(toast_pointer, attr);
		out->external = true;
		out->stored_bytes = VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer);
		out->raw_bytes = toast_pointer.va_rawsize - VARHDRSZ;
		if (VARATT_EXTERNAL_IS_COMPRESSED(toast_pointer))
			out->method =
				method_from_core_id(VARATT_EXTERNAL_GET_COMPRESS_METHOD(toast_pointer));
	}
	else if (VARATT_IS_EXTERNAL(attr))
	{
		/* indirect or expanded: never stored in a table */
		elog(ERROR, "unexpected in-memory varlena in a stored tuple");
	}
	else if (VARATT_IS_SHORT(attr))
	{
		out->stored_bytes = VARSIZE_SHORT(attr);
		out->raw_bytes = VARSIZE_SHORT(attr) - VARHDRSZ_SHORT;
	}
	else if (cx_is_own_datum(attr))
	{
		CxOwnInfo	info;

		cx_own_info(attr, &info);
		out->external = info.external;
		out->stored_bytes = info.stored_bytes;
		out->raw_bytes = info.raw_bytes;
		out->method = info.codec_id == CX_CODEC_ZSTD ? CX_STORED_ZSTD :
			info.codec_id == CX_CODEC_LZ4 ? CX_STORED_LZ4_DICT : CX_STORED_OTHER;
	}
	else if (VARATT_IS_COMPRESSED(attr))
	{
		out->stored_bytes = VARSIZE(attr);
		out->raw_bytes = VARDATA_COMPRESSED_GET_EXTSIZE(attr);
		out->method = method_from_core_id(VARDATA_COMPRESSED_GET_COMPRESS_METHOD(attr));
	}
	else
	{
		out->stored_bytes = VARSIZE(attr);
		out->raw_bytes = VARSIZE(attr) - VARHDRSZ;
	}
}

void
cx_check_table_relkind(Relation rel)
{
	char		relkind = rel->rd_rel->relkind;

	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW &&
		relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table or materialized view",
						RelationGetRelationName(rel))));
	if (RELKIND_HAS_STORAGE(relkind) && rel->rd_tableam != GetHeapamTableAmRoutine() &&
		!cx_is_compressx_relation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" uses an access method compressx cannot read",
						RelationGetRelationName(rel)),
				 errdetail("compressx reads heap and compressx tables only.")));
}

static BlockNumber sample_block_count(Relation rel, BlockNumber nblocks, int64 sample_rows,
									  BufferAccessStrategy strategy);

typedef struct SampleState
{
	List	   *tuples;
	int64		limit;
	int64		bytes;			/* copied so far */
	int64		max_bytes;		/* compressx.sample_memory */
} SampleState;

/* (runs under a buffer lock: never errors, stops copying instead) */
/*
 * visit_page: call visitor for each tuple of block blkno of rel that
 * snapshot sees, the page share-locked meanwhile (the visitor copies what it
 * keeps); interrupts and the automatic-dictionary worker's leave request are
 * served first.
 */
static void
visit_page(Relation rel, BlockNumber blkno, BufferAccessStrategy strategy,
		   Snapshot snapshot, CxTupleVisitor visitor, void *arg)
{
	Buffer		buf;
	Page		page;
	OffsetNumber maxoff;

	CHECK_FOR_INTERRUPTS();
	cx_autodict_leave_if_wanted();
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	maxoff = PageIsNew(page) ? InvalidOffsetNumber : PageGetMaxOffsetNumber(page);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		itemid = PageGetItemId(page, off);
		HeapTupleData tuple;

		if (!ItemIdIsNormal(itemid))
			continue;
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
		tuple.t_len = ItemIdGetLength(itemid);
		tuple.t_tableOid = RelationGetRelid(rel);
		ItemPointerSet(&tuple.t_self, blkno, off);
		if (HeapTupleSatisfiesVisibility(&tuple, snapshot, buf))
			visitor(&tuple, arg);
	}
	UnlockReleaseBuffer(buf);
}

static void
sample_visitor(HeapTuple tuple, void *arg)
{
	SampleState *st = (SampleState *) arg;

	if (list_length(st->tuples) < st->limit && st->bytes <= st->max_bytes)
	{
		st->tuples = lappend(st->tuples, heap_copytuple(tuple));
		st->bytes += HEAPTUPLESIZE + tuple->t_len;
	}
}

void
cx_check_sample_memory(Relation rel, int64 bytes)
{
	if (bytes > (int64) cx_sample_memory_kb * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the sample of \"%s\" needs more than compressx.sample_memory (%d kB)",
						RelationGetRelationName(rel), cx_sample_memory_kb),
				 errhint("Ask for fewer sample rows, or raise compressx.sample_memory.")));
}

List *
cx_sample_tuples(Relation rel, Snapshot snapshot, int64 sample_rows, int64 limit)
{
	SampleState st = {NIL, limit, 0, (int64) cx_sample_memory_kb * 1024};

	if (limit > 0)
		cx_visit_tuples(rel, snapshot, sample_rows, sample_visitor, &st);
	cx_check_sample_memory(rel, st.bytes);
	return st.tuples;
}

/* A block and its place in a seeded sample's order. */
typedef struct SeededBlock
{
	uint64		hash;
	BlockNumber blkno;
} SeededBlock;

static int
cmp_seeded_block(const void *a, const void *b)
{
	const SeededBlock *x = (const SeededBlock *) a;
	const SeededBlock *y = (const SeededBlock *) b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->blkno < y->blkno ? -1 : x->blkno > y->blkno ? 1 : 0;
}

List *
cx_sample_tuples_seeded(Relation rel, Snapshot snapshot, int64 sample_rows,
						int64 limit, uint64 seed)
{
	SampleState st = {NIL, limit, 0, (int64) cx_sample_memory_kb * 1024};
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BufferAccessStrategy strategy;
	uint64		below = 0;		/* hashes below this were read */
	double		share;

	if (limit <= 0 || nblocks == 0)
	{
		cx_check_sample_memory(rel, st.bytes);
		return NIL;
	}
	strategy = GetAccessStrategy(BAS_BULKREAD);
	/* a first batch of about twice the blocks the statistics say it takes */
	share = Min(1.0, 2.0 * sample_block_count(rel, nblocks, sample_rows, strategy) / nblocks + 0.001);
	for (;;)
	{
		uint64		upto = share >= 1.0 ? PG_UINT64_MAX : (uint64) (share * (double) PG_UINT64_MAX);
		SeededBlock *batch = NULL;
		int			n = 0;
		int			cap = 0;

		/* the blocks whose hash is in [below, upto], in hash order */
		for (BlockNumber b = 0; b < nblocks; b++)
		{
			uint64		h = hash_bytes_uint32_extended(b, seed);

			if (h < below || h > upto)
				continue;
			if (n == cap)
			{
				cap = Max(64, cap * 2);
				batch = batch ? repalloc(batch, sizeof(SeededBlock) * cap) :
					palloc(sizeof(SeededBlock) * cap);
			}
			batch[n].hash = h;
			batch[n].blkno = b;
			n++;
		}
		if (n > 0)
			qsort(batch, n, sizeof(SeededBlock), cmp_seeded_block);
		for (int i = 0; i < n && list_length(st.tuples) < st.limit && st.bytes <= st.max_bytes; i++)
			visit_page(rel, batch[i].blkno, strategy, snapshot, sample_visitor, &st);
		if (batch)
			pfree(batch);
		if (upto == PG_UINT64_MAX || list_length(st.tuples) >= st.limit || st.bytes > st.max_bytes)
			break;
		below = upto + 1;
		share = Min(1.0, share * 2);
	}
	FreeAccessStrategy(strategy);
	cx_check_sample_memory(rel, st.bytes);
	return st.tuples;
}

/*
 * Errors unless the current user may SELECT from relid and read all of its
 * rows.  compressx's inspection reads every row version of a table,
 * whatever policies say: where row-level security applies to the user,
 * sizes, methods, problems and compressibility of rows it hides would be
 * told.  Takes no lock.
 */
static void
check_select(Oid relid)
{
	AclResult	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	char	   *name;

	if (aclresult == ACLCHECK_OK &&
		check_enable_rls(relid, InvalidOid, true) != RLS_ENABLED)
		return;
	name = get_rel_name(relid);
	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, name);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("row-level security is enabled for table \"%s\"", name),
			 errdetail("compressx reads every row of a table, including rows the table's policies hide from you."),
			 errhint("Run it as the table's owner (without FORCE ROW LEVEL SECURITY) or as a role with BYPASSRLS.")));
}

/*
 * Open a table the current user may SELECT from with AccessShareLock, and
 * set *leaves to the relations with storage to read: the table itself, or
 * every leaf partition (locked too).  Errors for missing relations and
 * unsupported kinds.  The privilege is checked before the lock is taken, so
 * a role without it neither waits behind nor blocks other sessions' locks,
 * and again once it is held, in case it was revoked meanwhile.
 */
Relation
cx_open_readable_table(Oid relid, List **leaves)
{
	Relation	rel;
	List	   *all;
	ListCell   *lc;

	check_select(relid);
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	check_select(relid);
	cx_check_table_relkind(rel);

	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
		all = find_all_inheritors(relid, AccessShareLock, NULL);
	else
		all = list_make1_oid(relid);
	*leaves = NIL;
	foreach(lc, all)
	{
		Oid			leafid = lfirst_oid(lc);

		if (RELKIND_HAS_STORAGE(get_rel_relkind(leafid)))
		{
			Relation	leaf = table_open(leafid, NoLock);

			cx_check_table_relkind(leaf);
			table_close(leaf, NoLock);
			*leaves = lappend_oid(*leaves, leafid);
		}
	}
	return rel;
}

/*
 * Number of blocks to read for about sample_rows tuples, from the planner's
 * statistics, or from the first block's line pointer count when the table
 * has never been analyzed.
 */
static BlockNumber
sample_block_count(Relation rel, BlockNumber nblocks, int64 sample_rows,
				   BufferAccessStrategy strategy)
{
	double		density;
	double		want;

	if (rel->rd_rel->relpages > 0 && rel->rd_rel->reltuples > 0)
		density = rel->rd_rel->reltuples / rel->rd_rel->relpages;
	else
	{
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, 0, RBM_NORMAL,
											 strategy);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		density = PageGetMaxOffsetNumber(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
	}
	density = Max(density, 1.0);
	want = ceil((double) sample_rows / density);
	return (BlockNumber) Min(Max(want, 1.0), (double) nblocks);
}

void
cx_visit_tuples(Relation rel, Snapshot snapshot, int64 sample_rows,
				CxTupleVisitor visitor, void *arg)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockSamplerData bs;
	bool		sampled = sample_rows >= 0 && nblocks > 0;
	BlockNumber blkno = 0;

	if (sampled)
	{
		BlockNumber target = sample_block_count(rel, nblocks, sample_rows, strategy);

		BlockSampler_Init(&bs, nblocks, target,
						  pg_prng_uint32(&pg_global_prng_state));
	}

	for (;;)
	{
		if (sampled)
		{
			if (!BlockSampler_HasMore(&bs))
				break;
			blkno = BlockSampler_Next(&bs);
		}
		else if (blkno >= nblocks)
			break;

		visit_page(rel, blkno, strategy, snapshot, visitor, arg);

		if (!sampled)
			blkno++;
	}
	FreeAccessStrategy(strategy);
}

/* Accumulated figures of one column, per stored method. */
typedef struct ColumnAcc
{
	char	   *name;
	int64		values[CX_STORED_METHOD_COUNT];
	int64		external[CX_STORED_METHOD_COUNT];
	int64		raw[CX_STORED_METHOD_COUNT];
	int64		stored[CX_STORED_METHOD_COUNT];
} ColumnAcc;

typedef struct SummaryState
{
	TupleDesc	tupdesc;		/* of the leaf being scanned */
	ColumnAcc **byattno;		/* attno-1 -> accumulator, NULL if skipped */
	Datum	   *values;
	bool	   *isnull;
	int			last_varlena;	/* deform up to this attribute */
} SummaryState;

static void
summary_visitor(HeapTuple tuple, void *arg)
{
	SummaryState *st = (SummaryState *) arg;
	int			natts = st->last_varlena;

	heap_deform_tuple(tuple, st->tupdesc, st->values, st->isnull);
	for (int i = 0; i < natts; i++)
	{
		ColumnAcc  *acc = st->byattno[i];
		CxStoredValue sv;

		if (acc == NULL || st->isnull[i])
			continue;
		cx_inspect_datum(st->values[i], &sv);
		acc->values[sv.method]++;
		acc->external[sv.method] += sv.external ? 1 : 0;
		acc->raw[sv.method] += sv.raw_bytes;
		acc->stored[sv.method] += sv.stored_bytes;
	}
}

static ColumnAcc *
find_or_add_column(List **columns, const char *name)
{
	ListCell   *lc;
	ColumnAcc  *acc;

	foreach(lc, *columns)
	{
		acc = (ColumnAcc *) lfirst(lc);
		if (strcmp(acc->name, name) == 0)
			return acc;
	}
	acc = palloc0(sizeof(ColumnAcc));
	acc->name = pstrdup(name);
	*columns = lappend(*columns, acc);
	return acc;
}

/*
 * Scan one leaf relation (already locked) into the per-name accumulators.
 */
static void
summarize_leaf(Relation rel, int64 sample_rows, List **columns)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	SummaryState st;

	st.tupdesc = tupdesc;
	st.byattno = palloc0(sizeof(ColumnAcc *) * tupdesc->natts);
	st.values = palloc(sizeof(Datum) * tupdesc->natts);
	st.isnull = palloc(sizeof(bool) * tupdesc->natts);
	st.last_varlena = 0;

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (att->attisdropped || att->attlen != -1)
			continue;
		st.byattno[i] = find_or_add_column(columns, NameStr(att->attname));
		st.last_varlena = i + 1;
	}

	if (st.last_varlena > 0)
		cx_visit_tuples(rel, GetActiveSnapshot(), sample_rows,
						summary_visitor, &st);
}

/*
 * compressx.stored_summary(rel regclass, sample_rows int)
 *	  RETURNS TABLE (column_name name, method text, values bigint,
 *					 external_values bigint, raw_bytes bigint,
 *					 stored_bytes bigint)
 *
 * One row per varlena column and stored method found (a column with no
 * values: one row with method NULL and zeros); partitioned tables
 * are summed over their leaf partitions by column name.  NULL sample_rows
 * reads every visible row; otherwise blocks are sampled in each leaf.
 */
Datum
compressx_stored_summary(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	int64		sample_rows = PG_ARGISNULL(1) ? -1 : PG_GETARG_INT32(1);
	Relation	rel;
	List	   *leaves;
	List	   *columns = NIL;
	ListCell   *lc;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	if (!PG_ARGISNULL(1) && sample_rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample_rows must be at least 1"),
				 errhint("Pass NULL to read every row.")));

	relid = PG_GETARG_OID(0);
	InitMaterializedSRF(fcinfo, 0);

	rel = cx_open_readable_table(relid, &leaves);
	if (cx_citus_fan_out_srf(fcinfo, relid, "citus_stored_summary"))
	{
		relation_close(rel, NoLock);
		return (Datum) 0;
	}

	/* Every varlena column gets a row, in the table's column order. */
	for (int i = 0; i < RelationGetDescr(rel)->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), i);

		if (!att->attisdropped && att->attlen == -1)
			(void) find_or_add_column(&columns, NameStr(att->attname));
	}

	foreach(lc, leaves)
	{
		Relation	leaf = table_open(lfirst_oid(lc), NoLock);

		summarize_leaf(leaf, sample_rows, &columns);
		table_close(leaf, NoLock);
	}

	foreach(lc, columns)
	{
		ColumnAcc  *acc = (ColumnAcc *) lfirst(lc);
		bool		any = false;

		for (int m = 0; m < CX_STORED_METHOD_COUNT; m++)
			any |= acc->values[m] > 0;

		for (int m = 0; m < CX_STORED_METHOD_COUNT; m++)
		{
			Datum		values[6];
			bool		nulls[6] = {0};

			/* a column without values: one row, method NULL, zeros */
			if (acc->values[m] == 0 && (any || m > 0))
				continue;
			nulls[1] = !any;
			values[0] = DirectFunctionCall1(namein, CStringGetDatum(acc->name));
			values[1] = CStringGetTextDatum(cx_stored_method_name(m));
			values[2] = Int64GetDatum(acc->values[m]);
			values[3] = Int64GetDatum(acc->external[m]);
			values[4] = Int64GetDatum(acc->raw[m]);
			values[5] = Int64GetDatum(acc->stored[m]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}

	relation_close(rel, NoLock);
	return (Datum) 0;
}

/*
 * compressx.value_storage(rel regclass, row_ctid tid, column_name name)
 *	  RETURNS TABLE (method text, stored_bytes bigint, raw_bytes bigint,
 *					 external boolean)
 *
 * How one value is stored: what pg_column_compression() and
 * pg_column_size() cannot say for compressx tables, whose values reach
 * functions decoded.  rel is the table holding the row (for a partitioned
 * table, the partition: pass tableoid); no row when the ctid names no row
 * visible to the statement's snapshot, or the value is NULL.  Needs SELECT
 * on the table; AccessShareLock.
 */
PG_FUNCTION_INFO_V1(compressx_value_storage);

Datum
compressx_value_storage(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	ItemPointer tid = (ItemPointer) PG_GETARG_POINTER(1);
	const char *column = NameStr(*PG_GETARG_NAME(2));
	Relation	rel;
	List	   *leaves;
	AttrNumber	attnum;
	HeapTupleData tuple;
	Buffer		buf = InvalidBuffer;

	InitMaterializedSRF(fcinfo, 0);
	rel = cx_open_readable_table(relid, &leaves);
	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a partitioned table", RelationGetRelationName(rel)),
				 errhint("Pass the partition that holds the row, for example the row's tableoid.")));
	attnum = get_attnum(relid, column);
	if (attnum <= 0 || TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attisdropped)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						column, RelationGetRelationName(rel))));
	if (TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attlen != -1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" of relation \"%s\" is not of a variable-length type",
						column, RelationGetRelationName(rel))));

	tuple.t_self = *tid;
	if (ItemPointerIsValid(tid) &&
		ItemPointerGetBlockNumber(tid) < RelationGetNumberOfBlocks(rel) &&
		heap_fetch(rel, GetActiveSnapshot(), &tuple, &buf, false))
	{
		bool		isnull;
		Datum		value = heap_getattr(&tuple, attnum, RelationGetDescr(rel), &isnull);

		if (!isnull)
		{
			CxStoredValue sv;
			Datum		values[4];
			bool		nulls[4] = {0};

			cx_inspect_datum(value, &sv);
			values[0] = CStringGetTextDatum(cx_stored_method_name(sv.method));
			values[1] = Int64GetDatum(sv.stored_bytes);
			values[2] = Int64GetDatum(sv.raw_bytes);
			values[3] = BoolGetDatum(sv.external);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	if (BufferIsValid(buf))
		ReleaseBuffer(buf);
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}
