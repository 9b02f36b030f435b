/*-------------------------------------------------------------------------
 *
 * recompress.c
 *	  recompress_table(): rewrite existing values of a table with a codec.
 *
 * The rewrite works like VACUUM FULL, with one difference: while each tuple
 * is copied into the new heap, every compressed value of a target column
 * whose method differs from the target is decompressed and compressed
 * again with the target method.  Values already in the target method, and
 * uncompressed values, are copied as they are.
 *
 * Steps, per table (each leaf partition of a partitioned table, all in the
 * caller's transaction):
 *	  1. Check ownership, then take AccessExclusiveLock on the table (and on
 *		 all partitions, and on the TOAST table).  Nothing else can read or
 *		 write the table until commit.
 *	  2. Set pg_attribute.attcompression of the target columns to the target
 *		 method (on the partitioned parents too), so new rows follow.
 *	  3. Scan the visible rows reading only stored forms; if no value needs a
 *		 new method, stop here for this table (no rewrite).
 *	  4. Create a transient heap (make_new_heap) and copy every tuple version
 *		 that is not dead, keeping xmin/xmax/ctid chains (rewriteheap), so a
 *		 snapshot taken before the rewrite reads the same rows after it.
 *	  5. Swap the relation files and rebuild every index (finish_heap_swap).
 *
 * Everything is transactional: a crash or error before commit leaves the
 * old files in place and the new ones are discarded.  No DML happens, so no
 * user trigger fires.  Progress is reported through the CLUSTER progress
 * slot (pg_stat_progress_cluster, compressx.recompress_progress).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/relation.h"
#include "access/rewriteheap.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/indexing.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/cluster.h"
#include "commands/progress.h"
#include "commands/tablecmds.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "codec.h"
#include "compat.h"
#include "compressx.h"
#include "inspect.h"

PG_FUNCTION_INFO_V1(compressx_recompress_table);

/* Our own progress parameters, beyond those CLUSTER and index builds use. */
#define CX_PROGRESS_VALUES_REWRITTEN	17
#define CX_PROGRESS_LEAF_NUMBER			18
#define CX_PROGRESS_MARKER				19
#define CX_PROGRESS_MARKER_VALUE		0x43585243	/* "CXRC" */

/* One target column, by name (attnums differ between partitions). */
typedef struct TargetColumn
{
	char		name[NAMEDATALEN];
	char		method;			/* core compression method char */
	int64		rewritten;
	int64		bytes_before;
	int64		bytes_after;
} TargetColumn;

/* Per-leaf state. */
typedef struct LeafState
{
	TupleDesc	tupdesc;
	int			ntargets;
	TargetColumn **byattno;		/* attno-1 -> target or NULL */
	Datum	   *values;
	bool	   *isnull;
	int64		needs_rewrite;	/* values whose method is not the target */
	int64		rewritten;		/* values re-encoded so far (progress) */
} LeafState;

static CxStoredMethod
stored_method_for(char cmethod)
{
	return cmethod == TOAST_LZ4_COMPRESSION ? CX_STORED_LZ4 : CX_STORED_PGLZ;
}

/*
 * Whether a stored value must be re-encoded for the target method.
 */
static bool
value_needs_rewrite(const CxStoredValue *sv, char target)
{
	return sv->method != CX_STORED_NONE &&
		sv->method != stored_method_for(target);
}

/*
 * Pre-check visitor: count values needing a new method, and sum the sizes
 * of every value (the figures reported when no rewrite is needed).
 */
static void
precheck_visitor(HeapTuple tuple, void *arg)
{
	LeafState  *st = (LeafState *) arg;

	heap_deform_tuple(tuple, st->tupdesc, st->values, st->isnull);
	for (int i = 0; i < st->tupdesc->natts; i++)
	{
		TargetColumn *tc = st->byattno[i];
		CxStoredValue sv;

		if (tc == NULL || st->isnull[i])
			continue;
		cx_inspect_datum(st->values[i], &sv);
		if (value_needs_rewrite(&sv, tc->method))
			st->needs_rewrite++;
		tc->bytes_before += sv.stored_bytes;
		tc->bytes_after += sv.stored_bytes;
	}
}

/*
 * Set attcompression of the named columns of relid to method.  Caller holds
 * AccessExclusiveLock on the relation.
 */
