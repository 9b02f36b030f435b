/*-------------------------------------------------------------------------
 *
 * auto.c
 *	  Automatic zstd dictionaries (dictionary => 'auto'): checking and
 *	  training a column, compressx.auto_dictionary_run(), and the
 *	  set_column_codec() of 0.4.0, which takes the dictionary argument.
 *
 * Checking one column, in one transaction, as the table's owner, under
 * ShareUpdateExclusiveLock (what train_dictionary takes; writers are not
 * blocked):
 *
 *	1. Sample: the column's values in a block sample of about
 *	   compressx.auto_dictionary_sample_rows rows visible to the snapshot,
 *	   values of 1 to 128 kB only (their raw size is read from the stored
 *	   form; larger ones gain little from a dictionary and would make memory
 *	   unbounded), at most 8 MB of them.  Every fourth value is kept apart
 *	   for measuring ("held-out"), the others are for training.
 *	2. Fewer than compressx.auto_dictionary_min_values values, unless they
 *	   are at least CX_AUTO_FLOOR_VALUES (100) holding
 *	   compressx.auto_dictionary_min_bytes (1 MB): no dictionary yet, and
 *	   the column's state says how many there are.  The byte rule is for
 *	   large values (documents of 5-15 kB make 600-1600 values in the 8 MB
 *	   of the sample, short of the 1000 a count asks for), whose
 *	   dictionary is then decided by its measured gain (step 3) as for
 *	   small values; the floor keeps small tables from training.
 *	3. No dictionary yet: train one (compressx.auto_dictionary_size bytes at
 *	   most) and measure the stored ratio of the held-out values with it and
 *	   without one, at the column's level, headers included, as compressx
 *	   would store them.  It is made the column's only when it is better by
 *	   compressx.auto_dictionary_margin percent (default 10); otherwise the
 *	   state explains why there is none (zstd could not train one on these
 *	   values, or it would not help: values too few, too short or too
 *	   uniform).
 *	4. A dictionary already: its ratio on the held-out values is compared
 *	   with the baseline, the ratio measured when it was trained (or at the
 *	   last check that kept it after trying a new one).  Within the margin:
 *	   kept.  Fallen by more than the margin ("drift"): a candidate is
 *	   trained on this sample and replaces the dictionary only if it does
 *	   better by the margin on the same held-out values; otherwise the
 *	   dictionary is kept and its ratio becomes the baseline, so a column
 *	   whose values merely grew less compressible trains no candidate at
 *	   every check.
 *
 * Costs per check: reading the sample (at most 8 MB of values, decoded),
 * compressing the held-out quarter two or three times, and, only for a
 * first dictionary or on drift, one zstd training of at most 6 MB (about
 * 0.4 s; zstd's trainer cannot be interrupted, everything else checks for
 * interrupts).  Memory: the sample, its stored copies and one
 * dictionary, about 20 MB at most, in a context of the call.
 *
 * A new dictionary is a row of compressx.dictionaries (auto = true,
 * trained_ratio) and the column's dict_id: values written from then on
 * name it; values written before keep naming the old one until a rewrite
 * (VACUUM FULL, CLUSTER, recompress_table, recompress_online, UPDATE of the
 * value) re-encodes them.  The old one is deleted by prune.c once no
 * stored value names it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_inherits.h"
#include "commands/event_trigger.h"
#include "funcapi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "citus/citus.h"
#include "catalog/dict.h"
#include "catalog/dict_auto.h"
#include "catalog/relation.h"
#include "dictionaries/auto.h"
#include "dictionaries/prune.h"
#include "dictionaries/state.h"
#include "sql/inspect.h"
#include "sql/progress.h"
#include "storage/format.h"

PG_FUNCTION_INFO_V1(compressx_set_column_codec_dictionary);
PG_FUNCTION_INFO_V1(compressx_auto_dictionary_run);
PG_FUNCTION_INFO_V1(compressx_on_readability_change);

/* A sample of one column: copies of stored values, then their plain forms. */
typedef struct AutoSample
{
	AttrNumber	attnum;
	TupleDesc	desc;
	int			max_rows;		/* rows to look at */
	int			rows;			/* rows looked at */
	int64		bytes;			/* raw bytes of the values copied */
	int			too_large;		/* values left out for their size */
	List	   *stored;			/* copies of stored values */
} AutoSample;

/*
 * Raw size of a stored value, from its header (inline, compressed, or
 * either kind of TOAST pointer), without reading TOAST data.
 */
