/*-------------------------------------------------------------------------
 *
 * recompress.c
 *	  recompress_table(): rewrite existing values of a table with a codec.
 *
 * The rewrite works like VACUUM FULL, with one difference: while each tuple
 * is copied into the new heap, every compressed value of a target column
 * whose method differs from the target is decompressed and compressed
 * again with the target method.  Values already in the target method, and
 * uncompressed values, are copied as they are, except on compressx tables
 * the compressed values of a column whose setting (level, dictionary)
 * changed since its last rewrite (catalog/generation.c): those are encoded
 * again, and the rewrite records the setting applied.
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
 *	  5. Swap the relation files (the TOAST table's by content, as CLUSTER
 *		 does) and rebuild every index (finish_heap_swap).
 *
 * Everything is transactional: a crash or error before commit leaves the
 * old files in place and the new ones are discarded.  No DML happens, so no
 * user trigger fires.  Progress is reported under compressx's own command
 * (sql/progress.h), with CLUSTER's parameters where they mean the same:
 * compressx.recompress_progress shows it, no view of core does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/multixact.h"
#include "access/toast_compression.h"
#include "catalog/catalog.h"
#include "catalog/indexing.h"
#include "catalog/pg_inherits.h"
#include "commands/progress.h"
#include "commands/tablecmds.h"
#include "funcapi.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "storage/format.h"
#include "am/am.h"
#include "am/rewrite.h"
#include "catalog/generation.h"
#include "sql/progress.h"
#include "sql/recompress.h"
#include "citus/citus.h"
#include "citus/fanout.h"

PG_FUNCTION_INFO_V1(compressx_recompress_table);

/* Our own progress parameters, beyond those CLUSTER and index builds use. */
#define CX_PROGRESS_VALUES_REWRITTEN	17
#define CX_PROGRESS_LEAF_NUMBER			18
#define CX_PROGRESS_MARKER				19
#define CX_PROGRESS_MARKER_VALUE		0x43585243	/* "CXRC" */

/* Per-leaf state. */
typedef struct LeafState
{
	TupleDesc	tupdesc;
	TargetColumn **byattno;		/* attno-1 -> target or NULL */
	Datum	   *values;
	bool	   *isnull;
	int64		needs_rewrite;	/* values whose method is not the target */
	int64		rewritten;		/* values re-encoded so far (progress) */
	bool		force;			/* compressx with a level named: rewrite every value */
	bool	   *pending;		/* attno-1: compressx, the column's setting
								 * changed since its last rewrite: its
								 * compressed values are re-encoded */
	bool		rewritten_table;	/* size_visitor: reading the rewritten table */
	CxColumnSetting *settings;	/* compressx leaves: settings after the change */
	int			toast_target;	/* heap leaves: rows larger are compressed */
} LeafState;

CxStoredMethod
cx_stored_method_of_char(char cmethod)
{
	return cmethod == TOAST_LZ4_COMPRESSION ? CX_STORED_LZ4 : CX_STORED_PGLZ;
}

CxStoredMethod
cx_stored_method_of_codec(const CxCodec *codec)
{
	switch (codec->id)
	{
		case CX_CODEC_PGLZ:
			return CX_STORED_PGLZ;
		case CX_CODEC_LZ4:
			return CX_STORED_LZ4;
		case CX_CODEC_ZSTD:
			return CX_STORED_ZSTD;
		default:
			return CX_STORED_NONE;
	}
}

CxStoredMethod
cx_stored_method_of_setting(const CxColumnSetting *s)
{
	if (s->codec->id == CX_CODEC_LZ4 && s->dict_id != 0)
		return CX_STORED_LZ4_DICT;
	return cx_stored_method_of_codec(s->codec);
}

/*
 * Whether a stored value must be re-encoded for the target method.
 * Uncompressed values stay as they are unless the target is "none" (they
 * were too small, or did not shrink).
 */
