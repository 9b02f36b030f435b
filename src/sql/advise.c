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
 * stored ratio (raw bytes against stored bytes with each format's header,
 * counted as column_stats counts them), and compress and decompress speed
 * in MB of raw data per second (a small sample is timed over repeated
 * passes).  A row with codec "none" gives the ratio of the values stored
 * as they are.  Rule of the recommendation, per column: the best ratio
 * among candidates compressing at least min_compress_mb_s (if none is that
 * fast, the fastest one), unless it saves less than ADVISE_MIN_GAIN over
 * storing the values as they are: then "none", leave the column as is.
 * The recommended row carries the statements that apply it (apply) and
 * why it was chosen (note).
 *
 * Locking: AccessShareLock on the table; needs SELECT on it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "catalog/dict.h"
#include "catalog/relation.h"
#include "storage/format.h"
#include "sql/progress.h"
#include "sql/inspect.h"
#include "citus/fanout.h"

PG_FUNCTION_INFO_V1(compressx_advise);

typedef struct Candidate
{
	CxCodecId	codec;
	int			level;			/* 0: the codec takes none */
	int			header;			/* stored header bytes per value */
	bool		dictionary;		/* with a trained dictionary */
} Candidate;

static const Candidate candidates[] = {
	{CX_CODEC_NONE, 0, 0, false},	/* stored as they are */
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

/* A codec must store the sample at least this much smaller than "none". */
#define ADVISE_MIN_GAIN		1.02

/*
 * Timing: passes over a sample are repeated until they took this long (or
 * ADVISE_MAX_PASSES passes), so that small samples give speeds, not timer
 * noise; below ADVISE_SMALL_SAMPLE values the note says the ratios are rough.
 */
#define ADVISE_MIN_SECONDS	0.005
#define ADVISE_MAX_PASSES	1000
#define ADVISE_SMALL_SAMPLE 100

/* Size of the dictionary the dictionary candidate trains. */
#define ADVISE_DICT_SIZE 16384
#define NCANDIDATES lengthof(candidates)

typedef struct Trial
{
	bool		done;
	bool		timed;			/* speeds measured (not for "none") */
	double		raw;
	double		stored;
	double		compress_s;		/* per pass */
	double		decompress_s;
} Trial;

/*
 * Bytes a value of rawlen data bytes takes stored as it is, as
 * column_stats counts them: a 1-byte header while it fits one.
 */
static double
plain_stored(int32 rawlen)
{
	return rawlen + (rawlen + VARHDRSZ_SHORT <= VARATT_SHORT_MAX ? VARHDRSZ_SHORT : VARHDRSZ);
}

/* Whether to time another pass after passes of spent seconds in all. */
static bool
another_pass(int passes, double spent)
{
	return passes == 0 || (spent < ADVISE_MIN_SECONDS && passes < ADVISE_MAX_PASSES);
}

/* Seconds since start. */
static double
elapsed_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_DOUBLE(now);
}

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
 * cdict and ddict: the dictionary candidate's digested dictionary.  Each
 * direction is timed over as many passes as ADVISE_MIN_SECONDS needs.
 */
static void
try_candidate(const Candidate *cand, List *values, void *cdict, void *ddict,
			  Trial *res)
{
	const CxCodec *codec = cx_codec_by_id(cand->codec);
	ListCell   *lc;
	instr_time	start;
	int			n = list_length(values);
	char	  **outs = palloc0(sizeof(char *) * Max(n, 1));
	int32	   *outlens = palloc0(sizeof(int32) * Max(n, 1));
	int32	   *caps = palloc0(sizeof(int32) * Max(n, 1));
	int			passes;
	double		spent;
	int			i;

	res->done = true;
	res->timed = cand->codec != CX_CODEC_NONE;
	res->raw = 0;
	res->stored = 0;
	res->compress_s = res->decompress_s = 0;
	if (!res->timed)
	{
		foreach(lc, values)
		{
			int32		rawlen = advised_length((struct varlena *) lfirst(lc));

			res->raw += rawlen;
			res->stored += plain_stored(rawlen);
		}
		return;
	}

	INSTR_TIME_SET_CURRENT(start);
	for (passes = 0, spent = 0; another_pass(passes, spent); passes++)
	{
		i = 0;
		foreach(lc, values)
		{
			struct varlena *v = (struct varlena *) lfirst(lc);
			int32		rawlen = advised_length(v);
			int32		len;

			CHECK_FOR_INTERRUPTS();
			if (passes == 0)
			{
				caps[i] = cx_codec_bound(codec, rawlen);
				outs[i] = palloc(caps[i]);
			}
			len = cx_codec_compress(codec, cand->level, cdict, VARDATA_ANY(v), rawlen,
									outs[i], caps[i]);
			if (passes == 0)
			{
				res->raw += rawlen;
				if (len < 0 || len + cand->header >= plain_stored(rawlen))
				{
					outlens[i] = -1;	/* stored plain */
					res->stored += plain_stored(rawlen);
				}
				else
				{
					outlens[i] = len;
					res->stored += len + cand->header;
				}
			}
			i++;
		}
		spent = elapsed_since(start);
	}
	res->compress_s = spent / passes;

	INSTR_TIME_SET_CURRENT(start);
	for (passes = 0, spent = 0; another_pass(passes, spent); passes++)
	{
		i = 0;
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
					(passes == 0 && memcmp(dst, VARDATA_ANY(v), rawlen) != 0))
					elog(ERROR, "%s did not round-trip a sampled value", codec->name);
				pfree(dst);
			}
			i++;
		}
		spent = elapsed_since(start);
	}
	res->decompress_s = spent / passes;
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

