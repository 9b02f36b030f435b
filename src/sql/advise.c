/*-------------------------------------------------------------------------
 *
 * advise.c
 *	  compressx.advise(): try every codec on a sample of a table's values.
 *
 * For each variable-length column, a sample of stored values is decoded to
 * plain bytes and compressed and decompressed with pglz, lz4 (levels 1 and
 * 9) and zstd (levels 1, 3, 9, 19), in memory, and with zstd 3 and lz4 1
 * each with a 16 kB dictionary trained on every other sampled value,
 * measured on the others (what compressx.train_dictionary() would give; no
 * row when the sample is too small to train on).  One row per column and candidate gives the
 * stored ratio (including each format's header), and compress and
 * decompress speed in MB of raw data per second.  Rule of the
 * recommendation, per column: the best ratio among candidates compressing
 * at least min_compress_mb_s; if none is that fast, the fastest one.
 *
 * Locking: AccessShareLock on the table; needs SELECT on it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "storage/codec.h"
#include "compat.h"
#include "catalog/dict.h"
#include "sql/dict_train.h"
#include "storage/format.h"
#include "sql/inspect.h"
#include "sql/citus_fanout.h"

PG_FUNCTION_INFO_V1(compressx_advise);

typedef struct Candidate
{
	CxCodecId	codec;
	int			level;			/* 0: the codec takes none */
	int			header;			/* stored header bytes per value */
	bool		dictionary;		/* with a trained dictionary */
} Candidate;

static const Candidate candidates[] = {
	{CX_CODEC_PGLZ, 0, VARHDRSZ_COMPRESSED, false},
	{CX_CODEC_LZ4, 1, VARHDRSZ_COMPRESSED, false},
	{CX_CODEC_LZ4, 9, VARHDRSZ_COMPRESSED, false},
	{CX_CODEC_ZSTD, 1, CX_INLINE_HDRSZ, false},
	{CX_CODEC_ZSTD, 3, CX_INLINE_HDRSZ, false},
	{CX_CODEC_ZSTD, 9, CX_INLINE_HDRSZ, false},
	{CX_CODEC_ZSTD, 19, CX_INLINE_HDRSZ, false},
	{CX_CODEC_ZSTD, 3, CX_DICT_HDRSZ, true},
	{CX_CODEC_LZ4, 1, VARHDRSZ_COMPRESSED + CX_LZ4DICT_BODY_HDRSZ, true},
};

/* Size of the dictionary the dictionary candidate trains. */
#define ADVISE_DICT_SIZE 16384
#define NCANDIDATES lengthof(candidates)

typedef struct Trial
{
	bool		done;
	double		raw;
	double		stored;
	double		compress_s;
	double		decompress_s;
} Trial;

/*
 * How much of a value the candidates compress: its first
 * ADVISE_VALUE_MAX bytes, the same bytes for every candidate.
 */
#define ADVISE_VALUE_MAX	(8 * 1024 * 1024)

static int32
advised_length(struct varlena *v)
{
	return Min(VARSIZE_ANY_EXHDR(v), ADVISE_VALUE_MAX);
}

/*
 * Compress and decompress every value with one candidate; values that do
 * not shrink count at their plain size, as compressx would store them.
 * cdict and ddict: the dictionary candidate's digested dictionary.
 */
static void
try_candidate(const Candidate *cand, List *values, void *cdict, void *ddict,
			  Trial *res)
{
	const CxCodec *codec = cx_codec_by_id(cand->codec);
	ListCell   *lc;
	instr_time	start,
				spent;
	int			n = list_length(values);
	char	  **outs = palloc0(sizeof(char *) * Max(n, 1));
	int32	   *outlens = palloc0(sizeof(int32) * Max(n, 1));
	int			i = 0;

	res->done = true;
	res->raw = 0;
	res->stored = 0;
	INSTR_TIME_SET_CURRENT(start);
	foreach(lc, values)
	{
		struct varlena *v = (struct varlena *) lfirst(lc);
		int32		rawlen = advised_length(v);
		int32		cap = cx_codec_bound(codec, rawlen);
		int32		len;

		CHECK_FOR_INTERRUPTS();
		outs[i] = palloc(cap);
		res->raw += rawlen;
		len = cx_codec_compress(codec, cand->level, cdict, VARDATA_ANY(v), rawlen, outs[i], cap);
		if (len < 0 || len + cand->header >= rawlen + VARHDRSZ)
		{
			outlens[i] = -1;	/* stored plain */
			res->stored += rawlen + VARHDRSZ;
		}
		else
		{
			outlens[i] = len;
			res->stored += len + cand->header;
		}
		i++;
	}
	INSTR_TIME_SET_CURRENT(spent);
	INSTR_TIME_SUBTRACT(spent, start);
	res->compress_s = INSTR_TIME_GET_DOUBLE(spent);

	i = 0;
	INSTR_TIME_SET_CURRENT(start);
	foreach(lc, values)
	{
		struct varlena *v = (struct varlena *) lfirst(lc);
		int32		rawlen = advised_length(v);
		char	   *dst;

		CHECK_FOR_INTERRUPTS();
		if (outlens[i] >= 0)
		{
			dst = palloc(Max(rawlen, 1));
			if (!cx_codec_decompress(codec, ddict, outs[i], outlens[i], dst, rawlen) ||
				memcmp(dst, VARDATA_ANY(v), rawlen) != 0)
				elog(ERROR, "%s did not round-trip a sampled value", codec->name);
			pfree(dst);
		}
		i++;
	}
	INSTR_TIME_SET_CURRENT(spent);
	INSTR_TIME_SUBTRACT(spent, start);
	res->decompress_s = INSTR_TIME_GET_DOUBLE(spent);
}