bool
cx_value_needs_rewrite(const CxStoredValue *sv, CxStoredMethod target)
{
	return sv->method != CX_STORED_NONE && sv->method != target;
}

/*
 * Visitor of the stored target values.  Before the rewrite (st->rewritten_table
 * false): count values needing a new method and sum their sizes (the
 * figures reported when no rewrite is needed).  After it: sum the sizes as
 * they are on disk (heap's toaster may still have compressed or moved
 * values after the reform callbacks ran).
 */
static void
size_visitor(HeapTuple tuple, void *arg)
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
		if (st->settings == NULL && sv.method == CX_STORED_NONE && !sv.external &&
			tuple->t_len < st->toast_target)
		{
			tc->plain_values++;
			tc->plain_bytes += sv.stored_bytes;
		}
		if (st->rewritten_table)
		{
			tc->bytes_after += sv.stored_bytes;
			continue;
		}
		if (st->force || cx_value_needs_rewrite(&sv, tc->target) ||
			(st->pending && st->pending[i] && sv.method != CX_STORED_NONE))
			st->needs_rewrite++;
		tc->bytes_before += sv.stored_bytes;
	}
}

/* Visit rel's rows visible as of now with size_visitor. */
static void
visit_as_of_now(Relation rel, LeafState *st)
{
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());

	cx_visit_tuples(rel, snap, -1, size_visitor, st);
	UnregisterSnapshot(snap);
}

/*
 * Set attcompression of the named columns of relid to method.  Caller holds
 * AccessExclusiveLock on the relation.
 */
void
cx_set_column_compression(Oid relid, TargetColumn *targets, int ntargets)
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
 * Reform callback of the copy loop: re-encode target values whose method
 * differs from the target.  Runs in a per-tuple memory context.
 */
static HeapTuple
recompress_reform(Relation NewHeap, Datum *values, bool *isnull,
				  const Datum *stored, const bool *stored_nulls, bool live,
				  void *arg)
{
	LeafState  *st = (LeafState *) arg;
	TupleDesc	newdesc = RelationGetDescr(NewHeap);
	int64		rewritten_before = st->rewritten;

	for (int i = 0; i < newdesc->natts; i++)
	{
		TargetColumn *tc = st->byattno[i];
		CxStoredValue sv;

		if (tc == NULL || isnull[i])
			continue;

		cx_inspect_datum(values[i], &sv);
		if (cx_value_needs_rewrite(&sv, tc->target))
		{
			struct varlena *raw = detoast_attr((struct varlena *) DatumGetPointer(values[i]));
			const CxCodec *codec = cx_codec_by_id(tc->method == TOAST_LZ4_COMPRESSION ?
												  CX_CODEC_LZ4 : CX_CODEC_PGLZ);
			/* core's format, as toast_compress_datum; large values in chunks */
			struct varlena *packed = cx_encode(raw, codec, codec->default_level, 0, NULL);

			values[i] = PointerGetDatum(packed != NULL ? packed : raw);
			st->rewritten++;
			if (live)
				tc->rewritten++;
		}
	}
	if (st->rewritten != rewritten_before)
		pgstat_progress_update_param(CX_PROGRESS_VALUES_REWRITTEN, st->rewritten);
	return heap_form_tuple(newdesc, values, isnull);
}

/* Whether two stored forms of a value differ (method, size or bytes). */
static bool
stored_differs(Datum a, Datum b)
{
	CxStoredValue sa;
	CxStoredValue sb;
	struct varlena *va = (struct varlena *) DatumGetPointer(a);
	struct varlena *vb = (struct varlena *) DatumGetPointer(b);

	cx_inspect_datum(a, &sa);
	cx_inspect_datum(b, &sb);
	if (sa.method != sb.method || sa.stored_bytes != sb.stored_bytes ||
		sa.external != sb.external)
		return true;
	return !sa.external && memcmp(va, vb, VARSIZE_ANY(va)) != 0;
}