/*
 * The statements that apply candidate cand to column attname of rel (every
 * leaf compressx: is_cx), or NULL for "none" (nothing to do).  A heap table
 * moves to the compressx access method, online, unless the candidate is
 * core's own (pglz or lz4 without a dictionary): the setting is made first
 * (pending until the move), the dictionary trained once the table is
 * compressx's, and the column rewritten with it.
 */
static char *
apply_statements(Relation rel, bool is_cx, const char *attname, const Candidate *cand)
{
	const char *codec = cx_codec_by_id(cand->codec)->name;
	char	   *table = quote_literal_cstr(quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
																	  RelationGetRelationName(rel)));
	char	   *column = quote_literal_cstr(attname);
	StringInfoData buf;

	if (cand->codec == CX_CODEC_NONE)
		return NULL;
	initStringInfo(&buf);
	if (!is_cx && !cand->dictionary && cand->codec != CX_CODEC_ZSTD)
	{
		/* heap keeps pglz and lz4, at core's level */
		appendStringInfo(&buf, "CALL compressx.recompress_online(%s, '%s', columns => ARRAY[%s]::name[]);",
						 table, codec, column);
		return buf.data;
	}
	appendStringInfo(&buf, "SELECT compressx.set_column_codec(%s, %s, '%s'", table, column, codec);
	if (cand->level != 0)
		appendStringInfo(&buf, ", %d", cand->level);
	appendStringInfoString(&buf, ");");
	if (!is_cx)
		appendStringInfo(&buf, "\nCALL compressx.recompress_online(%s, access_method => 'compressx');",
						 table);
	if (cand->dictionary)
		appendStringInfo(&buf, "\nSELECT compressx.train_dictionary(%s, %s);", table, column);
	if (is_cx || cand->dictionary)
		appendStringInfo(&buf, "\nCALL compressx.recompress_online(%s, columns => ARRAY[%s]::name[]);",
						 table, column);
	return buf.data;
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
 *					 recommended boolean, note text, apply text)
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
	bool		is_cx;

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
	cx_progress_begin(relid, CX_OP_ADVISE);	/* progress: sampling rows */
	cx_progress_phase(CX_PHASE_SAMPLING, sample_rows);
	is_cx = leaves != NIL;
	foreach(lc, leaves)
	{
		Relation	leaf = table_open(lfirst_oid(lc), NoLock);

		is_cx = is_cx && cx_is_compressx_relation(leaf);
		table_close(leaf, NoLock);
	}
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
	cx_progress_set_done(list_length(tuples));	/* progress: then candidates */
	cx_progress_phase(CX_PHASE_TRYING, cx_progress_varlena_columns(desc) * NCANDIDATES);
	colcxt = AllocSetContextCreate(CurrentMemoryContext, "compressx advise column",
								   ALLOCSET_DEFAULT_SIZES);

	for (int att = 0; att < desc->natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);
		List	   *values = NIL;
		Trial		res[NCANDIDATES];
		int			best = -1,
					fastest = -1;
		char	   *why;
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
		{
			cx_progress_advance(NCANDIDATES);	/* progress */
			continue;
		}

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
			cx_progress_advance(1);	/* progress */
			if (!res[c].done || !res[c].timed)
				continue;
			/* by rate: the dictionary candidate compresses half the sample */
			if (fastest < 0 || compress_rate(&res[c]) > compress_rate(&res[fastest]))
				fastest = c;
			if (compress_rate(&res[c]) >= min_rate &&
				(best < 0 || ratio_of(&res[c]) > ratio_of(&res[best])))
				best = c;
		}
		if (best < 0)
		{
			best = fastest;
			why = psprintf("no codec compresses %g MB/s or more: the fastest", min_rate);
		}
		else
			why = psprintf("the best ratio among codecs compressing %g MB/s or more", min_rate);
		/* candidate 0 is "none": the values as they are */
		if (ratio_of(&res[best]) < ratio_of(&res[0]) * ADVISE_MIN_GAIN)
		{
			best = 0;
			why = psprintf("leave as is: no codec stores these values %d%% smaller",
						   (int) rint((ADVISE_MIN_GAIN - 1) * 100));
		}
		if (list_length(values) < ADVISE_SMALL_SAMPLE)
			why = psprintf("%s; only %d values sampled: the figures are rough",
						   why, list_length(values));

		for (int c = 0; c < (int) NCANDIDATES; c++)
		{
			Datum		vals[10];
			bool		nulls[10] = {0};

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
			nulls[5] = nulls[6] = !res[c].timed;
			vals[7] = BoolGetDatum(c == best);
			nulls[8] = nulls[9] = c != best;
			if (c == best)
			{
				char	   *apply = apply_statements(rel, is_cx, NameStr(a->attname), &candidates[c]);

				vals[8] = CStringGetTextDatum(why);
				nulls[9] = apply == NULL;
				if (apply)
					vals[9] = CStringGetTextDatum(apply);
			}
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, vals, nulls);
		}
	}
	MemoryContextDelete(colcxt);
	cx_progress_end();			/* progress */
	relation_close(rel, NoLock);
	return (Datum) 0;
}