static double
ratio_of(const Trial *t)
{
	return t->raw / Max(t->stored, 1);
}

/* Compression speed in MB of raw data per second. */
static double
compress_rate(const Trial *t)
{
	return t->raw / Max(t->compress_s, 1e-6) / 1e6;
}

/*
 * The dictionary candidate: train on every other sampled value, measure on
 * the others (values the dictionary has not seen).  Not done when the
 * sample is too small to train on.
 */
static void
try_dictionary(const Candidate *cand, List *values, Trial *res)
{
	List	   *train = NIL;
	List	   *test = NIL;
	ListCell   *lc;
	bytea	   *dict;
	int32		nsamples;
	int64		nbytes;
	const char *error;
	void	   *cdict;
	void	   *ddict;

	foreach(lc, values)
	{
		if (foreach_current_index(lc) % 2 == 0)
			train = lappend(train, lfirst(lc));
		else
			test = lappend(test, lfirst(lc));
	}
	if (test == NIL)
		return;
	dict = cx_dict_train(train, ADVISE_DICT_SIZE, &nsamples, &nbytes, &error);
	if (dict == NULL)
		return;
	if (cand->codec == CX_CODEC_LZ4)
		cdict = ddict = cx_codec_lz4_dict_create(VARDATA(dict), VARSIZE(dict) - VARHDRSZ);
	else
	{
		cdict = cx_dict_digest(dict, cand->level, true);
		ddict = cx_dict_digest(dict, cand->level, false);
	}
	PG_TRY();
	{
		if (cdict && ddict)
			try_candidate(cand, test, cdict, ddict, res);
	}
	PG_FINALLY();
	{
		if (cand->codec == CX_CODEC_LZ4)
			cx_codec_lz4_dict_free(cdict);
		else
			cx_dict_free_digested(cdict, ddict);
	}
	PG_END_TRY();
}

static Datum
rate(double raw, double seconds)
{
	/* MB per second, rounded; very fast runs are capped by timer resolution */
	double		mbs = raw / 1e6 / Max(seconds, 1e-6);

	return DirectFunctionCall2(numeric_round,
							   DirectFunctionCall1(float8_numeric, Float8GetDatum(mbs)),
							   Int32GetDatum(1));
}

/*
 * compressx.advise(rel regclass, sample_rows int DEFAULT 1000,
 *					min_compress_mb_s float8 DEFAULT 50)
 *	  RETURNS TABLE (column_name name, codec text, level int,
 *					 dictionary boolean, ratio numeric,
 *					 compress_mb_s numeric, decompress_mb_s numeric,
 *					 recommended boolean)
 */