static int64
raw_size(const struct varlena *v)
{
	if (VARATT_IS_EXTERNAL_ONDISK(v))
	{
		struct varatt_external ptr;

		VARATT_EXTERNAL_GET_POINTER(ptr, v);
		return ptr.va_rawsize - VARHDRSZ;
	}
	if (VARATT_IS_EXTERNAL(v))
		return -1;
	if (VARATT_IS_4B_C(v))
		return VARDATA_COMPRESSED_GET_EXTSIZE(v);
	return VARSIZE_ANY_EXHDR(v);
}

/* (under a buffer lock: copies bytes, allocates, nothing else) */
static void
sample_visitor(HeapTuple tuple, void *arg)
{
	AutoSample *st = (AutoSample *) arg;
	bool		isnull;
	Datum		d;
	const struct varlena *v;
	int64		raw;
	struct varlena *copy;

	if (st->rows >= st->max_rows || st->bytes >= CX_SAMPLE_TOTAL_MAX)
		return;
	st->rows++;
	d = heap_getattr(tuple, st->attnum, st->desc, &isnull);
	if (isnull)
		return;
	v = (const struct varlena *) DatumGetPointer(d);
	raw = raw_size(v);
	if (raw < 0 || raw > CX_SAMPLE_VALUE_MAX)
	{
		st->too_large++;
		return;
	}
	if (raw == 0)
		return;
	copy = palloc(VARSIZE_ANY(v));
	memcpy(copy, v, VARSIZE_ANY(v));
	st->stored = lappend(st->stored, copy);
	st->bytes += raw;
}

/*
 * Compressed ratio of values with zstd at level, with the digested
 * dictionary cdict or none, as compressx would store them: header
 * included, a value that would not shrink at its plain size.
 */
static double
measure(List *values, int level, const void *cdict)
{
	const CxCodec *zstd = cx_codec_by_id(CX_CODEC_ZSTD);
	int			header = cdict ? CX_DICT_HDRSZ : CX_INLINE_HDRSZ;
	double		raw = 0;
	double		stored = 0;
	char	   *buf = NULL;
	int32		cap = 0;
	ListCell   *lc;

	foreach(lc, values)
	{
		struct varlena *v = (struct varlena *) lfirst(lc);
		int32		rawlen = VARSIZE_ANY_EXHDR(v);
		int32		need = cx_codec_bound(zstd, rawlen);
		int32		len;

		CHECK_FOR_INTERRUPTS();
		cx_autodict_leave_if_wanted();
		cx_progress_advance(1);
		if (need > cap)
		{
			if (buf)
				pfree(buf);
			cap = Max(need, 64 * 1024);
			buf = palloc(cap);
		}
		len = cx_codec_compress(zstd, level, cdict, VARDATA_ANY(v), rawlen, buf, cap);
		raw += rawlen;
		if (len < 0 || len + header >= rawlen + VARHDRSZ)
			stored += rawlen + VARHDRSZ;
		else
			stored += len + header;
	}
	if (buf)
		pfree(buf);
	return stored > 0 ? raw / stored : 1.0;
}