static void
set_column_compression(Oid relid, TargetColumn *targets, int ntargets)
{
	Relation	attrel = table_open(AttributeRelationId, RowExclusiveLock);

	for (int i = 0; i < ntargets; i++)
	{
		HeapTuple	tup = SearchSysCacheCopyAttName(relid, targets[i].name);
		Form_pg_attribute att;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for column \"%s\" of relation %u",
				 targets[i].name, relid);
		att = (Form_pg_attribute) GETSTRUCT(tup);
		if (att->attcompression != targets[i].method)
		{
			att->attcompression = targets[i].method;
			CatalogTupleUpdate(attrel, &tup->t_self, tup);
		}
		heap_freetuple(tup);
	}
	table_close(attrel, RowExclusiveLock);
	CacheInvalidateRelcacheByRelid(relid);
	CommandCounterIncrement();
}

/*
 * Copy one tuple into the new heap, re-encoding target values.  Runs in a
 * per-tuple memory context that the caller resets.
 */
static void
reform_and_rewrite(LeafState *st, HeapTuple tuple, bool live,
				   TupleDesc newdesc, RewriteState rwstate)
{
	HeapTuple	copied;

	heap_deform_tuple(tuple, st->tupdesc, st->values, st->isnull);
	for (int i = 0; i < newdesc->natts; i++)
	{
		TargetColumn *tc;
		CxStoredValue sv;

		if (TupleDescAttr(newdesc, i)->attisdropped)
		{
			st->isnull[i] = true;
			continue;
		}
		tc = st->byattno[i];
		if (tc == NULL || st->isnull[i])
			continue;

		cx_inspect_datum(st->values[i], &sv);
		if (live)
			tc->bytes_before += sv.stored_bytes;
		if (value_needs_rewrite(&sv, tc->method))
		{
			struct varlena *raw = detoast_attr((struct varlena *) DatumGetPointer(st->values[i]));
			Datum		packed = toast_compress_datum(PointerGetDatum(raw), tc->method);

			st->values[i] = DatumGetPointer(packed) != NULL ? packed : PointerGetDatum(raw);
			st->rewritten++;
			if (live)
				tc->rewritten++;
			cx_inspect_datum(st->values[i], &sv);
		}
		if (live)
			tc->bytes_after += sv.stored_bytes;
	}

	copied = heap_form_tuple(newdesc, st->values, st->isnull);
	rewrite_heap_tuple(rwstate, tuple, copied);
}

/*
 * Copy every non-dead tuple of OldHeap into NewHeap (both locked
 * AccessExclusive), following heap's CLUSTER copy in physical order.
 */
static void
copy_and_recompress(Relation OldHeap, Relation NewHeap, LeafState *st,
					TransactionId OldestXmin, TransactionId FreezeXid,
					MultiXactId MultiXactCutoff, double *num_tuples)
{
	RewriteState rwstate;
	TableScanDesc scan;
	HeapScanDesc hscan;
	TupleTableSlot *slot;
	BlockNumber prev_block = InvalidBlockNumber;
	MemoryContext tuplecxt;
	MemoryContext oldcxt;

	rwstate = begin_heap_rewrite(OldHeap, NewHeap, OldestXmin, FreezeXid,
								 MultiXactCutoff);
	tuplecxt = AllocSetContextCreate(CurrentMemoryContext,
									 "compressx recompress tuple",
									 ALLOCSET_DEFAULT_SIZES);

	pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
								 PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP);
	scan = table_beginscan(OldHeap, SnapshotAny, 0, NULL);
	hscan = (HeapScanDesc) scan;
	pgstat_progress_update_param(PROGRESS_CLUSTER_TOTAL_HEAP_BLKS,
								 hscan->rs_nblocks);
	slot = table_slot_create(OldHeap, NULL);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		HeapTuple	tuple;
		Buffer		buf = ((BufferHeapTupleTableSlot *) slot)->buffer;
		bool		isdead = false;
		bool		live = false;

		CHECK_FOR_INTERRUPTS();

		if (prev_block != hscan->rs_cblock)
		{
			prev_block = hscan->rs_cblock;
			pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_BLKS_SCANNED,
										 prev_block + 1);
			if (cx_debug_rewrite_delay_ms > 0)
				pg_usleep(cx_debug_rewrite_delay_ms * 1000L);
		}

		tuple = ExecFetchSlotHeapTuple(slot, false, NULL);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		switch (HeapTupleSatisfiesVacuum(tuple, OldestXmin, buf))
		{
			case HEAPTUPLE_DEAD:
				isdead = true;
				break;
			case HEAPTUPLE_LIVE:
				live = true;
				break;
			case HEAPTUPLE_RECENTLY_DEAD:
				break;
			case HEAPTUPLE_INSERT_IN_PROGRESS:
				/* only our own transaction can have one: we hold the lock */
				live = true;
				break;
			case HEAPTUPLE_DELETE_IN_PROGRESS:
				break;
			default:
				elog(ERROR, "unexpected HeapTupleSatisfiesVacuum result");
				break;
		}
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);

		if (isdead)
		{
			(void) rewrite_heap_dead_tuple(rwstate, tuple);
			continue;
		}

		oldcxt = MemoryContextSwitchTo(tuplecxt);
		reform_and_rewrite(st, tuple, live, RelationGetDescr(NewHeap), rwstate);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(tuplecxt);

		*num_tuples += 1;
		{
			const int	idx[] = {PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED,
				PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN,
			CX_PROGRESS_VALUES_REWRITTEN};
			int64		val[3];

			val[0] = (int64) *num_tuples;
			val[1] = (int64) *num_tuples;
			val[2] = st->rewritten;
			pgstat_progress_update_multi_param(3, idx, val);
		}
	}

	pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_BLKS_SCANNED,
								 hscan->rs_nblocks);
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	end_heap_rewrite(rwstate);
	MemoryContextDelete(tuplecxt);
}

