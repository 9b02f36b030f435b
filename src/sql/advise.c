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
 * row when the sample is too small to train on).  A row with codec "none"
 * gives the ratio of the values stored as they are.
 *
 * Two kinds of figures, kept apart (issue 34, item 1: on a busy machine the
 * recommendation changed between calls on the same data):
 *
 * - ratio (raw bytes against stored bytes with each format's header,
 *   counted as column_stats counts them), over every sampled value.  It
 *   depends on the data alone: the sample's blocks are read in an order
 *   drawn from a fixed seed until enough rows are in
 *   (cx_sample_tuples_seeded: the same table contents give the same rows,
 *   whatever the planner's statistics say), and dictionary training is
 *   deterministic.
 *
 * - speed, timed in CPU time of this backend (what other processes take of
 *   the machine is not counted) on the first ADVISE_TIMING_BYTES of the
 *   values, in ADVISE_ROUNDS rounds; in each round every candidate is timed
 *   right beside the reference, zstd 3 (compressx's default), on the same
 *   bytes, in alternating order.  compress_relative and
 *   decompress_relative are the medians of the candidate's speed over the
 *   reference's; compress_mb_s and decompress_mb_s the medians of its own
 *   speeds, for information.
 *
 * The recommendation, per column, compares speeds only with each other,
 * never with a figure in MB/s (unless the caller gives min_compress_mb_s),
 * and among the candidates its priority admits takes the best ratio
 * (ratios compared as shown, to 2 decimals; a tie goes to the candidate
 * listed first):
 *   size     every candidate;
 *   balance  those compressing and decompressing at least
 *            ADVISE_SPEED_SHARE times as fast as zstd 3;
 *   speed    those decompressing at least ADVISE_SPEED_SHARE times as fast
 *            as the fastest decompressor.
 * The cut-off is a factor of 2, and the codecs differ by more than that
 * where it decides (zstd 19 against zstd 3, zstd against lz4 decoding), so
 * the noise of a busy machine, which the CPU-time medians of interleaved
 * rounds keep to a few per cent, does not move a candidate across it.
 * Then, unless the winner stores the sample at least ADVISE_MIN_GAIN
 * smaller than "none": "none", leave the column as is.  Every row says in
 * reason why it won or lost (figures and codec names only, nothing of the
 * values); the recommended row carries the statements that apply it
 * (apply) and its reason again with the sample's caveats (note).
 *
 * Memory: the sample (compressx.sample_memory), one value's compressed and
 * decoded copies at a time for the ratios, and the timed slice's copies
 * (a few times ADVISE_TIMING_BYTES); the dictionaries (16 kB each, with
 * zstd's digests) live until the column is done, freed on error too.
 *
 * Who reads what: the rows go to the caller, who may SELECT every row of
 * the table (row-level security in force refuses, as the other inspection
 * functions do); reason and note hold figures, codec names and the
 * priority, nothing of the values; nothing is written anywhere.
 *
 * Locking: AccessShareLock on the table, taken after the privilege check
 * (a role without it neither waits nor makes others wait); nothing else
 * is locked, so it waits only behind an ACCESS EXCLUSIVE lock, like a
 * SELECT.  It reads with the statement's snapshot, as a SELECT does: under
 * REPEATABLE READ or SERIALIZABLE the transaction's snapshot, with no
 * predicate locks (like ANALYZE, it reads blocks directly).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <time.h>

#include "funcapi.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "catalog/dict.h"
#include "catalog/relation.h"
#include "storage/format.h"
#include "sql/followup.h"
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

#define NCANDIDATES lengthof(candidates)
#define CAND_NONE		0		/* the values as they are */
#define CAND_REFERENCE	5		/* zstd 3: the speeds are relative to it */

/* A codec must store the sample at least this much smaller than "none". */
#define ADVISE_MIN_GAIN		1.02

/*
 * Timing: ADVISE_ROUNDS rounds over the first ADVISE_TIMING_BYTES of the
 * values; each timed run repeats its pass until it took ADVISE_MIN_SECONDS
 * of CPU time (or ADVISE_MAX_PASSES passes).  Below ADVISE_SMALL_SAMPLE
 * values the note says the ratios are rough.
 */
#define ADVISE_ROUNDS		5
#define ADVISE_TIMING_BYTES (256 * 1024)
#define ADVISE_MIN_SECONDS	0.002
#define ADVISE_MAX_PASSES	1000
#define ADVISE_SMALL_SAMPLE 100

/* balance and speed admit candidates at least this share of a speed */
#define ADVISE_SPEED_SHARE	0.5

/* Blocks of the sample are ordered by this seed: the same data, the same rows. */
#define ADVISE_SEED			UINT64CONST(0x34ad5eed)

/* Size of the dictionary the dictionary candidates train. */
#define ADVISE_DICT_SIZE 16384

/* What matters to the caller (argument priority). */
typedef enum AdvisePriority
{
	PRIORITY_BALANCE,
	PRIORITY_SIZE,
	PRIORITY_SPEED
} AdvisePriority;

static const char *const priority_names[] = {"balance", "size", "speed"};

/* Why a candidate cannot win under the priority (or ELIGIBLE). */
typedef enum Exclusion
{
	ELIGIBLE,
	EXCLUDED_UNTIMED,			/* "none": the ratio to beat */
	EXCLUDED_NO_GAIN,			/* not ADVISE_MIN_GAIN smaller than "none" */
	EXCLUDED_FLOOR,				/* below min_compress_mb_s */
	EXCLUDED_COMPRESS,			/* balance: compresses too slowly */
	EXCLUDED_DECOMPRESS,		/* balance: decompresses too slowly */
	EXCLUDED_READ				/* speed: decompresses too slowly */
} Exclusion;

/* One part of the sample: pointers into the sampled values. */
typedef struct Slice
{
	int			n;
	const char **src;
	int32	   *len;
	int64		bytes;
	/* compressed copies, one set per codec timed on it at once */
	char	  **out[2];
	int32	   *outlen[2];
	int32	   *cap[2];
} Slice;

typedef struct Trial
{
	bool		done;			/* measured (a dictionary candidate may not be) */
	bool		timed;			/* speeds measured (not for "none") */
	double		raw;
	double		stored;
	/* medians over the rounds */
	double		compress_mb_s;
	double		decompress_mb_s;
	double		compress_rel;	/* against the reference (1 for itself) */
	double		decompress_rel;
	/* per round */
	double		c_s[ADVISE_ROUNDS];
	double		d_s[ADVISE_ROUNDS];
	double		c_rel[ADVISE_ROUNDS];
	double		d_rel[ADVISE_ROUNDS];
	/* what it runs with, until the column is done */
	List	   *values;			/* the values measured (half for a dictionary) */
	Slice	   *slice;			/* the timed part of them */
	void	   *cdict;
	void	   *ddict;
	Exclusion	exclusion;
} Trial;

/* The state of one column's trial. */
typedef struct ColumnTrial
{
	Trial		res[NCANDIDATES];
	Slice	   *all_slice;		/* of every value */
	Slice	   *test_slice;		/* of the dictionaries' test half */
	/* reference timings on all_slice, for its own speeds */
	double		ref_c_s[ADVISE_ROUNDS * NCANDIDATES];
	double		ref_d_s[ADVISE_ROUNDS * NCANDIDATES];
	int			nref;
} ColumnTrial;

/*
 * Bytes a value of rawlen data bytes takes stored as it is, as
 * column_stats counts them: a 1-byte header while it fits one.
 */
static double
plain_stored(int32 rawlen)
{
	return rawlen + (rawlen + VARHDRSZ_SHORT <= VARATT_SHORT_MAX ? VARHDRSZ_SHORT : VARHDRSZ);
}

/*
 * CPU time this backend has used, in seconds: time the machine gives to
 * other processes meanwhile is not counted.  Wall-clock time where the
 * platform has no CPU-time clock.
 */
static double
cpu_seconds(void)
{
#ifdef CLOCK_THREAD_CPUTIME_ID
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		elog(ERROR, "could not read the CPU-time clock: %m");
	return ts.tv_sec + ts.tv_nsec / 1e9;
#else
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return INSTR_TIME_GET_DOUBLE(now);
#endif
}

/* Whether to time another pass after passes of spent seconds in all. */
static bool
another_pass(int passes, double spent)
{
	return passes == 0 || (spent < ADVISE_MIN_SECONDS && passes < ADVISE_MAX_PASSES);
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Median of n figures (sorts them). */
static double
median(double *v, int n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

static double
ratio_of(const Trial *t)
{
	return t->raw / Max(t->stored, 1);
}

/* A ratio as shown (2 decimals), for comparisons that must not flip. */
static int64
shown_ratio(const Trial *t)
{
	return (int64) rint(ratio_of(t) * 100);
}

/* "zstd 3", "lz4 1 with a dictionary", "pglz", "none". */
static const char *
candidate_label(int c)
{
	const Candidate *cand = &candidates[c];
	const char *name = cx_codec_by_id(cand->codec)->name;

	if (cand->level == 0)
		return name;
	return psprintf("%s %d%s", name, cand->level, cand->dictionary ? " with a dictionary" : "");
}

/*
 * The first ADVISE_TIMING_BYTES of values (a value that crosses the limit
 * is cut there), with room for two codecs' compressed copies.
 */
static Slice *
make_slice(List *values)
{
	Slice	   *s = palloc0(sizeof(Slice));
	ListCell   *lc;
	int			n = list_length(values);

	s->src = palloc0(sizeof(char *) * Max(n, 1));
	s->len = palloc0(sizeof(int32) * Max(n, 1));
	foreach(lc, values)
	{
		struct varlena *v = (struct varlena *) lfirst(lc);
		int32		len = (int32) Min(advised_length(v), ADVISE_TIMING_BYTES - s->bytes);

		if (len <= 0)
			break;
		s->src[s->n] = VARDATA_ANY(v);
		s->len[s->n] = len;
		s->bytes += len;
		s->n++;
	}
	for (int k = 0; k < 2; k++)
	{
		s->out[k] = palloc0(sizeof(char *) * Max(s->n, 1));
		s->outlen[k] = palloc0(sizeof(int32) * Max(s->n, 1));
		s->cap[k] = palloc0(sizeof(int32) * Max(s->n, 1));
	}
	return s;
}

/*
 * Compress every value of slice s with candidate c (dictionaries of t) into
 * copy set k, as many passes as ADVISE_MIN_SECONDS needs; returns CPU
 * seconds per pass.  A value that does not shrink is left plain.
 */
static double
time_compress(int c, const Trial *t, Slice *s, int k)
{
	const Candidate *cand = &candidates[c];
	const CxCodec *codec = cx_codec_by_id(cand->codec);
	double		start = cpu_seconds();
	double		spent = 0;
	int			passes;

	for (passes = 0; another_pass(passes, spent); passes++)
	{
		for (int i = 0; i < s->n; i++)
		{
			int32		len;

			CHECK_FOR_INTERRUPTS();
			if (s->out[k][i] == NULL || s->cap[k][i] < cx_codec_bound(codec, s->len[i]))
			{
				if (s->out[k][i])
					pfree(s->out[k][i]);
				s->cap[k][i] = cx_codec_bound(codec, s->len[i]);
				s->out[k][i] = palloc(s->cap[k][i]);
			}
			len = cx_codec_compress(codec, cand->level, t->cdict, s->src[i], s->len[i],
									s->out[k][i], s->cap[k][i]);
			s->outlen[k][i] = (len < 0 || len + cand->header >= plain_stored(s->len[i])) ? -1 : len;
		}
		spent = cpu_seconds() - start;
	}
	return spent / passes;
}

/* The same for decompressing copy set k (made by time_compress). */
static double
time_decompress(int c, const Trial *t, Slice *s, int k)
{
	const CxCodec *codec = cx_codec_by_id(candidates[c].codec);
	double		start = cpu_seconds();
	double		spent = 0;
	int			passes;
	int32		maxlen = 1;
	char	   *dst;

	for (int i = 0; i < s->n; i++)
		maxlen = Max(maxlen, s->len[i]);
	dst = palloc(maxlen);
	for (passes = 0; another_pass(passes, spent); passes++)
	{
		for (int i = 0; i < s->n; i++)
		{
			CHECK_FOR_INTERRUPTS();
			if (s->outlen[k][i] >= 0 &&
				!cx_codec_decompress(codec, t->ddict, s->out[k][i], s->outlen[k][i], dst, s->len[i]))
				elog(ERROR, "%s did not round-trip a sampled value", codec->name);
		}
		spent = cpu_seconds() - start;
	}
	pfree(dst);
	return spent / passes;
}

/*
 * The ratio of candidate c over every value of t->values: each value
 * compressed, decompressed and compared once; values that do not shrink
 * count at their plain size, as compressx would store them.
 */
static void
measure_ratio(int c, Trial *t)
{
	const Candidate *cand = &candidates[c];
	const CxCodec *codec = cx_codec_by_id(cand->codec);
	ListCell   *lc;
	int32		maxlen = 1;
	char	   *out;
	char	   *dst;
	int32		cap;

	t->raw = t->stored = 0;
	foreach(lc, t->values)
		maxlen = Max(maxlen, advised_length((struct varlena *) lfirst(lc)));
	if (cand->codec == CX_CODEC_NONE)
	{
		foreach(lc, t->values)
		{
			int32		rawlen = advised_length((struct varlena *) lfirst(lc));

			t->raw += rawlen;
			t->stored += plain_stored(rawlen);
		}
		return;
	}
	cap = cx_codec_bound(codec, maxlen);
	out = palloc(cap);
	dst = palloc(maxlen);
	foreach(lc, t->values)
	{
		struct varlena *v = (struct varlena *) lfirst(lc);
		int32		rawlen = advised_length(v);
		int32		len;

		CHECK_FOR_INTERRUPTS();
		len = cx_codec_compress(codec, cand->level, t->cdict, VARDATA_ANY(v), rawlen, out, cap);
		t->raw += rawlen;
		if (len < 0 || len + cand->header >= plain_stored(rawlen))
		{
			t->stored += plain_stored(rawlen);
			continue;
		}
		t->stored += len + cand->header;
		if (!cx_codec_decompress(codec, t->ddict, out, len, dst, rawlen) ||
			memcmp(dst, VARDATA_ANY(v), rawlen) != 0)
			elog(ERROR, "%s did not round-trip a sampled value", codec->name);
	}
	pfree(out);
	pfree(dst);
}

/*
 * Train the dictionary of candidate c on every other value, to be measured
 * on the others (values it has not seen).  Leaves t->done false when the
 * sample is too small to train on.
 */
static void
prepare_dictionary(int c, List *values, Trial *t)
{
	const Candidate *cand = &candidates[c];
	List	   *train = NIL;
	List	   *test = NIL;
	ListCell   *lc;
	bytea	   *dict;
	int32		nsamples;
	int64		nbytes;
	const char *error;

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
	{
		t->cdict = t->ddict = cx_codec_lz4_dict_create(VARDATA(dict), VARSIZE(dict) - VARHDRSZ);
		if (t->cdict == NULL)
			return;
	}
	else
	{
		t->cdict = cx_dict_digest(dict, cand->level, true);
		t->ddict = cx_dict_digest(dict, cand->level, false);
		if (t->cdict == NULL || t->ddict == NULL)
			return;
	}
	t->values = test;
	t->done = true;
}

/* Free what prepare_dictionary digested (zstd's digests are not palloc'd). */
static void
free_dictionaries(ColumnTrial *ct)
{
	for (int c = 0; c < (int) NCANDIDATES; c++)
	{
		Trial	   *t = &ct->res[c];

		if (!candidates[c].dictionary)
			continue;
		if (candidates[c].codec == CX_CODEC_LZ4)
		{
			if (t->cdict)
				cx_codec_lz4_dict_free(t->cdict);
		}
		else
			cx_dict_free_digested(t->cdict, t->ddict);
		t->cdict = t->ddict = NULL;
	}
}

/*
 * One round's timing of candidate c beside the reference on c's slice:
 * compress, then decompress, the two in turn, which goes first alternating
 * with the round.
 */
static void
time_beside_reference(ColumnTrial *ct, int c, int round)
{
	Trial	   *t = &ct->res[c];
	Trial	   *ref = &ct->res[CAND_REFERENCE];
	Slice	   *s = t->slice;
	bool		ref_first = (round + c) % 2 == 0;
	double		ref_c,
				ref_d,
				c_c,
				c_d;

	if (ref_first)
	{
		ref_c = time_compress(CAND_REFERENCE, ref, s, 0);
		c_c = time_compress(c, t, s, 1);
		ref_d = time_decompress(CAND_REFERENCE, ref, s, 0);
		c_d = time_decompress(c, t, s, 1);
	}
	else
	{
		c_c = time_compress(c, t, s, 1);
		ref_c = time_compress(CAND_REFERENCE, ref, s, 0);
		c_d = time_decompress(c, t, s, 1);
		ref_d = time_decompress(CAND_REFERENCE, ref, s, 0);
	}
	/* a run too short for the clock counts as one nanosecond */
	ref_c = Max(ref_c, 1e-9);
	ref_d = Max(ref_d, 1e-9);
	c_c = Max(c_c, 1e-9);
	c_d = Max(c_d, 1e-9);
	t->c_rel[round] = ref_c / c_c;
	t->d_rel[round] = ref_d / c_d;
	t->c_s[round] = c_c;
	t->d_s[round] = c_d;
	if (s == ct->all_slice)
	{
		ct->ref_c_s[ct->nref] = ref_c;
		ct->ref_d_s[ct->nref] = ref_d;
		ct->nref++;
	}
}

/*
 * Measure every candidate on a column's values: dictionaries trained,
 * ratios over every value, then ADVISE_ROUNDS rounds in which each
 * candidate is timed beside the reference.  Fills ct->res.
 */
static void
measure_column(ColumnTrial *ct, List *values)
{
	List	   *test_values = NIL;

	for (int c = 0; c < (int) NCANDIDATES; c++)
	{
		Trial	   *t = &ct->res[c];

		memset(t, 0, sizeof(Trial));
		t->timed = candidates[c].codec != CX_CODEC_NONE;
		if (!candidates[c].dictionary)
		{
			t->values = values;
			t->done = true;
		}
	}
	PG_TRY();
	{
		for (int c = 0; c < (int) NCANDIDATES; c++)
		{
			CHECK_FOR_INTERRUPTS();
			if (candidates[c].dictionary)
			{
				prepare_dictionary(c, values, &ct->res[c]);
				if (ct->res[c].done)
					test_values = ct->res[c].values;
			}
		}

		/* the ratios, candidate by candidate */
		for (int c = 0; c < (int) NCANDIDATES; c++)
		{
			if (ct->res[c].done)
				measure_ratio(c, &ct->res[c]);
			cx_progress_advance(1);	/* progress */
		}

		/* the speeds, round by round */
		ct->all_slice = make_slice(values);
		ct->test_slice = test_values ? make_slice(test_values) : NULL;
		ct->nref = 0;
		for (int c = 0; c < (int) NCANDIDATES; c++)
			ct->res[c].slice = candidates[c].dictionary ? ct->test_slice : ct->all_slice;
		for (int round = 0; round < ADVISE_ROUNDS; round++)
		{
			for (int c = 0; c < (int) NCANDIDATES; c++)
			{
				if (c != CAND_REFERENCE && ct->res[c].done && ct->res[c].timed)
					time_beside_reference(ct, c, round);
			}
		}
	}
	PG_FINALLY();
	{
		free_dictionaries(ct);
	}
	PG_END_TRY();

	for (int c = 0; c < (int) NCANDIDATES; c++)
	{
		Trial	   *t = &ct->res[c];
		double		bytes;

		if (!t->done || !t->timed)
			continue;
		bytes = t->slice->bytes;
		if (c == CAND_REFERENCE)
		{
			double		cs = median(ct->ref_c_s, ct->nref);
			double		ds = median(ct->ref_d_s, ct->nref);

			t->compress_mb_s = bytes / Max(cs, 1e-9) / 1e6;
			t->decompress_mb_s = bytes / Max(ds, 1e-9) / 1e6;
			t->compress_rel = t->decompress_rel = 1;
			continue;
		}
		t->compress_mb_s = bytes / median(t->c_s, ADVISE_ROUNDS) / 1e6;
		t->decompress_mb_s = bytes / median(t->d_s, ADVISE_ROUNDS) / 1e6;
		t->compress_rel = median(t->c_rel, ADVISE_ROUNDS);
		t->decompress_rel = median(t->d_rel, ADVISE_ROUNDS);
	}
}

/*
 * What choose_candidate decided for a column: the recommended row, and
 * what the reasons of the others refer to.
 */
typedef struct Choice
{
	int			chosen;			/* the recommended row (CAND_NONE: leave as is) */
	bool		none_fast_enough;	/* min_compress_mb_s admitted no candidate */
	bool		some_gain;		/* a candidate stores the values smaller enough */
	int			fastest_read;	/* priority speed: the fastest decompressor */
} Choice;

/*
 * The candidate to recommend under priority prio (and min_compress_mb_s
 * when has_floor); sets each trial's exclusion.  Only candidates storing
 * the sample at least ADVISE_MIN_GAIN smaller than "none" compete; the
 * best ratio among those the priority admits wins (ties: the one listed
 * first); with none left, "none": leave the column as is.  When
 * min_compress_mb_s admits none of them, the fastest compressor among
 * them wins, as before it was a default.
 */
static void
choose_candidate(Trial *res, AdvisePriority prio, bool has_floor, double floor,
				 Choice *choice)
{
	int			best = -1;
	int			fastest = -1;
	double		none_ratio = ratio_of(&res[CAND_NONE]);

	choice->fastest_read = -1;
	choice->some_gain = false;
	for (int c = 0; c < (int) NCANDIDATES; c++)
	{
		Trial	   *t = &res[c];

		if (!t->done)
			continue;
		if (!t->timed)
			t->exclusion = EXCLUDED_UNTIMED;
		else if (ratio_of(t) < none_ratio * ADVISE_MIN_GAIN)
			t->exclusion = EXCLUDED_NO_GAIN;
		else
		{
			t->exclusion = ELIGIBLE;
			choice->some_gain = true;
			if (choice->fastest_read < 0 || t->decompress_rel > res[choice->fastest_read].decompress_rel)
				choice->fastest_read = c;
		}
	}
	for (int c = 0; c < (int) NCANDIDATES; c++)
	{
		Trial	   *t = &res[c];

		if (!t->done || t->exclusion != ELIGIBLE)
			continue;
		if (fastest < 0 || t->compress_rel > res[fastest].compress_rel)
			fastest = c;
		if (has_floor && t->compress_mb_s < floor)
			t->exclusion = EXCLUDED_FLOOR;
		else if (prio == PRIORITY_BALANCE && t->compress_rel < ADVISE_SPEED_SHARE)
			t->exclusion = EXCLUDED_COMPRESS;
		else if (prio == PRIORITY_BALANCE && t->decompress_rel < ADVISE_SPEED_SHARE)
			t->exclusion = EXCLUDED_DECOMPRESS;
		else if (prio == PRIORITY_SPEED &&
				 t->decompress_rel < ADVISE_SPEED_SHARE * res[choice->fastest_read].decompress_rel)
			t->exclusion = EXCLUDED_READ;
		else if (best < 0 || shown_ratio(t) > shown_ratio(&res[best]))
			best = c;
	}
	choice->none_fast_enough = false;
	if (best < 0 && has_floor && fastest >= 0)
	{
		/* nothing meets the caller's floor: the fastest, as its note says */
		bool		floor_only = true;

		for (int c = 0; c < (int) NCANDIDATES; c++)
			floor_only = floor_only && (!res[c].done ||
										(res[c].exclusion != EXCLUDED_COMPRESS &&
										 res[c].exclusion != EXCLUDED_DECOMPRESS &&
										 res[c].exclusion != EXCLUDED_READ));
		if (floor_only)
		{
			best = fastest;
			choice->none_fast_enough = true;
		}
	}
	choice->chosen = best < 0 ? CAND_NONE : best;
}

/*
 * Why row c won or lost, in figures and codec names only (nothing of the
 * values).
 */
static char *
reason_for(const Trial *res, int c, const Choice *choice, AdvisePriority prio,
		   bool has_floor, double floor)
{
	const Trial *t = &res[c];
	int			chosen = choice->chosen;
	const char *pname = priority_names[prio];
	char	   *floor_clause = has_floor ? psprintf(" and %g MB/s or more", floor) : "";
	int			gain = (int) rint((ADVISE_MIN_GAIN - 1) * 100);

	if (c == CAND_NONE)
	{
		if (c != chosen)
			return psprintf("the values as they are (ratio %.2f): a codec must store them %d%% smaller",
							ratio_of(t), gain);
		if (!choice->some_gain)
			return psprintf("leave as is: no codec stores these values %d%% smaller", gain);
		return psprintf("leave as is: the codecs that store these values %d%% smaller are too slow for priority %s%s",
						gain, pname, has_floor ? " and min_compress_mb_s" : "");
	}
	if (c == chosen && choice->none_fast_enough)
		return psprintf("no codec compresses %g MB/s or more: the fastest compressor", floor);
	if (c == chosen)
	{
		switch (prio)
		{
			case PRIORITY_SIZE:
				return psprintf("priority size: the best ratio (%.2f)%s", ratio_of(t),
								has_floor ? psprintf(" among codecs compressing %g MB/s or more", floor) : "");
			case PRIORITY_SPEED:
				return psprintf("priority speed: the best ratio (%.2f) among codecs decompressing at least %g times as fast as the fastest, %s%s",
								ratio_of(t), ADVISE_SPEED_SHARE,
								candidate_label(choice->fastest_read), floor_clause);
			case PRIORITY_BALANCE:
				return psprintf("priority balance: the best ratio (%.2f) among codecs compressing and decompressing at least %g times as fast as zstd 3%s",
								ratio_of(t), ADVISE_SPEED_SHARE, floor_clause);
		}
	}
	switch (t->exclusion)
	{
		case EXCLUDED_NO_GAIN:
			return psprintf("ratio %.2f: not %d%% smaller than the values as they are (%.2f)",
							ratio_of(t), gain, ratio_of(&res[CAND_NONE]));
		case EXCLUDED_FLOOR:
			return psprintf("compresses %.1f MB/s, below min_compress_mb_s (%g)", t->compress_mb_s, floor);
		case EXCLUDED_COMPRESS:
			return psprintf("compresses at %.2f times the speed of zstd 3: priority balance wants %g or more",
							t->compress_rel, ADVISE_SPEED_SHARE);
		case EXCLUDED_DECOMPRESS:
			return psprintf("decompresses at %.2f times the speed of zstd 3: priority balance wants %g or more",
							t->decompress_rel, ADVISE_SPEED_SHARE);
		case EXCLUDED_READ:
			return psprintf("decompresses at %.2f times the speed of the fastest, %s: priority speed wants %g or more",
							t->decompress_rel / Max(res[choice->fastest_read].decompress_rel, 1e-9),
							candidate_label(choice->fastest_read), ADVISE_SPEED_SHARE);
		case ELIGIBLE:
		case EXCLUDED_UNTIMED:
			break;
	}
	if (chosen == CAND_NONE)
		return psprintf("ratio %.2f", ratio_of(t));	/* not reached: eligible means chosen */
	if (shown_ratio(t) == shown_ratio(&res[chosen]))
		return psprintf("ratio %.2f, the same as %s, which comes first", ratio_of(t), candidate_label(chosen));
	return psprintf("ratio %.2f, below %s's %.2f", ratio_of(t), candidate_label(chosen), ratio_of(&res[chosen]));
}

/*
 * apply's last statements (issue 34, item 4): what recompress_online's
 * NOTICE lists after a rewrite of every row, VACUUM of the table and
 * REINDEX INDEX CONCURRENTLY of each index (sql/followup.c); the procedure
 * cannot run them itself.
 */
static void
append_followup(Relation rel, StringInfo buf)
{
	cx_followup_statements(RelationGetRelid(rel), true, buf);
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
		append_followup(rel, &buf);
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
	append_followup(rel, &buf);
	return buf.data;
}

static Datum
rounded(double v, int digits)
{
	return DirectFunctionCall2(numeric_round,
							   DirectFunctionCall1(float8_numeric, Float8GetDatum(v)),
							   Int32GetDatum(digits));
}

/* Whether a speed is too large to show (a run the clock could not time). */
#define ADVISE_SHOWN_MAX	1e9

static AdvisePriority
parse_priority(text *arg)
{
	char	   *p = text_to_cstring(arg);

	for (int i = 0; i < (int) lengthof(priority_names); i++)
	{
		if (strcmp(p, priority_names[i]) == 0)
			return (AdvisePriority) i;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid priority \"%s\"", p),
			 errdetail("The priority says what matters most in the recommendation."),
			 errhint("Use size (the best ratio), speed (the fastest reads) or balance (the best ratio among codecs at least half as fast as zstd 3 both ways, the default).")));
	return PRIORITY_BALANCE;	/* keep the compiler quiet */
}

/*
 * compressx.advise(rel regclass, sample_rows int DEFAULT 1000,
 *					min_compress_mb_s float8 DEFAULT NULL,
 *					priority text DEFAULT 'balance')
 *	  RETURNS TABLE (column_name name, codec text, level int,
 *					 dictionary boolean, ratio numeric,
 *					 compress_mb_s numeric, decompress_mb_s numeric,
 *					 recommended boolean, note text, apply text,
 *					 compress_relative numeric, decompress_relative numeric,
 *					 reason text)
 */
Datum
compressx_advise(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	int64		sample_rows;
	bool		has_floor;
	double		floor = 0;
	AdvisePriority prio;
	Relation	rel;
	TupleDesc	desc;
	List	   *leaves;
	ListCell   *lc;
	List	   *tuples = NIL;
	int64		tuple_bytes = 0;
	MemoryContext colcxt;
	bool		is_cx;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("arguments of compressx.advise must not be null, except min_compress_mb_s")));
	relid = PG_GETARG_OID(0);
	sample_rows = PG_GETARG_INT32(1);
	has_floor = !PG_ARGISNULL(2);
	if (has_floor)
		floor = PG_GETARG_FLOAT8(2);
	if (sample_rows < 1 || sample_rows > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample_rows must be between 1 and 1000000")));
	if (has_floor && (isnan(floor) || isinf(floor) || floor < 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_compress_mb_s must be a finite number, zero or more")));
	prio = parse_priority(PG_GETARG_TEXT_PP(3));
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
							 cx_sample_tuples_seeded(leaf, GetActiveSnapshot(),
													 sample_rows / Max(list_length(leaves), 1) + 1,
													 sample_rows - list_length(tuples),
													 ADVISE_SEED));
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
		ColumnTrial *ct;
		Trial	   *res;
		Choice		choice;
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
		if (values == NIL)
		{
			MemoryContextSwitchTo(oldcxt);
			cx_progress_advance(NCANDIDATES);	/* progress */
			continue;
		}

		/* the candidates' copies of the sample go with the column's context */
		ct = palloc0(sizeof(ColumnTrial));
		measure_column(ct, values);
		res = ct->res;
		choose_candidate(res, prio, has_floor, floor, &choice);
		MemoryContextSwitchTo(oldcxt);

		for (int c = 0; c < (int) NCANDIDATES; c++)
		{
			Datum		vals[13];
			bool		nulls[13] = {0};
			char	   *reason;

			if (!res[c].done)
				continue;
			reason = reason_for(res, c, &choice, prio, has_floor, floor);
			vals[0] = NameGetDatum(&a->attname);
			vals[1] = CStringGetTextDatum(cx_codec_by_id(candidates[c].codec)->name);
			vals[2] = Int32GetDatum(candidates[c].level);
			nulls[2] = candidates[c].level == 0;
			vals[3] = BoolGetDatum(candidates[c].dictionary);
			vals[4] = rounded(ratio_of(&res[c]), 2);
			vals[5] = rounded(Min(res[c].compress_mb_s, ADVISE_SHOWN_MAX), 1);
			vals[6] = rounded(Min(res[c].decompress_mb_s, ADVISE_SHOWN_MAX), 1);
			vals[10] = rounded(Min(res[c].compress_rel, ADVISE_SHOWN_MAX), 2);
			vals[11] = rounded(Min(res[c].decompress_rel, ADVISE_SHOWN_MAX), 2);
			nulls[5] = nulls[6] = nulls[10] = nulls[11] = !res[c].timed;
			vals[7] = BoolGetDatum(c == choice.chosen);
			nulls[8] = nulls[9] = c != choice.chosen;
			if (c == choice.chosen)
			{
				char	   *apply = apply_statements(rel, is_cx, NameStr(a->attname), &candidates[c]);
				char	   *note = reason;

				if (list_length(values) < ADVISE_SMALL_SAMPLE)
					note = psprintf("%s; only %d values sampled: the figures are rough",
									reason, list_length(values));
				vals[8] = CStringGetTextDatum(note);
				nulls[9] = apply == NULL;
				if (apply)
					vals[9] = CStringGetTextDatum(apply);
			}
			vals[12] = CStringGetTextDatum(reason);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, vals, nulls);
		}
	}
	MemoryContextDelete(colcxt);
	cx_progress_end();			/* progress */
	relation_close(rel, NoLock);
	return (Datum) 0;
}