/*
 * Reform callback for compressx tables: values arrive decoded and the whole
 * row is encoded to the (new) settings, as VACUUM FULL does.  A value
 * counts as rewritten when its stored form changes (not, for example, a
 * value below min_size, stored plain before and after).
 */
static HeapTuple
recompress_reform_cx(Relation NewHeap, Datum *values, bool *isnull,
					 const Datum *stored, const bool *stored_nulls, bool live,
					 void *arg)
{
	LeafState  *st = (LeafState *) arg;
	TupleDesc	desc = RelationGetDescr(NewHeap);
	HeapTuple	tuple = cx_encode_row(NewHeap, st->settings, values, isnull, NULL,
									  stored, stored_nulls, HEAP_INSERT_NO_LOGICAL);
	/* the arrays of the pre-check, idle during the copy */
	Datum	   *newvals = st->values;
	bool	   *newnulls = st->isnull;
	int64		rewritten_before = st->rewritten;

	heap_deform_tuple(tuple, desc, newvals, newnulls);
	for (int i = 0; i < desc->natts; i++)
	{
		TargetColumn *tc = st->byattno[i];

		if (tc == NULL || newnulls[i] || stored_nulls[i] ||
			!stored_differs(stored[i], newvals[i]))
			continue;
		st->rewritten++;
		if (live)
			tc->rewritten++;
	}
	if (st->rewritten != rewritten_before)
		pgstat_progress_update_param(CX_PROGRESS_VALUES_REWRITTEN, st->rewritten);
	return tuple;
}

static void recompress_leaf_as_owner(Relation rel, TargetColumn *targets, int ntargets,
									 int leafno, const CxRecompressRequest *req);

/*
 * Rewrite one leaf (locked AccessExclusive by the caller) if any of its
 * visible values needs a new method, as its owner: the indexes rebuilt
 * evaluate the owner's expressions and predicates, which must not run with
 * the caller's rights (as core's cluster_rel(); see cx_owner_scope_enter()).
 */
static void
recompress_leaf(Oid relid, TargetColumn *targets, int ntargets, int leafno,
				const CxRecompressRequest *req)
{
	Relation	rel = table_open(relid, NoLock);
	CxOwnerScope owner = {0};

	cx_owner_scope_enter(&owner, rel->rd_rel->relowner);
	recompress_leaf_as_owner(rel, targets, ntargets, leafno, req);
	cx_owner_scope_leave(&owner);
}