/*
 * Rewrite one leaf (locked AccessExclusive by the caller) if any of its
 * visible values needs a new method.
 */
static void
recompress_leaf(Oid relid, TargetColumn *targets, int ntargets, int leafno)
{
	Relation	rel = table_open(relid, NoLock);
	TupleDesc	tupdesc = RelationGetDescr(rel);
	LeafState	st;
	Oid			OIDNewHeap;
	Relation	NewHeap;
	TransactionId OldestXmin,
				FreezeXid;
	MultiXactId OldestMxact,
				MultiXactCutoff;
	double		num_tuples = 0;
	char		relpersistence = rel->rd_rel->relpersistence;
	HeapTuple	reltup;
	Relation	relRelation;
	Form_pg_class relform;

	pgstat_progress_start_command(PROGRESS_COMMAND_CLUSTER, relid);
	{
		const int	idx[] = {PROGRESS_CLUSTER_COMMAND, CX_PROGRESS_LEAF_NUMBER,
		CX_PROGRESS_MARKER};
		const int64 val[] = {0, leafno, CX_PROGRESS_MARKER_VALUE};

		pgstat_progress_update_multi_param(3, idx, val);
	}

	CheckTableNotInUse(rel, "recompress_table");

	memset(&st, 0, sizeof(st));
	st.tupdesc = tupdesc;
	st.byattno = palloc0(sizeof(TargetColumn *) * tupdesc->natts);
	st.values = palloc(sizeof(Datum) * tupdesc->natts);
	st.isnull = palloc(sizeof(bool) * tupdesc->natts);
	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (att->attisdropped)
			continue;
		for (int t = 0; t < ntargets; t++)
			if (strcmp(NameStr(att->attname), targets[t].name) == 0)
				st.byattno[i] = &targets[t];
	}

	/* Step 2 happens before make_new_heap so the new heap inherits it. */
	set_column_compression(relid, targets, ntargets);

	/* Step 3: anything to do?  Its figures are kept only if nothing is. */
	{
		int64	   *before = palloc(sizeof(int64) * ntargets);
		int64	   *after = palloc(sizeof(int64) * ntargets);

		for (int t = 0; t < ntargets; t++)
		{
			before[t] = targets[t].bytes_before;
			after[t] = targets[t].bytes_after;
		}
		cx_visit_tuples(rel, GetActiveSnapshot(), -1, precheck_visitor, &st);
		if (st.needs_rewrite == 0)
		{
			table_close(rel, NoLock);
			pgstat_progress_end_command();
			return;
		}
		for (int t = 0; t < ntargets; t++)
		{
			targets[t].bytes_before = before[t];
			targets[t].bytes_after = after[t];
		}
	}

	/* Keep autovacuum away from the TOAST table while we copy it. */
	if (OidIsValid(rel->rd_rel->reltoastrelid))
		LockRelationOid(rel->rd_rel->reltoastrelid, AccessExclusiveLock);

	OIDNewHeap = make_new_heap(relid, rel->rd_rel->reltablespace,
							   rel->rd_rel->relam, relpersistence,
							   AccessExclusiveLock);
	NewHeap = table_open(OIDNewHeap, AccessExclusiveLock);

	cx_vacuum_cutoffs(rel, &OldestXmin, &OldestMxact, &FreezeXid,
					  &MultiXactCutoff);
	(void) OldestMxact;
	if (TransactionIdIsValid(rel->rd_rel->relfrozenxid) &&
		TransactionIdPrecedes(FreezeXid, rel->rd_rel->relfrozenxid))
		FreezeXid = rel->rd_rel->relfrozenxid;
	if (MultiXactIdIsValid(rel->rd_rel->relminmxid) &&
		MultiXactIdPrecedes(MultiXactCutoff, rel->rd_rel->relminmxid))
		MultiXactCutoff = rel->rd_rel->relminmxid;

	copy_and_recompress(rel, NewHeap, &st, OldestXmin, FreezeXid,
						MultiXactCutoff, &num_tuples);

	/* Record the new heap's size so the swap carries correct statistics. */
	relRelation = table_open(RelationRelationId, RowExclusiveLock);
	reltup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(OIDNewHeap));
	if (!HeapTupleIsValid(reltup))
		elog(ERROR, "cache lookup failed for relation %u", OIDNewHeap);
	relform = (Form_pg_class) GETSTRUCT(reltup);
	relform->relpages = RelationGetNumberOfBlocks(NewHeap);
	relform->reltuples = num_tuples;
	CatalogTupleUpdate(relRelation, &reltup->t_self, reltup);
	heap_freetuple(reltup);
	table_close(relRelation, RowExclusiveLock);
	CommandCounterIncrement();

	table_close(NewHeap, NoLock);
	table_close(rel, NoLock);

	/* Step 5: swap files (TOAST by links) and rebuild all indexes. */
	finish_heap_swap(relid, OIDNewHeap, false, false, false, true,
					 FreezeXid, MultiXactCutoff, relpersistence);

	pgstat_progress_end_command();
}