/* measure() with a dictionary not yet stored; NULL dict: none. */
static double
measure_with(List *values, int level, bytea *dict)
{
	void	   *cdict;
	double		ratio;

	if (dict == NULL)
		return measure(values, level, NULL);
	cdict = cx_dict_digest(dict, level, true);
	if (cdict == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not digest a trained zstd dictionary.")));
	PG_TRY();
	{
		ratio = measure(values, level, cdict);
	}
	PG_FINALLY();
	{
		cx_dict_free_digested(cdict, NULL);
	}
	PG_END_TRY();
	return ratio;
}

/*
 * The ratio to hold the column's current dictionary dict_id to: the
 * state's baseline when it was measured for that dictionary, else the
 * ratio recorded when it was trained; < 0 when neither is known (a
 * dictionary of train_dictionary(), or state lost in a dump).
 */
static double
baseline_of(Oid relid, AttrNumber attnum, int32 dict_id)
{
	Oid			types[3] = {OIDOID, INT2OID, INT4OID};
	Datum		values[3];
	text	   *t;

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = Int32GetDatum(dict_id);
	t = cx_settings_exec_text("SELECT COALESCE("
							  "(SELECT s.ratio_baseline FROM compressx.auto_dictionary_state s "
							  " WHERE s.relid = $1 AND s.attnum = $2 AND s.baseline_dict = $3), "
							  "(SELECT d.trained_ratio FROM compressx.dictionaries d "
							  " WHERE d.dict_id = $3 AND d.relid = $1))::pg_catalog.text",
							  3, types, values, NULL);
	return t ? DatumGetFloat8(DirectFunctionCall1(float8in, CStringGetDatum(text_to_cstring(t)))) : -1;
}

/*
 * Store dictionary dict, trained for column attnum (attname) of relid, and
 * make it the column's.  Returns its id.
 */
static int32
store_dictionary(Oid relid, const char *attname, AttrNumber attnum, bytea *dict,
				 int32 nsamples, int64 nbytes, double ratio)
{
	Oid			types[7] = {OIDOID, NAMEOID, BYTEAOID, INT4OID, INT8OID, INT2OID, FLOAT8OID};
	Datum		values[7];
	NameData	name;
	int32		dict_id;

	namestrcpy(&name, attname);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = NameGetDatum(&name);
	values[2] = PointerGetDatum(dict);
	values[3] = Int32GetDatum(nsamples);
	values[4] = Int64GetDatum(nbytes);
	values[5] = Int16GetDatum(attnum);
	values[6] = Float8GetDatum(ratio);
	dict_id = cx_settings_exec("WITH d AS (INSERT INTO compressx.dictionaries "
							   "(relid, attname, dict, sample_values, sample_bytes, auto, trained_ratio) "
							   "VALUES ($1::pg_catalog.oid::pg_catalog.regclass, $2, $3, $4, $5, true, $7) "
							   "RETURNING dict_id), "
							   "u AS (UPDATE compressx.column_settings s SET dict_id = d.dict_id FROM d "
							   "WHERE s.relid = $1 AND s.attnum = $6 RETURNING 1) "
							   "SELECT d.dict_id FROM d, u",
							   7, types, values, NULL);
	if (dict_id <= 0)
		elog(ERROR, "could not store the zstd dictionary of column \"%s\" of \"%s\"",
			 attname, get_rel_name(relid));
	return dict_id;
}

/*
 * A partition whose automatic setting comes from an ancestor's row gets a
 * row of its own, a copy of the nearest such ancestor's: its dictionaries
 * are its own, and so are its state and its row of auto_dictionaries.
 */
static void
own_setting_row(Oid relid, const char *attname, AttrNumber attnum)
{
	Oid			types[3] = {OIDOID, NAMEOID, INT2OID};
	Datum		values[3];
	NameData	name;

	if (!get_rel_relispartition(relid))
		return;
	namestrcpy(&name, attname);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = NameGetDatum(&name);
	values[2] = Int16GetDatum(attnum);
	/* state left by a dropped table with the same OID is not its */
	cx_settings_exec("WITH i AS (INSERT INTO compressx.column_settings "
					 "(relid, attname, attnum, codec, level, min_size, auto_dictionary) "
					 "SELECT $1::pg_catalog.oid::pg_catalog.regclass, $2, $3, s.codec, s.level, "
					 "s.min_size, true "
					 "FROM pg_catalog.pg_partition_ancestors($1::pg_catalog.oid::pg_catalog.regclass) "
					 "WITH ORDINALITY AS a(relid, n) "
					 "JOIN compressx.column_settings s ON s.relid::pg_catalog.oid = a.relid::pg_catalog.oid "
					 "AND s.attname = $2 AND s.auto_dictionary "
					 "WHERE NOT EXISTS (SELECT FROM compressx.column_settings x "
					 "WHERE x.relid = $1 AND x.attnum = $3) "
					 "ORDER BY a.n LIMIT 1 RETURNING attnum) "
					 "DELETE FROM compressx.auto_dictionary_state st USING i "
					 "WHERE st.relid = $1 AND st.attnum = i.attnum",
					 3, types, values, NULL);
}

/*
 * Steps 1 to 4 of the file's comment for column attnum of rel, whose
 * setting s has dict_auto; records the column's state.  Work memory lives
 * in a context of its own.
 */
static CxAutoResult *
check_column(Relation rel, AttrNumber attnum, const CxColumnSetting *s)
{
	Oid			relid = RelationGetRelid(rel);
	char	   *attname = NameStr(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attname);
	double		margin = cx_auto_margin / 100.0;
	MemoryContext work = AllocSetContextCreate(CurrentMemoryContext,
											   "compressx auto dictionary",
											   ALLOCSET_DEFAULT_SIZES);
	MemoryContext outer = MemoryContextSwitchTo(work);
	AutoSample	st = {0};
	List	   *train = NIL;
	List	   *heldout = NIL;
	ListCell   *lc;
	int			nvalues;
	int			i = 0;
	bytea	   *dict;
	int32		nsamples;
	int64		nbytes;
	const char *error = NULL;
	const char *action;
	const char *state;
	char	   *message;
	int32		dict_id = s->dict_id;
	double		ratio_now = -1;
	double		baseline = -1;

	own_setting_row(relid, attname, attnum);
	cx_progress_begin(relid, CX_OP_AUTO_DICTIONARY);

	/* 1. the sample */
	st.attnum = attnum;
	st.desc = RelationGetDescr(rel);
	st.max_rows = Max(cx_auto_sample_rows, cx_auto_min_values);
	cx_progress_phase(CX_PHASE_SAMPLING, st.max_rows);
	cx_visit_tuples(rel, GetActiveSnapshot(), st.max_rows, sample_visitor, &st);
	cx_progress_set_done(st.rows);
	cx_progress_phase(CX_PHASE_READING, list_length(st.stored));
	foreach(lc, st.stored)
	{
		struct varlena *v = (struct varlena *) lfirst(lc);
		struct varlena *plain = cx_plain_value(v, relid, attname);

		CHECK_FOR_INTERRUPTS();
		cx_progress_advance(1);
		cx_autodict_leave_if_wanted();
		if (i++ % 4 == 3)
			heldout = lappend(heldout, plain);
		else
			train = lappend(train, plain);
	}
	nvalues = list_length(train) + list_length(heldout);

	/* a dictionary that is gone (see cx_dict_cdict) counts as none */
	if (dict_id != 0 && cx_dict_cdict(dict_id, s->level) == NULL)
		dict_id = 0;

	/*
	 * 2. enough values?  Either compressx.auto_dictionary_min_values of
	 * them, or compressx.auto_dictionary_min_bytes in at least
	 * CX_AUTO_FLOOR_VALUES: large values never make the count in a sample
	 * of 8 MB, and whether a dictionary pays for them is for the
	 * measurement of step 3 to say, not for a count.
	 */
	if (nvalues < cx_auto_min_values &&
		(nvalues < CX_AUTO_FLOOR_VALUES || st.bytes < (int64) cx_auto_min_kb * 1024))
	{
		action = dict_id ? "kept" : "waiting";
		state = dict_id ? "active" : "waiting";
		message = psprintf("Not enough values%s: %d of %d (compressx.auto_dictionary_min_values), in a sample of %d rows; they hold %lld kB, and %d values or more that hold %d kB (compressx.auto_dictionary_min_bytes) would do too.",
						   dict_id ? " to check the dictionary" : "",
						   nvalues, cx_auto_min_values, st.rows,
						   (long long) ((st.bytes + 1023) / 1024), CX_AUTO_FLOOR_VALUES,
						   cx_auto_min_kb);
		if (st.too_large > 0)
			message = psprintf("%s %d values larger than 128 kB were left out: a dictionary helps small values.",
							   message, st.too_large);
		if (st.bytes >= CX_SAMPLE_TOTAL_MAX)
			message = psprintf("%s The sample stopped at 8 MB of values: for values this large, lower compressx.auto_dictionary_min_values.",
							   message);
		if (dict_id)
			baseline = baseline_of(relid, attnum, dict_id);
	}
	else if (dict_id == 0)
	{
		/* 3. a first dictionary */
		double		without;

		cx_progress_phase(CX_PHASE_MEASURING, list_length(heldout));
		without = measure(heldout, s->level, NULL);
		cx_progress_phase(CX_PHASE_TRAINING, 0);
		dict = cx_dict_train(train, cx_auto_dict_size, &nsamples, &nbytes, &error);
		state = "waiting";
		action = "waiting";
		if (dict == NULL)
			message = psprintf("No dictionary: zstd could not train one on %d values: %s. The values are too uniform, too few or too short for a dictionary.",
							   list_length(train), error);
		else
		{
			double		with;

			cx_progress_phase(CX_PHASE_MEASURING, list_length(heldout));
			with = measure_with(heldout, s->level, dict);

			if (with < without * (1 + margin))
				message = psprintf("No dictionary: one would not help enough, %.2fx with it and %.2fx without (it must do %d%% better). The values are too uniform or too varied for a dictionary.",
								   with, without, cx_auto_margin);
			else
			{
				dict_id = store_dictionary(relid, attname, attnum, dict, nsamples, nbytes, with);
				state = "active";
				action = "trained";
				baseline = with;
				message = psprintf("Trained dictionary %d on %d values: %.2fx with it, %.2fx without.",
								   dict_id, nsamples, with, without);
				ratio_now = with;
			}
		}
	}
	else
	{
		/* 4. a dictionary: kept, or replaced by a better one */
		const void *cdict = cx_dict_cdict(dict_id, s->level);
		double		current;

		cx_progress_phase(CX_PHASE_MEASURING, list_length(heldout));
		current = measure(heldout, s->level, cdict);

		state = "active";
		action = "kept";
		ratio_now = current;
		baseline = baseline_of(relid, attnum, dict_id);
		if (baseline >= 0 && current >= baseline * (1 - margin))
			message = psprintf("Dictionary %d: %.2fx on the sampled values, within %d%% of its baseline %.2fx.",
							   dict_id, current, cx_auto_margin, baseline);
		else
		{
			cx_progress_phase(CX_PHASE_TRAINING, 0);
			dict = cx_dict_train(train, cx_auto_dict_size, &nsamples, &nbytes, &error);
			if (dict == NULL)
			{
				message = psprintf("Dictionary %d: %.2fx on the sampled values%s; zstd could not train a new one: %s.",
								   dict_id, current,
								   baseline >= 0 ? psprintf(", down from %.2fx", baseline) : "",
								   error);
				baseline = current;
			}
			else
			{
				double		candidate;

				cx_progress_phase(CX_PHASE_MEASURING, list_length(heldout));
				candidate = measure_with(heldout, s->level, dict);

				if (candidate < current * (1 + margin))
				{
					message = psprintf("Dictionary %d: %.2fx on the sampled values%s; a new one would not do %d%% better (%.2fx).",
									   dict_id, current,
									   baseline >= 0 ? psprintf(", down from %.2fx", baseline) : "",
									   cx_auto_margin, candidate);
					baseline = current;
				}
				else
				{
					int32		old_id = dict_id;

					dict_id = store_dictionary(relid, attname, attnum, dict, nsamples, nbytes,
											   candidate);
					action = "retrained";
					message = psprintf("Dictionary %d replaces dictionary %d: %.2fx instead of %.2fx%s. Values written before keep dictionary %d until they are rewritten.",
									   dict_id, old_id, candidate, current,
									   baseline >= 0 ? psprintf(" (%.2fx when it was measured before)", baseline) : "",
									   old_id);
					baseline = candidate;
					ratio_now = candidate;
				}
			}
		}
	}

	cx_progress_end();
	cx_autodict_record(relid, attnum, state, nvalues, action, message, ratio_now, baseline);
	MemoryContextSwitchTo(outer);
	message = pstrdup(message);
	MemoryContextDelete(work);
	return cx_autodict_result(relid, attname, action, dict_id, message);
}

/*
 * Why the current user (the table's owner, or the role calling
 * auto_dictionary_run) may not train on rel's rows, or NULL.  Training
 * reads every row, and a dictionary holds pieces of them: not for a role
 * without SELECT, nor where row-level security applies to it (FORCE ROW
 * LEVEL SECURITY for the owner).
 */
static char *
why_not_readable(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	char	   *role = GetUserNameFromId(GetUserId(), false);

	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return psprintf("Role \"%s\" may not read table \"%s\" (no SELECT privilege), so no dictionary is trained on its rows.",
						role, RelationGetRelationName(rel));
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		return psprintf("Row-level security applies to role \"%s\" on table \"%s\", so no dictionary is trained on its rows.",
						role, RelationGetRelationName(rel));
	return NULL;
}

bool
cx_autodict_owner_may_read(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		return true;			/* dropped: nothing to withdraw */
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return pg_class_aclcheck(relid, owner, ACL_SELECT) == ACLCHECK_OK &&
		check_enable_rls(relid, owner, true) != RLS_ENABLED;
}

/*
 * Column attnum of relid no longer names its automatic dictionary dict_id
 * (its table became unreadable in full by its owner, why_not_readable()
 * says why): new values are stored without it, and pruning (prune.c)
 * deletes it once no stored value names it.  Returns whether the column
 * named it (another session may have changed the setting).
 */
static bool
withdraw_dictionary(Oid relid, AttrNumber attnum, int32 dict_id)
{
	Oid			types[3] = {OIDOID, INT2OID, INT4OID};
	Datum		values[3];

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = Int32GetDatum(dict_id);
	return cx_settings_exec("WITH u AS (UPDATE compressx.column_settings s SET dict_id = NULL "
							"FROM compressx.dictionaries d "
							"WHERE s.relid = $1 AND s.attnum = $2 AND s.dict_id = $3 "
							"AND d.dict_id = s.dict_id AND d.auto RETURNING 1) "
							"SELECT pg_catalog.count(*)::int4 FROM u",
							3, types, values, NULL) > 0;
}

List *
cx_autodict_check(Oid relid, bool in_worker)
{
	List	   *results = NIL;
	Relation	rel;
	TupleDesc	desc;
	CxColumnSetting *settings;
	char	   *skip = NULL;
	bool		unreadable = false;

	if (in_worker)
	{
		if (!ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
			return list_make1(cx_autodict_result(relid, NULL, "skipped", 0,
										  pstrdup("The table is locked by another maintenance command; it is checked again later.")));
	}
	else
		LockRelationOid(relid, ShareUpdateExclusiveLock);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return NIL;				/* dropped meanwhile */
	cx_check_settings_target(relid);
	rel = table_open(relid, NoLock);
	desc = RelationGetDescr(rel);
	settings = palloc(sizeof(CxColumnSetting) * Max(desc->natts, 1));
	cx_resolve_settings(rel, settings);

	if (!RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		skip = pstrdup("The table has no storage; its partitions have dictionaries of their own.");
	else if (!cx_is_compressx_relation(rel))
		skip = psprintf("Table \"%s\" is not stored by the compressx access method yet.",
						RelationGetRelationName(rel));
	else if (cx_citus_is_table(relid))
		skip = pstrdup("Automatic dictionaries are not maintained for Citus tables.");
	else
	{
		skip = why_not_readable(rel);
		unreadable = (skip != NULL);
	}

	for (int i = 0; i < desc->natts; i++)
	{
		if (!settings[i].dict_auto || TupleDescAttr(desc, i)->attisdropped)
			continue;
		if (skip)
		{
			AttrNumber	attnum = TupleDescAttr(desc, i)->attnum;
			const char *action = "skipped";
			char	   *message = skip;
			int32		dict_id = settings[i].dict_id;

			/*
			 * A dictionary trained while the owner could read every row (a
			 * restore loads rows before its last pass revokes privileges
			 * and enables row-level security) is withdrawn.
			 */
			if (unreadable && dict_id != 0 && withdraw_dictionary(relid, attnum, dict_id))
			{
				action = "withdrawn";
				message = psprintf("%s Dictionary %d, trained while it could, is no longer the column's: new values are stored without it, and it is pruned once no stored value names it.",
								   skip, dict_id);
			}
			if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
				cx_autodict_record(relid, attnum, "skipped", -1, action, message, -1, -1);
			results = lappend(results,
							  cx_autodict_result(relid, NameStr(TupleDescAttr(desc, i)->attname),
										  action, dict_id, pstrdup(message)));
			continue;
		}
		results = lappend(results, check_column(rel, i + 1, &settings[i]));
	}
	table_close(rel, NoLock);
	return results;
}

/* The relations with storage of relid: itself, or its leaf partitions. */
static List *
tables_of(Oid relid)
{
	List	   *leaves = NIL;
	ListCell   *lc;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return list_make1_oid(relid);
	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
		if (RELKIND_HAS_STORAGE(get_rel_relkind(lfirst_oid(lc))))
			leaves = lappend_oid(leaves, lfirst_oid(lc));
	return leaves;
}

/* Whether relid has row-level security enabled. */
static bool
has_row_security(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		rls;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	rls = ((Form_pg_class) GETSTRUCT(tup))->relrowsecurity;
	ReleaseSysCache(tup);
	return rls;
}

/* Say what checking a column did, as a NOTICE (set_column_codec). */
static void
notice_result(const CxAutoResult *r)
{
	const char *table = get_rel_name(r->relid);

	if (r->column == NULL)
		ereport(NOTICE,
				(errmsg("table \"%s\" was not checked for automatic dictionaries", table),
				 errdetail("%s", r->message)));
	else if (strcmp(r->action, "trained") == 0 || strcmp(r->action, "retrained") == 0)
		ereport(NOTICE,
				(errmsg("column \"%s\" of relation \"%s\" has zstd dictionary %d",
						r->column, table, r->dict_id),
				 errdetail("%s", r->message)));
	else if (r->dict_id == 0)
		ereport(NOTICE,
				(errmsg("column \"%s\" of relation \"%s\" has no zstd dictionary yet",
						r->column, table),
				 errdetail("%s", r->message),
				 errhint("compressx trains one in the background once the column has enough values that a dictionary helps; compressx.auto_dictionaries shows the state.")));
	else
		ereport(NOTICE,
				(errmsg("column \"%s\" of relation \"%s\" keeps zstd dictionary %d",
						r->column, table, r->dict_id),
				 errdetail("%s", r->message)));
}

/*
 * compressx.set_column_codec(rel regclass, column_name name, codec text,
 *							  level int DEFAULT NULL, min_size int DEFAULT NULL,
 *							  dictionary text DEFAULT NULL)
 *
 * dictionary: NULL keeps the column's dictionary (and policy) as it is,
 * 'auto' has compressx train and replace it, 'none' stops using one.
 * With 'auto' the first check runs at once, on the table and each of its
 * partitions, and a NOTICE says what it did: a dictionary trained, or why
 * there is none yet.
 */
Datum
compressx_set_column_codec_dictionary(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *column;
	const CxCodec *codec;
	CxDictPolicy policy = CX_DICT_KEEP;
	List	   *rels;
	ListCell   *lc;

	cx_prevent_if_read_only("set_column_codec", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation, column and codec must not be null"),
				 errhint("Use compressx.reset_column_codec() to return a column to the defaults.")));
	relid = PG_GETARG_OID(0);
	column = NameStr(*PG_GETARG_NAME(1));
	codec = cx_codec_by_name_or_error(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	if (PG_NARGS() > 5 && !PG_ARGISNULL(5))
	{
		char	   *d = text_to_cstring(PG_GETARG_TEXT_PP(5));

		if (pg_strcasecmp(d, "auto") == 0)
			policy = CX_DICT_AUTO;
		else if (pg_strcasecmp(d, "none") == 0)
			policy = CX_DICT_NONE;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid dictionary \"%s\"", d),
					 errdetail("dictionary is 'auto' (compressx trains and replaces the column's zstd dictionary), 'none' (no dictionary) or NULL (the column's dictionary as it is)."),
					 errhint("Train a dictionary yourself with compressx.train_dictionary().")));
	}
	rels = cx_set_column_codec(relid, column, codec,
							   PG_ARGISNULL(3), PG_ARGISNULL(3) ? 0 : PG_GETARG_INT32(3),
							   PG_ARGISNULL(4), PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4),
							   policy);
	if (policy != CX_DICT_AUTO)
		PG_RETURN_VOID();

	/* see train_dictionary() */
	if (has_row_security(relid))
		ereport(WARNING,
				(errmsg("table \"%s\" has row-level security: dictionaries are trained on rows of every user",
						get_rel_name(relid)),
				 errdetail("Roles that may insert into column \"%s\" can learn about rows hidden from them from the stored size of the values they insert.",
						   column),
				 errhint("Use a dictionary only where every role that writes the column may read all of its rows; dictionary => 'none' stops using one.")));

	/* the first check, now: the new settings must be seen */
	CommandCounterIncrement();
	foreach(lc, rels)
	{
		ListCell   *rc;

		if (!RELKIND_HAS_STORAGE(get_rel_relkind(lfirst_oid(lc))))
			continue;
		foreach(rc, cx_autodict_check(lfirst_oid(lc), false))
		{
			CxAutoResult *r = (CxAutoResult *) lfirst(rc);

			if (r->column == NULL || strcmp(r->column, column) == 0)
				notice_result(r);
		}
	}
	PG_RETURN_VOID();
}