/* recompress_leaf(), once the owner: closes rel. */
static void
recompress_leaf_as_owner(Relation rel, TargetColumn *targets, int ntargets, int leafno,
						 const CxRecompressRequest *req)
{
	Oid			relid = RelationGetRelid(rel);
	bool		is_cx = cx_is_compressx_relation(rel);
	TupleDesc	tupdesc = RelationGetDescr(rel);
	LeafState	st;
	Oid			OIDNewHeap;
	Relation	NewHeap;
	TransactionId OldestXmin,
				FreezeXid;
	MultiXactId OldestMxact,
				MultiXactCutoff;
	double		num_tuples = 0;
	double		tups_vacuumed = 0;
	double		tups_recently_dead = 0;
	char		relpersistence = rel->rd_rel->relpersistence;
	bool		swap_toast_by_content;
	int64	   *before_leaf;
	TargetColumn *plain_leaf;	/* the targets' counts as the leaf began */
	HeapTuple	reltup;
	Relation	relRelation;
	Form_pg_class relform;
	CxPendingSettings *pending = NULL;
	Bitmapset  *targeted = NULL;

	pgstat_progress_start_command(CX_PROGRESS_COMMAND, relid);
	{
		const int	idx[] = {CX_PROGRESS_CLUSTER_COMMAND, CX_PROGRESS_LEAF_NUMBER,
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

	/*
	 * Step 2 happens before make_new_heap so the new heap inherits it: heap
	 * columns' attcompression, compressx columns' settings.
	 */
	if (!is_cx)
	{
		st.toast_target = RelationGetToastTupleTarget(rel, TOAST_TUPLE_TARGET);
		cx_set_column_compression(relid, targets, ntargets);
		for (int t = 0; t < ntargets; t++)
			targets[t].target = cx_stored_method_of_char(targets[t].method);
	}
	else
	{
		if (req->codec)
		{
			/*
			 * Each setting's trigger may change attcompression (the mirror,
			 * catalog/attcompression.c), and the next statement's
			 * invalidations replace the descriptor: read no field of it here.
			 */
			int			natts = tupdesc->natts;

			for (int i = 0; i < natts; i++)
				if (st.byattno[i])
					cx_store_column_setting(relid, st.byattno[i]->name, i + 1,
											req->codec, req->level_isnull,
											req->level, true, 0, true);
			CommandCounterIncrement();
			tupdesc = RelationGetDescr(rel);	/* see below */
		}
		st.settings = palloc(sizeof(CxColumnSetting) * Max(tupdesc->natts, 1));
		cx_resolve_settings(rel, st.settings);
		for (int i = 0; i < tupdesc->natts; i++)
			if (st.byattno[i])
				st.byattno[i]->target = cx_stored_method_of_setting(&st.settings[i]);
		st.force = req->codec != NULL && !req->level_isnull;

		/*
		 * Stored forms tell neither the level nor (without reading TOAST
		 * data, which the look below cannot) the dictionary of a value: a
		 * column whose setting changed since its last rewrite has every
		 * compressed value re-encoded (catalog/generation.c).  Before
		 * 0.5.0's schema, every value of a column with a dictionary.
		 */
		pending = cx_pending_settings(relid);
		st.pending = palloc0(sizeof(bool) * Max(tupdesc->natts, 1));
		for (int i = 0; i < tupdesc->natts; i++)
			if (st.byattno[i])
			{
				st.pending[i] = cx_setting_pending(pending, i + 1);
				if (pending == NULL && st.settings[i].dict_id != 0 &&
					!OidIsValid(cx_extension_table_oid("settings_applied")))
					st.force = true;
				targeted = bms_add_member(targeted, i + 1);
			}
	}

	/*
	 * Step 2's invalidations rebuilt the relcache entry: the descriptor read
	 * above may have been freed (a session that has the row type cached).
	 */
	tupdesc = RelationGetDescr(rel);
	st.tupdesc = tupdesc;

	/*
	 * Step 3: anything to do?  Read with a snapshot taken now, after the
	 * lock: the statement's own may predate rows committed while this waited
	 * for the lock.
	 */
	before_leaf = palloc(sizeof(int64) * Max(ntargets, 1));
	plain_leaf = palloc(sizeof(TargetColumn) * Max(ntargets, 1));
	for (int t = 0; t < ntargets; t++)
	{
		before_leaf[t] = targets[t].bytes_before;
		plain_leaf[t] = targets[t];
	}
	visit_as_of_now(rel, &st);
	if (st.needs_rewrite == 0)
	{
		/* nothing changes: this leaf's stored sizes stay */
		for (int t = 0; t < ntargets; t++)
			targets[t].bytes_after += targets[t].bytes_before - before_leaf[t];
		/* the target columns' values are as their settings say */
		if (is_cx && pending)
			cx_mark_settings_applied(relid, pending, targeted);
		table_close(rel, NoLock);
		pgstat_progress_end_command();
		return;
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

	/*
	 * As CLUSTER does: TOAST pointers written into the new heap name the old
	 * TOAST relation, which receives the new TOAST data when the files are
	 * swapped by content; toast_save_datum then keeps the value ids of
	 * values carried over, and writes a value shared by several versions of
	 * a row once.
	 */
	swap_toast_by_content = OidIsValid(rel->rd_rel->reltoastrelid) &&
		OidIsValid(NewHeap->rd_rel->reltoastrelid);
	if (swap_toast_by_content)
		NewHeap->rd_toastoid = rel->rd_rel->reltoastrelid;

	cx_rewrite_copy(rel, NewHeap, NULL, false, OldestXmin, FreezeXid,
					MultiXactCutoff,
					is_cx ? recompress_reform_cx : recompress_reform, &st,
					&num_tuples, &tups_vacuumed, &tups_recently_dead);
	NewHeap->rd_toastoid = InvalidOid;

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
	cx_finish_heap_swap(relid, OIDNewHeap, false, swap_toast_by_content, false, true,
					 FreezeXid, MultiXactCutoff, relpersistence);

	/* the sizes the rewritten table stores */
	rel = table_open(relid, NoLock);
	/* what stays uncompressed is counted on the rewritten table */
	for (int t = 0; t < ntargets; t++)
	{
		targets[t].plain_values = plain_leaf[t].plain_values;
		targets[t].plain_bytes = plain_leaf[t].plain_bytes;
	}
	st.rewritten_table = true;
	visit_as_of_now(rel, &st);
	table_close(rel, NoLock);

	/* every row was encoded afresh to its columns' settings */
	if (is_cx)
		cx_mark_settings_applied(relid, pending, NULL);

	pgstat_progress_end_command();
}

/*
 * Resolve the columns argument against the parent relation into targets.
 * columns NULL: every column whose type supports compression.
 */
TargetColumn *
cx_recompress_resolve_targets(Relation rel, ArrayType *columns, char method,
							  int *ntargets)
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

void
cx_recompress_check_owner(Oid relid)
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
 * Parse the codec and level arguments (valid for some access method).
 */
void
cx_recompress_parse_request(bool codec_isnull, text *codec_text,
							bool level_isnull, int level,
							CxRecompressRequest *req)
{
	req->codec = NULL;
	req->level_isnull = level_isnull;
	req->level = level;
	if (codec_isnull)
	{
		if (!level_isnull)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a level needs a codec"),
					 errhint("Name the codec whose level you are setting.")));
		return;
	}
	req->codec = cx_codec_by_name_or_error(text_to_cstring(codec_text));
	(void) cx_codec_resolve_level(req->codec, level_isnull, level);
	cx_codec_check_storable(req->codec);
}

/*
 * Check the request suits a leaf's access method.  Heap tables store only
 * pglz and lz4, at core's fixed settings.
 */
void
cx_recompress_check_request(Relation rel, const CxRecompressRequest *req)
{
	if (!RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		return;
	cx_recompress_check_request_for(rel, req, !cx_is_compressx_relation(rel));
}

/* The same, for the table stored by heap (heap_target) or by compressx. */
void
cx_recompress_check_request_for(Relation rel, const CxRecompressRequest *req,
								bool heap_target)
{
	if (!heap_target || req->codec == NULL)
		return;
	if (req->codec->id == CX_CODEC_ZSTD)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("heap table \"%s\" cannot store zstd values",
						RelationGetRelationName(rel)),
				 errdetail("PostgreSQL's heap reads only pglz and lz4 compressed values."),
				 errhint("Use codec pglz or lz4, or first move the table to the compressx access method: ALTER TABLE %s SET ACCESS METHOD compressx.",
						 quote_identifier(RelationGetRelationName(rel)))));
	if (req->codec->id == CX_CODEC_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("heap table \"%s\" cannot be recompressed with codec \"none\"",
						RelationGetRelationName(rel)),
				 errhint("Use codec pglz or lz4.")));
	if (!req->level_isnull)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("heap table \"%s\" does not support compression levels",
						RelationGetRelationName(rel)),
				 errdetail("PostgreSQL's heap compresses %s with fixed settings.",
						   req->codec->name),
				 errhint("Pass NULL as the level, or use the compressx access method.")));
}