/*
 * Resolve the columns argument against the parent relation into targets.
 * columns NULL: every column whose type supports compression.
 */
static TargetColumn *
resolve_targets(Relation rel, ArrayType *columns, char method, int *ntargets)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	TargetColumn *targets = palloc0(sizeof(TargetColumn) * Max(tupdesc->natts, 1));
	int			n = 0;
	Datum	   *names = NULL;
	bool	   *nulls = NULL;
	int			nnames = 0;

	if (columns != NULL)
	{
		deconstruct_array(columns, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
						  &names, &nulls, &nnames);
		if (nnames == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("columns must not be an empty array"),
					 errhint("Pass NULL to recompress every compressible column.")));
		for (int i = 0; i < nnames; i++)
			if (nulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("columns must not contain null elements")));
	}

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		bool		wanted = (columns == NULL);

		if (att->attisdropped)
			continue;
		for (int j = 0; j < nnames && !wanted; j++)
			wanted = strcmp(NameStr(*DatumGetName(names[j])),
							NameStr(att->attname)) == 0;
		if (!wanted)
			continue;
		if (att->attlen != -1 || get_typstorage(att->atttypid) == TYPSTORAGE_PLAIN)
		{
			if (columns == NULL)
				continue;
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of relation \"%s\" cannot be compressed",
							NameStr(att->attname), RelationGetRelationName(rel)),
					 errdetail("Its type %s does not support compression.",
							   format_type_be(att->atttypid))));
		}
		strlcpy(targets[n].name, NameStr(att->attname), NAMEDATALEN);
		targets[n].method = method;
		if (!CompressionMethodIsValid(method))
		{
			targets[n].method = att->attcompression;
			if (!CompressionMethodIsValid(targets[n].method))
				targets[n].method = default_toast_compression;
		}
		n++;
	}

	/* every named column must exist */
	for (int j = 0; j < nnames; j++)
	{
		const char *name = NameStr(*DatumGetName(names[j]));
		bool		found = false;

		for (int t = 0; t < n && !found; t++)
			found = strcmp(targets[t].name, name) == 0;
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of relation \"%s\" does not exist",
							name, RelationGetRelationName(rel))));
	}

	*ntargets = n;
	return targets;
}