/*
 * compressx.auto_dictionary_run(rel regclass)
 *	  RETURNS TABLE (relation regclass, column_name name, action text,
 *					 dictionary int, message text)
 *
 * What the background worker does for a table, now, in the caller's
 * transaction: first prune the dictionaries no stored value names any more
 * (waiting for writers that may still use them, see prune.c), then
 * check every column with dictionary => 'auto'.  A partitioned table: each
 * partition (all pruned before any is checked).  Owner only.
 */
Datum
compressx_auto_dictionary_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	List	   *results = NIL;
	List	   *tables;
	ListCell   *lc;

	cx_prevent_if_read_only("auto_dictionary_run", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));
	InitMaterializedSRF(fcinfo, 0);
	if (!cx_autodict_installed())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("automatic dictionaries need compressx 0.4.0"),
				 errhint("ALTER EXTENSION compressx UPDATE")));
	cx_check_settings_target(relid);
	if (cx_citus_is_table(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("automatic dictionaries are not maintained for Citus table \"%s\"",
						get_rel_name(relid)),
				 errhint("Train one with compressx.train_dictionary().")));
	cx_autodict_forget_stale();
	/*
	 * Every prune first: a check that trains changes settings, after which
	 * this transaction prunes nothing (prune.c, step 1).
	 */
	tables = tables_of(relid);
	foreach(lc, tables)
		results = list_concat(results, cx_autodict_prune(lfirst_oid(lc), false));
	foreach(lc, tables)
		results = list_concat(results, cx_autodict_check(lfirst_oid(lc), false));
	if (results == NIL)
		ereport(NOTICE,
				(errmsg("no column of \"%s\" has dictionary => 'auto'", get_rel_name(relid)),
				 errhint("SELECT compressx.set_column_codec('%s', 'column', 'zstd', dictionary => 'auto');",
						 get_rel_name(relid))));
	foreach(lc, results)
	{
		CxAutoResult *r = (CxAutoResult *) lfirst(lc);
		Datum		values[5];
		bool		nulls[5] = {0};
		NameData	name;

		values[0] = ObjectIdGetDatum(r->relid);
		if (r->column)
		{
			namestrcpy(&name, r->column);
			values[1] = NameGetDatum(&name);
		}
		else
			nulls[1] = true;
		values[2] = CStringGetTextDatum(r->action);
		values[3] = Int32GetDatum(r->dict_id);
		nulls[3] = r->dict_id == 0;
		values[4] = CStringGetTextDatum(r->message);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * Event trigger on GRANT, REVOKE, ALTER TABLE and ALTER MATERIALIZED VIEW
 * (ddl_command_end): when a column names an automatic dictionary of a table
 * its owner may no longer read in full (privileges revoked, row-level
 * security forced, a new owner), start the worker when this transaction
 * commits: its check withdraws the dictionary (cx_autodict_check()) and
 * prunes it, at once rather than at the table's next write.  This is how a
 * dictionary trained while a restore had loaded the rows but not yet run
 * its last pass (GRANT/REVOKE, ENABLE ROW LEVEL SECURITY) goes.  Changes
 * that fire no event trigger (role membership, ALTER ROLE .. NOBYPASSRLS,
 * event triggers disabled) are caught by the next check of the table,
 * which the worker makes at its next write.
 */
Datum
compressx_on_readability_change(PG_FUNCTION_ARGS)
{
	text	   *relids;
	char	   *list;
	char	   *tok;
	char	   *save;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "compressx_on_readability_change: not called by event trigger manager");
	if (!cx_auto_worker)
		PG_RETURN_VOID();
	/*
	 * Of ALTER TABLE, only what can make a table unreadable to its owner:
	 * row-level security enabled or forced, another owner.  Any other
	 * subcommand reads nothing (and takes no lock on compressx's tables:
	 * core's alter_table test lists the locks ALTER TABLE .. CLUSTER ON
	 * takes).
	 */
	if (IsA(((EventTriggerData *) fcinfo->context)->parsetree, AlterTableStmt))
	{
		AlterTableStmt *stmt = (AlterTableStmt *) ((EventTriggerData *) fcinfo->context)->parsetree;
		bool		relevant = false;
		ListCell   *lc;

		foreach(lc, stmt->cmds)
		{
			AlterTableType t = castNode(AlterTableCmd, lfirst(lc))->subtype;

			if (t == AT_EnableRowSecurity || t == AT_ForceRowSecurity || t == AT_ChangeOwner)
				relevant = true;
		}
		if (!relevant)
			PG_RETURN_VOID();
	}
	relids = cx_settings_exec_text("SELECT pg_catalog.string_agg(DISTINCT s.relid::pg_catalog.oid::pg_catalog.text, ' ') "
								   "FROM compressx.column_settings s "
								   "JOIN compressx.dictionaries d ON d.dict_id = s.dict_id "
								   "WHERE s.auto_dictionary AND d.auto",
								   0, NULL, NULL, NULL);
	if (relids == NULL)
		PG_RETURN_VOID();
	list = text_to_cstring(relids);
	for (tok = strtok_r(list, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save))
	{
		Oid			relid = (Oid) strtoul(tok, NULL, 10);

		if (!cx_autodict_owner_may_read(relid))
		{
			cx_autodict_request_launch();
			break;
		}
	}
	PG_RETURN_VOID();
}