Datum
compressx_advise(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	int64		sample_rows;
	double		min_rate;
	Relation	rel;
	TupleDesc	desc;
	List	   *leaves;
	ListCell   *lc;
	List	   *tuples = NIL;
	int64		tuple_bytes = 0;
	MemoryContext colcxt;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("arguments of compressx.advise must not be null")));
	relid = PG_GETARG_OID(0);
	sample_rows = PG_GETARG_INT32(1);
	min_rate = PG_GETARG_FLOAT8(2);
	if (sample_rows < 1 || sample_rows > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample_rows must be between 1 and 1000000")));
	if (isnan(min_rate) || isinf(min_rate) || min_rate < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_compress_mb_s must be a finite number, zero or more")));
	InitMaterializedSRF(fcinfo, 0);

	rel = cx_open_readable_table(relid, &leaves);
	if (cx_citus_fan_out_srf(fcinfo, relid, "citus_advise"))
	{
		relation_close(rel, NoLock);
		return (Datum) 0;
	}
	desc = RelationGetDescr(rel);
	foreach(lc, leaves)
	{
		Relation	leaf = table_open(lfirst_oid(lc), NoLock);

		tuples = list_concat(tuples,
							 cx_sample_tuples(leaf, GetActiveSnapshot(),
											  sample_rows / Max(list_length(leaves), 1) + 1,
											  sample_rows - list_length(tuples)));
		table_close(leaf, NoLock);
	}

	foreach(lc, tuples)
		tuple_bytes += HEAPTUPLESIZE + ((HeapTuple) lfirst(lc))->t_len;
	colcxt = AllocSetContextCreate(CurrentMemoryContext, "compressx advise column",
								   ALLOCSET_DEFAULT_SIZES);

	for (int att = 0; att < desc->natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);
		List	   *values = NIL;
		Trial		res[NCANDIDATES];
		int			best = -1,
					fastest = -1;
		int64		plain_bytes = 0;
		MemoryContext oldcxt;

		if (a->attisdropped || a->attlen != -1)
			continue;
		/* one column's plain values at a time, with the sample: the budget */
		MemoryContextReset(colcxt);
		oldcxt = MemoryContextSwitchTo(colcxt);

		/* plain values of this column (partitions share the parent's names) */
		foreach(lc, tuples)
		{
			HeapTuple	tuple = (HeapTuple) lfirst(lc);
			Relation	leaf = table_open(tuple->t_tableOid, NoLock);
			TupleDesc	ldesc = RelationGetDescr(leaf);

			for (int i = 0; i < ldesc->natts; i++)
			{
				bool		isnull;
				Datum		d;

				if (strcmp(NameStr(TupleDescAttr(ldesc, i)->attname), NameStr(a->attname)) != 0 ||
					TupleDescAttr(ldesc, i)->attisdropped)
					continue;
				d = heap_getattr(tuple, i + 1, ldesc, &isnull);
				if (!isnull)
				{
					struct varlena *plain = cx_plain_value((struct varlena *) DatumGetPointer(d),
														   tuple->t_tableOid, NameStr(a->attname));

					values = lappend(values, plain);
					plain_bytes += VARSIZE_ANY(plain);
					cx_check_sample_memory(rel, tuple_bytes + plain_bytes);
				}
			}
			table_close(leaf, NoLock);
		}
		MemoryContextSwitchTo(oldcxt);
		if (values == NIL)
			continue;

		for (int c = 0; c < (int) NCANDIDATES; c++)
		{
			MemoryContext candcxt;

			CHECK_FOR_INTERRUPTS();
			res[c].done = false;

			/*
			 * A candidate's compressed copies of the sample go when it is
			 * measured: only the sample itself stays (compressx.sample_memory).
			 */
			candcxt = AllocSetContextCreate(CurrentMemoryContext, "compressx advise candidate",
											ALLOCSET_DEFAULT_SIZES);
			oldcxt = MemoryContextSwitchTo(candcxt);
			if (candidates[c].dictionary)
				try_dictionary(&candidates[c], values, &res[c]);
			else
				try_candidate(&candidates[c], values, NULL, NULL, &res[c]);
			MemoryContextSwitchTo(oldcxt);
			MemoryContextDelete(candcxt);
			if (!res[c].done)
				continue;
			/* by rate: the dictionary candidate compresses half the sample */
			if (fastest < 0 || compress_rate(&res[c]) > compress_rate(&res[fastest]))
				fastest = c;
			if (compress_rate(&res[c]) >= min_rate &&
				(best < 0 || ratio_of(&res[c]) > ratio_of(&res[best])))
				best = c;
		}
		if (best < 0)
			best = fastest;

		for (int c = 0; c < (int) NCANDIDATES; c++)
		{
			Datum		vals[8];
			bool		nulls[8] = {0};

			if (!res[c].done)
				continue;
			vals[0] = NameGetDatum(&a->attname);
			vals[1] = CStringGetTextDatum(cx_codec_by_id(candidates[c].codec)->name);
			vals[2] = Int32GetDatum(candidates[c].level);
			nulls[2] = candidates[c].level == 0;
			vals[3] = BoolGetDatum(candidates[c].dictionary);
			vals[4] = DirectFunctionCall2(numeric_round,
										  DirectFunctionCall1(float8_numeric,
															  Float8GetDatum(ratio_of(&res[c]))),
										  Int32GetDatum(2));
			vals[5] = rate(res[c].raw, res[c].compress_s);
			vals[6] = rate(res[c].raw, res[c].decompress_s);
			vals[7] = BoolGetDatum(c == best);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, vals, nulls);
		}
	}
	MemoryContextDelete(colcxt);
	relation_close(rel, NoLock);
	return (Datum) 0;
}