static void
check_owner(Oid relid)
{
	char	   *name = get_rel_name(relid);

	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!cx_relation_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(get_rel_relkind(relid)),
					   name);
}

/*
 * Target core method for a codec argument: pglz or lz4.  InvalidCompressionMethod
 * when codec is NULL (each column keeps its own setting).
 */
static char
heap_target_method(bool codec_isnull, text *codec_text, bool level_isnull,
				   int level)
{
	const CxCodec *codec;

	if (codec_isnull)
	{
		if (!level_isnull)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a level needs a codec"),
					 errhint("Name the codec whose level you are setting.")));
		return InvalidCompressionMethod;
	}
	codec = cx_codec_by_name_or_error(text_to_cstring(codec_text));
	if (codec->id == CX_CODEC_ZSTD)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("heap tables cannot store zstd values"),
				 errdetail("PostgreSQL's heap reads only pglz and lz4 compressed values."),
				 errhint("Use codec pglz or lz4, or store the table with the compressx access method.")));
	if (codec->id == CX_CODEC_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("heap tables cannot be recompressed with codec \"none\""),
				 errhint("Use codec pglz or lz4.")));
	(void) cx_codec_resolve_level(codec, level_isnull, level);
	if (!level_isnull)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("heap tables do not support compression levels"),
				 errdetail("PostgreSQL's heap compresses %s with fixed settings.",
						   codec->name),
				 errhint("Pass NULL as the level.")));
	return codec->id == CX_CODEC_LZ4 ? TOAST_LZ4_COMPRESSION : TOAST_PGLZ_COMPRESSION;
}

/*
 * recompress_table(rel regclass, codec text, level int, columns name[])
 *	  RETURNS TABLE (column_name name, values_rewritten bigint,
 *					 bytes_before bigint, bytes_after bigint)
 */
Datum
compressx_recompress_table(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	char		method;
	ArrayType  *columns;
	Relation	rel;
	TargetColumn *targets;
	int			ntargets;
	List	   *rels;
	ListCell   *lc;
	int			leafno = 0;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	method = heap_target_method(PG_ARGISNULL(1),
								PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1),
								PG_ARGISNULL(2),
								PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2));
	columns = PG_ARGISNULL(3) ? NULL : PG_GETARG_ARRAYTYPE_P(3);

	InitMaterializedSRF(fcinfo, 0);

	/* Step 1: ownership before locking, then lock and look again. */
	check_owner(relid);
	rel = try_relation_open(relid, AccessExclusiveLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	cx_check_table_relkind(rel);
	if (IsSystemRelation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot recompress system catalog \"%s\"",
						RelationGetRelationName(rel))));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot recompress temporary tables of other sessions")));

	targets = resolve_targets(rel, columns, method, &ntargets);

	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
		rels = find_all_inheritors(relid, AccessExclusiveLock, NULL);
	else
		rels = list_make1_oid(relid);

	/* Every partition must be ours and of a supported kind before any work. */
	foreach(lc, rels)
	{
		Oid			childid = lfirst_oid(lc);
		Relation	child;

		if (childid == relid)
			continue;
		check_owner(childid);
		child = table_open(childid, NoLock);
		cx_check_table_relkind(child);
		table_close(child, NoLock);
	}

	/* Only recompress_leaf() may hold the relation open (CheckTableNotInUse). */
	table_close(rel, NoLock);

	foreach(lc, rels)
	{
		Oid			childid = lfirst_oid(lc);

		if (RELKIND_HAS_STORAGE(get_rel_relkind(childid)))
			recompress_leaf(childid, targets, ntargets, ++leafno);
		else
			set_column_compression(childid, targets, ntargets);
	}

	for (int t = 0; t < ntargets; t++)
	{
		Datum		values[4];
		bool		nulls[4] = {0};

		values[0] = DirectFunctionCall1(namein, CStringGetDatum(targets[t].name));
		values[1] = Int64GetDatum(targets[t].rewritten);
		values[2] = Int64GetDatum(targets[t].bytes_before);
		values[3] = Int64GetDatum(targets[t].bytes_after);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