/* Core method char for heap columns: pglz/lz4 or invalid (column's own). */
char
cx_recompress_heap_method(const CxRecompressRequest *req)
{
	if (req->codec && req->codec->id == CX_CODEC_LZ4)
		return TOAST_LZ4_COMPRESSION;
	if (req->codec && req->codec->id == CX_CODEC_PGLZ)
		return TOAST_PGLZ_COMPRESSION;
	return InvalidCompressionMethod;
}

/*
 * After recompress_table: when, in its heap leaves, most of the target columns' bytes are values stored
 * inline without compression, say why they stay so and what would compress
 * them.  Heap's toaster compresses a value only while its row is larger than
 * the table's toast_tuple_target (about 2 kB), whatever the method.
 */
static void
notice_left_plain(Oid relid, const TargetColumn *targets, int ntargets)
{
	int64		plain_values = 0;
	int64		plain_bytes = 0;
	int64		all_bytes = 0;
	char	   *relname;

	for (int t = 0; t < ntargets; t++)
	{
		plain_values += targets[t].plain_values;
		plain_bytes += targets[t].plain_bytes;
		all_bytes += targets[t].bytes_before;
	}
	if (plain_values == 0 || plain_bytes * 2 < all_bytes)
		return;
	relname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
										 get_rel_name(relid));
	ereport(NOTICE,
			(errmsg("%lld values of \"%s\" (%lld bytes) stay stored without compression",
					(long long) plain_values, get_rel_name(relid), (long long) plain_bytes),
			 errdetail("Heap compresses a value only when its row is larger than the table's toast_tuple_target (%d bytes by default); these values are in smaller rows.",
					   (int) TOAST_TUPLE_TARGET),
			 errhint("The compressx access method compresses values of any size: CALL compressx.recompress_online('%s', 'zstd', access_method => 'compressx') moves the table online. SELECT * FROM compressx.advise('%s') estimates what each codec would store.",
					 relname, relname)));
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
	CxRecompressRequest req;
	ArrayType  *columns;
	Relation	rel;
	TargetColumn *targets;
	int			ntargets;
	List	   *rels;
	ListCell   *lc;
	int			leafno = 0;

	cx_prevent_if_read_only("recompress_table", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	cx_recompress_parse_request(PG_ARGISNULL(1), PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1),
				  PG_ARGISNULL(2), PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2), &req);
	columns = PG_ARGISNULL(3) ? NULL : PG_GETARG_ARRAYTYPE_P(3);

	InitMaterializedSRF(fcinfo, 0);

	/* Step 1: ownership before locking, then lock and look again. */
	cx_recompress_check_owner(relid);
	cx_check_not_own_table(relid);
	/* a Citus table: every shard, then the table here, then the other nodes' settings */
	if (cx_citus_fan_out_srf(fcinfo, relid, "citus_recompress_table"))
	{
		foreach(lc, find_all_inheritors(relid, NoLock, NULL))
			cx_citus_push(lfirst_oid(lc));
		return (Datum) 0;
	}
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

	cx_recompress_check_request(rel, &req);
	targets = cx_recompress_resolve_targets(rel, columns, cx_recompress_heap_method(&req), &ntargets);

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
		cx_recompress_check_owner(childid);
		child = table_open(childid, NoLock);
		cx_check_table_relkind(child);
		cx_recompress_check_request(child, &req);
		table_close(child, NoLock);
	}

	/* Only recompress_leaf() may hold the relation open (CheckTableNotInUse). */
	table_close(rel, NoLock);

	foreach(lc, rels)
	{
		Oid			childid = lfirst_oid(lc);

		if (RELKIND_HAS_STORAGE(get_rel_relkind(childid)))
			recompress_leaf(childid, targets, ntargets, ++leafno, &req);
		else
			cx_set_column_compression(childid, targets, ntargets);
	}

	notice_left_plain(relid, targets, ntargets);

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
