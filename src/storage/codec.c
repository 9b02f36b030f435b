/*-------------------------------------------------------------------------
 *
 * codec.c
 *	  The codec table and the compress/decompress primitives of compressx.
 *
 * pglz uses core's implementation; lz4 is decoded with the bounds-checked
 * LZ4_decompress_safe only; zstd compression and decompression contexts are
 * created once per backend and reused (creating one per call made small
 * values several times slower to decode).
 *
 * Large zstd compressions stream the input in chunks, checking for
 * interrupts between them (a level-22 compression of 20 MB otherwise ran
 * for minutes deaf to cancel and terminate), with zstd's parameters
 * narrowed to fit compressx.max_codec_memory; those whose context would be
 * large use one of their own, whose memory is in a memory context deleted
 * afterwards or on error (the cached context kept the 100+ MB buffers of a
 * level-19 call).
 *
 * lz4's format (core's) is one block, which lz4 makes in one library call
 * that cannot be interrupted: a 224 MB value at level 12 ran 25 s deaf to
 * cancel.  Large lz4 inputs are compressed a chunk at a time with lz4's
 * streaming functions (each chunk sees the previous 64 kB as history),
 * checking for interrupts between chunks, and the chunks' blocks are
 * joined into one block (lz4_join_block): LZ4_decompress_safe, core's
 * decoder, reads it as it reads any other.  pglz likewise: its chunks are
 * compressed on their own (pglz_compress has no history to carry over;
 * its window is 4 kB) and their items written again under one run of
 * control bytes (pglz_join_chunk).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <lz4.h>
#include <lz4hc.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_decompressBound, ZSTD_c_forceAttachDict */
#include <zdict.h>
#include <zstd.h>

#include "common/pg_lzcompress.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "storage/codec.h"

/* Indexed by CxCodecId. */
static const CxCodec cx_codecs[CX_CODEC_COUNT] = {
	{CX_CODEC_NONE, "none", false, 0, 0, 0},
	{CX_CODEC_PGLZ, "pglz", false, 0, 0, 0},
	/* lz4: level 1 is the fast compressor, 2..12 the high-compression one */
	{CX_CODEC_LZ4, "lz4", true, 1, LZ4HC_CLEVEL_MAX, 1},
	/* zstd: negative levels are the "fast" ones */
	{CX_CODEC_ZSTD, "zstd", true, -7, 22, 3},
};

static ZSTD_CCtx *zstd_cctx = NULL;
static ZSTD_DCtx *zstd_dctx = NULL;

/* lz4 streams compressing with a dictionary, created once per backend */
static LZ4_stream_t *lz4_work = NULL;
static LZ4_streamHC_t *lz4hc_work = NULL;

/* lz4's history window: a dictionary longer than this is cut to its end */
#define CX_LZ4_WINDOW			(64 * 1024)

/*
 * lz4 inputs above these are compressed in chunks of this size, checking
 * for interrupts between them: levels 2-12 (HC) ran at 3-90 MB/s on a
 * 2-core test machine (hexadecimal text at level 12 the slowest), about
 * 45 ms per chunk at worst; level 1 at 300 MB/s and more.  Chunks are
 * larger than lz4's window: matches of every chunk but the first reach
 * back into the previous chunk only, never into a dictionary.
 */
#define CX_LZ4_CHUNK_HC			(128 * 1024)
#define CX_LZ4_CHUNK_FAST		(4 * 1024 * 1024)

/* pglz ran at 10-50 MB/s: 1 MB chunks, about 100 ms each at worst */
#define CX_PGLZ_CHUNK			(1024 * 1024)

/*
 * pglz's strategy for each chunk: core's PGLZ_strategy_default (the search
 * effort core's TOAST spends) without its giving up, which judges a whole
 * value: a chunk that does not shrink goes as literals, and the caller
 * judges the joined output.
 */
static const PGLZ_Strategy cx_pglz_chunk_strategy = {
	32,							/* min_input_size */
	INT_MAX,					/* max_input_size */
	0,							/* min_comp_rate */
	INT_MAX,					/* first_success_by */
	128,						/* match_size_good */
	10							/* match_size_drop */
};

/* compressx.max_codec_memory, in MB: zstd's compression memory per call */
static int	cx_max_codec_memory_mb = 256;

/*
 * Inputs above CX_ZSTD_CHUNK are streamed in chunks of that size: at level
 * 19 a 128 kB chunk takes about 50 ms on a 2-core test machine, level 22
 * about twice that, the time between interrupt checks.  They use the
 * cached context while zstd's estimate for the call stays within
 * CX_ZSTD_CACHED_CCTX_MAX (levels up to about 9 at any size: values of
 * tables at common levels create no context per value), else a context of
 * their own, freed with its memory context after the call.  zstd sizes its
 * tables to the input, so smaller inputs keep the cached context small.
 */
#define CX_ZSTD_CHUNK			(128 * 1024)
#define CX_ZSTD_CACHED_CCTX_MAX	(16 * 1024 * 1024)

/*
 * zstd's largest decoded size per compressed byte.  Every block decodes to
 * at most 128 kB (Block_Maximum_Size, RFC 8878 section 3.1.1.2.3) and
 * takes at least 4 bytes: a 3-byte block header and, for the most
 * expansive kind (an RLE block), one byte of content.  A frame therefore
 * never decodes to more than 131072 / 4 = 32768 times its size, whatever
 * its header declares.
 */
#define CX_ZSTD_MAX_EXPANSION	(131072 / 4)

void
cx_codec_init(void)
{
	DefineCustomIntVariable("compressx.max_codec_memory",
							"Memory one zstd compression may use.",
							"Above it, zstd's window and match tables are narrowed for the call "
							"(a slightly lower ratio at levels 20-22 on large values) rather than "
							"the memory taken.",
							&cx_max_codec_memory_mb, 256, 16, 4096,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
}

static int32
lz4_chunk_size(int level)
{
	return level <= 1 ? CX_LZ4_CHUNK_FAST : CX_LZ4_CHUNK_HC;
}

bool
cx_codec_compresses_in_chunks(const CxCodec *codec, int level, int64 srclen)
{
	switch (codec->id)
	{
		case CX_CODEC_LZ4:
			return srclen > lz4_chunk_size(level);
		case CX_CODEC_ZSTD:
			return srclen > CX_ZSTD_CHUNK;
		case CX_CODEC_PGLZ:
			return srclen > CX_PGLZ_CHUNK;
		default:
			return false;
	}
}

const CxCodec *
cx_codec_by_id(int id)
{
	if (id < 0 || id >= CX_CODEC_COUNT)
		return NULL;
	return &cx_codecs[id];
}

/*
 * Comma-separated list of codec names, for error messages.  palloc'd.
 */
char *
cx_codec_names_list(void)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < CX_CODEC_COUNT; i++)
		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "", cx_codecs[i].name);
	return buf.data;
}

const CxCodec *
cx_codec_by_name_or_error(const char *name)
{
	for (int i = 0; i < CX_CODEC_COUNT; i++)
	{
		if (pg_strcasecmp(name, cx_codecs[i].name) == 0)
			return &cx_codecs[i];
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown compression codec \"%s\"", name),
			 errhint("Valid codecs are: %s.", cx_codec_names_list())));
	return NULL;				/* keep compiler quiet */
}

/*
 * Return the level to use: the default when level_isnull, else the given
 * level after checking its range.
 */
int
cx_codec_resolve_level(const CxCodec *codec, bool level_isnull, int level)
{
	if (level_isnull)
		return codec->default_level;
	if (!codec->has_levels)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("codec \"%s\" does not take a level", codec->name),
				 errhint("Pass NULL as the level, or choose lz4 or zstd.")));
	if (level < codec->min_level || level > codec->max_level)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("level %d is out of range for codec \"%s\"",
						level, codec->name),
				 errhint("Valid levels for %s are %d to %d.",
						 codec->name, codec->min_level, codec->max_level)));
	return level;
}

const char *
cx_codec_library_version(const CxCodec *codec)
{
	switch (codec->id)
	{
		case CX_CODEC_NONE:
			return NULL;
		case CX_CODEC_PGLZ:
			return PG_VERSION;
		case CX_CODEC_LZ4:
			return LZ4_versionString();
		case CX_CODEC_ZSTD:
			return ZSTD_versionString();
	}
	return NULL;
}

int32
cx_codec_bound(const CxCodec *codec, int32 srclen)
{
	switch (codec->id)
	{
		case CX_CODEC_NONE:
			return srclen;
		case CX_CODEC_PGLZ:
			return PGLZ_MAX_OUTPUT(srclen);
		case CX_CODEC_LZ4:
			return LZ4_compressBound(srclen);
		case CX_CODEC_ZSTD:
			return (int32) ZSTD_compressBound(srclen);
	}
	elog(ERROR, "invalid compressx codec id %d", (int) codec->id);
	return 0;
}

static void
zstd_ensure_contexts(void)
{
	if (zstd_cctx == NULL)
	{
		zstd_cctx = ZSTD_createCCtx();
		if (zstd_cctx == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a zstd compression context.")));
	}
	if (zstd_dctx == NULL)
	{
		zstd_dctx = ZSTD_createDCtx();
		if (zstd_dctx == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a zstd decompression context.")));
	}
}

/*
 * zstd's parameters for level on srclen bytes, narrowed so that a
 * streaming context for them takes at most limit bytes (or to zstd's
 * smallest window).
 */
static ZSTD_compressionParameters
zstd_params(int level, int32 srclen, size_t limit)
{
	ZSTD_compressionParameters cp = ZSTD_getCParams(level, (unsigned long long) srclen, 0);

	while (ZSTD_estimateCStreamSize_usingCParams(cp) > limit &&
		   cp.windowLog > ZSTD_WINDOWLOG_MIN)
	{
		cp.windowLog--;
		cp.chainLog = Min(cp.chainLog, cp.windowLog + 1);
		cp.hashLog = Min(cp.hashLog, cp.windowLog + 1);
		cp = ZSTD_adjustCParams(cp, (unsigned long long) srclen, 0);
	}
	return cp;
}

/* Set a parameter that bounds memory: it must take */
static void
zstd_set(ZSTD_CCtx *cctx, ZSTD_cParameter param, int value)
{
	size_t		rc = ZSTD_CCtx_setParameter(cctx, param, value);

	if (ZSTD_isError(rc))
		elog(ERROR, "could not set zstd compression parameter %d to %d: %s",
			 (int) param, value, ZSTD_getErrorName(rc));
}

/* zstd's allocator for a context of its own: memory in a MemoryContext */
static void *
zstd_palloc(void *opaque, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) opaque, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
zstd_pfree(void *opaque, void *address)
{
	if (address)
		pfree(address);
}

/*
 * Compress src CX_ZSTD_CHUNK bytes of input at a time, checking for
 * interrupts between chunks.  A context of its own keeps zstd's memory in a
 * memory context deleted on return, and with it on error or cancel; the
 * cached one is reset by its next use.  The frame is what ZSTD_compress2() makes: content size (pledged
 * up front) and checksum; with a dictionary, its parameters and no id.
 *
 * compressx.max_codec_memory bounds the call with a dictionary too (it did
 * not: a 96 MB value at level 22 took 846 MB with one, 316 MB without).
 * zstd compresses with a digested dictionary (CDict) in one of two ways:
 * for an input under six times the dictionary's size it copies the
 * digest's tables into the context (their size is the digest's, set by
 * the dictionary's size and the level), else it loads the dictionary's
 * content into a context sized for the input by the level, ignoring the
 * digest's tables.  Either way the window, chain and hash logs set on the
 * context override the level's, so they are narrowed here as without a
 * dictionary, to what the bound leaves beside the digest (which this call
 * needs and holds); and when copying the digest's tables would not fit,
 * zstd is made to load the dictionary instead (ZSTD_dictForceLoad, in
 * libzstd since 1.3.7), which costs the time of digesting the dictionary
 * again, once per value.
 */
static int32
zstd_compress_chunked(int level, const void *dict, const char *src, int32 srclen,
					  char *dst, int32 dstcap)
{
	size_t		limit = (size_t) cx_max_codec_memory_mb * 1024 * 1024;
	size_t		digest = dict ? ZSTD_sizeof_CDict((const ZSTD_CDict *) dict) : 0;
	size_t		budget = limit > digest ? limit - digest : 0;
	ZSTD_compressionParameters cp = zstd_params(level, srclen, budget);
	size_t		need = ZSTD_estimateCStreamSize_usingCParams(cp);
	bool		force_load = false;
	MemoryContext cxt = NULL;
	ZSTD_CCtx  *cctx;
	ZSTD_inBuffer in = {src, 0, 0};
	ZSTD_outBuffer out = {dst, (size_t) dstcap, 0};
	size_t		rc;

	if (dict)
	{
		/* a copy of the digest's tables: at most digest bytes more */
		if (need + digest > budget)
			force_load = true;
		else
			need += digest;
	}
	if (need <= CX_ZSTD_CACHED_CCTX_MAX)
	{
		zstd_ensure_contexts();
		cctx = zstd_cctx;
		ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
	}
	else
	{
		ZSTD_customMem mem = {zstd_palloc, zstd_pfree, NULL};

		mem.opaque = cxt = AllocSetContextCreate(CurrentMemoryContext,
												 "compressx zstd compression",
												 ALLOCSET_DEFAULT_SIZES);
		cctx = ZSTD_createCCtx_advanced(mem);
		if (cctx == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a zstd compression context.")));
	}
	if (dict)
	{
		/* the digest's level applies; the logs below override it */
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0);
		ZSTD_CCtx_refCDict(cctx, (const ZSTD_CDict *) dict);
		if (force_load)
			zstd_set(cctx, ZSTD_c_forceAttachDict, ZSTD_dictForceLoad);
	}
	else
		zstd_set(cctx, ZSTD_c_compressionLevel, level);
	zstd_set(cctx, ZSTD_c_windowLog, (int) cp.windowLog);
	zstd_set(cctx, ZSTD_c_chainLog, (int) cp.chainLog);
	zstd_set(cctx, ZSTD_c_hashLog, (int) cp.hashLog);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	ZSTD_CCtx_setPledgedSrcSize(cctx, (unsigned long long) srclen);
	do
	{
		ZSTD_EndDirective mode;

		CHECK_FOR_INTERRUPTS();
		in.size = Min((size_t) srclen, in.pos + CX_ZSTD_CHUNK);
		mode = in.size == (size_t) srclen ? ZSTD_e_end : ZSTD_e_continue;
		rc = ZSTD_compressStream2(cctx, &out, &in, mode);
		if (ZSTD_isError(rc))
			elog(ERROR, "zstd compression failed: %s", ZSTD_getErrorName(rc));
		/* the output buffer holds ZSTD_compressBound(): zstd never waits on it */
		if (mode == ZSTD_e_end && rc != 0 && out.pos == out.size)
			elog(ERROR, "zstd compression overran its buffer");
	} while (!(in.pos == (size_t) srclen && rc == 0));
	if (cxt)
		MemoryContextDelete(cxt);
	return (int32) out.pos;
}

/*
 * lz4 with a dictionary.  Level 1: the work stream becomes a copy of the
 * digest's stream, which has the dictionary loaded (LZ4_attach_dictionary
 * would avoid the 16 kB copy, but liblz4 does not export it).  Levels 2-12
 * (HC): the HC stream loads the dictionary for every value (256 kB of state
 * is no cheaper to copy); slow, as HC is.
 */
static int
lz4_compress_with_dict(const CxLz4Dict *d, int level, const char *src,
					   int32 srclen, char *dst, int32 dstcap)
{
	if (level <= 1)
	{
		if (lz4_work == NULL)
			lz4_work = MemoryContextAlloc(TopMemoryContext, sizeof(LZ4_stream_t));
		memcpy(lz4_work, d->stream, sizeof(LZ4_stream_t));
		return LZ4_compress_fast_continue(lz4_work, src, dst, srclen, dstcap, 1);
	}
	if (lz4hc_work == NULL)
	{
		lz4hc_work = MemoryContextAlloc(TopMemoryContext, sizeof(LZ4_streamHC_t));
		if (LZ4_initStreamHC(lz4hc_work, sizeof(LZ4_streamHC_t)) == NULL)
			elog(ERROR, "could not initialize an lz4 stream");
	}
	LZ4_resetStreamHC_fast(lz4hc_work, level);
	LZ4_loadDictHC(lz4hc_work, d->content, d->len);
	return LZ4_compress_HC_continue(lz4hc_work, src, dst, srclen, dstcap);
}

/*
 * Append one lz4 sequence to *op (at most oend): litlen literals from lit,
 * then, unless mlen is 0 (the block's last sequence), a match of mlen bytes
 * at distance off.  Returns false, writing nothing, when it does not fit.
 */
static bool
lz4_put_sequence(char **op, const char *oend, const char *lit, size_t litlen,
				 uint32 off, size_t mlen)
{
	unsigned char *o = (unsigned char *) *op;
	unsigned char *token;
	size_t		need;
	size_t		rest;

	need = 1 + (litlen >= 15 ? (litlen - 15) / 255 + 1 : 0) + litlen;
	if (mlen > 0)
		need += 2 + (mlen - 4 >= 15 ? (mlen - 4 - 15) / 255 + 1 : 0);
	if (need > (size_t) (oend - *op))
		return false;
	token = o++;
	if (litlen >= 15)
	{
		*token = 15 << 4;
		for (rest = litlen - 15; rest >= 255; rest -= 255)
			*o++ = 255;
		*o++ = (unsigned char) rest;
	}
	else
		*token = (unsigned char) (litlen << 4);
	memcpy(o, lit, litlen);
	o += litlen;
	if (mlen > 0)
	{
		*o++ = (unsigned char) (off & 0xff);
		*o++ = (unsigned char) (off >> 8);
		if (mlen - 4 >= 15)
		{
			*token |= 15;
			for (rest = mlen - 4 - 15; rest >= 255; rest -= 255)
				*o++ = 255;
			*o++ = (unsigned char) rest;
		}
		else
			*token |= (unsigned char) (mlen - 4);
	}
	*op = (char *) o;
	return true;
}

/*
 * Join the lz4 block blk (blen bytes), which lz4's streaming compressor
 * made of src[start, end), to the block being written at *op: every
 * sequence of blk but its last is written again; the literals of blk's
 * last sequence (a block ends with literals only) stay pending, from
 * *anchor, and open the next sequence written, as the decompressed bytes
 * are one run.  Match distances mean the same in the joined block: they
 * count back in the decompressed bytes, which are the same.  Returns false
 * when the output does not fit.
 */
static bool
lz4_join_block(const unsigned char *blk, int32 blen, const char *src,
			   int32 start, int32 end, int32 *anchor, char **op, const char *oend)
{
	const unsigned char *p = blk;
	const unsigned char *pend = blk + blen;
	int64		ip = start;

	while (p < pend)
	{
		unsigned	token = *p++;
		size_t		litlen = token >> 4;
		size_t		mlen = token & 15;
		uint32		off;
		unsigned	b;

		if (litlen == 15)
			do
			{
				if (p >= pend)
					goto bad;
				b = *p++;
				litlen += b;
			} while (b == 255);
		if (litlen > (size_t) (pend - p) || ip + litlen > end)
			goto bad;
		p += litlen;
		ip += litlen;
		if (p == pend)
			break;				/* the last sequence: literals only */
		if (pend - p < 2)
			goto bad;
		off = p[0] | (p[1] << 8);
		p += 2;
		if (mlen == 15)
			do
			{
				if (p >= pend)
					goto bad;
				b = *p++;
				mlen += b;
			} while (b == 255);
		mlen += 4;
		if (off == 0 || ip + mlen > end)
			goto bad;
		if (!lz4_put_sequence(op, oend, src + *anchor, ip - *anchor, off, mlen))
			return false;
		ip += mlen;
		*anchor = (int32) ip;
	}
	if (ip != end)
		goto bad;
	return true;

bad:
	elog(ERROR, "lz4 compression made a block compressx cannot join");
	return false;
}

/*
 * lz4 on src in chunks (see the file header): one block in dst, the same
 * format LZ4_compress_default or LZ4_compress_HC makes, or -1 when it does
 * not fit in dstcap.  d: a digested dictionary, or NULL.
 */
static int32
lz4_compress_chunked(const CxLz4Dict *d, int level, const char *src,
					 int32 srclen, char *dst, int32 dstcap)
{
	int32		chunk = lz4_chunk_size(level);
	int32		blkcap = LZ4_compressBound(chunk);
	unsigned char *blk = palloc(blkcap);
	char	   *op = dst;
	const char *oend = dst + dstcap;
	int32		pos = 0;
	int32		anchor = 0;
	int32		result = -1;

	if (level <= 1)
	{
		if (lz4_work == NULL)
			lz4_work = MemoryContextAlloc(TopMemoryContext, sizeof(LZ4_stream_t));
		if (d)
			memcpy(lz4_work, d->stream, sizeof(LZ4_stream_t));
		else if (LZ4_initStream(lz4_work, sizeof(LZ4_stream_t)) == NULL)
			elog(ERROR, "could not initialize an lz4 stream");
	}
	else
	{
		if (lz4hc_work == NULL)
		{
			lz4hc_work = MemoryContextAlloc(TopMemoryContext, sizeof(LZ4_streamHC_t));
			if (LZ4_initStreamHC(lz4hc_work, sizeof(LZ4_streamHC_t)) == NULL)
				elog(ERROR, "could not initialize an lz4 stream");
		}
		LZ4_resetStreamHC_fast(lz4hc_work, level);
		if (d)
			LZ4_loadDictHC(lz4hc_work, d->content, d->len);
	}

	while (pos < srclen)
	{
		int32		len = Min(chunk, srclen - pos);
		int			n;

		CHECK_FOR_INTERRUPTS();
		/* src is one buffer: each chunk continues the previous one */
		if (level <= 1)
			n = LZ4_compress_fast_continue(lz4_work, src + pos, (char *) blk,
										   len, blkcap, 1);
		else
			n = LZ4_compress_HC_continue(lz4hc_work, src + pos, (char *) blk,
										 len, blkcap);
		if (n <= 0)
			elog(ERROR, "lz4 compression failed");
		if (!lz4_join_block(blk, n, src, pos, pos + len, &anchor, &op, oend))
			goto done;
		pos += len;
	}
	/* the pending literals end the block */
	if (lz4_put_sequence(&op, oend, src + anchor, srclen - anchor, 0, 0))
		result = (int32) (op - dst);
done:
	pfree(blk);
	return result;
}

/* pglz output being written: items under control bytes, as pglz_compress */
typedef struct PglzOut
{
	unsigned char *op;
	unsigned char *oend;
	unsigned char *ctrlp;		/* the current control byte */
	unsigned	ctrlbit;		/* its next bit; 0x100: a new one is due */
} PglzOut;

/*
 * Append one pglz item: a literal byte (len 0) or a match of len bytes at
 * distance off (pg_lzcompress.c's tag: 2 bytes, 3 when len exceeds 17).
 * Returns false, writing nothing, when it does not fit.
 */
static bool
pglz_put_item(PglzOut *o, unsigned char literal, int32 off, int32 len)
{
	if (o->oend - o->op < 4)
		return false;
	if (o->ctrlbit > 0x80)
	{
		o->ctrlp = o->op++;
		*o->ctrlp = 0;
		o->ctrlbit = 1;
	}
	if (len == 0)
		*o->op++ = literal;
	else
	{
		*o->ctrlp |= o->ctrlbit;
		if (len > 17)
		{
			*o->op++ = (unsigned char) (((off & 0xf00) >> 4) | 0x0f);
			*o->op++ = (unsigned char) (off & 0xff);
			*o->op++ = (unsigned char) (len - 18);
		}
		else
		{
			*o->op++ = (unsigned char) (((off & 0xf00) >> 4) | (len - 3));
			*o->op++ = (unsigned char) (off & 0xff);
		}
	}
	o->ctrlbit <<= 1;
	return true;
}

/*
 * Write the items of chunk, which pglz_compress made of chunklen bytes
 * (clen bytes; -1: it declined, and the chunk's bytes go as literals),
 * after those written so far.  Its matches reach back within the chunk
 * only, so their distances mean the same in the joined output.  Returns
 * false when the output does not fit.
 */
static bool
pglz_join_chunk(PglzOut *o, const unsigned char *chunk, int32 clen,
				const char *src, int32 chunklen)
{
	const unsigned char *p = chunk;
	const unsigned char *pend = chunk + clen;
	int64		produced = 0;

	if (clen < 0)
	{
		for (int32 i = 0; i < chunklen; i++)
			if (!pglz_put_item(o, (unsigned char) src[i], 0, 0))
				return false;
		return true;
	}
	while (p < pend)
	{
		unsigned	ctrl = *p++;

		for (unsigned bit = 1; bit <= 0x80 && p < pend; bit <<= 1)
		{
			if (ctrl & bit)
			{
				int32		len;
				int32		off;

				if (pend - p < 2)
					goto bad;
				len = (p[0] & 0x0f) + 3;
				off = ((p[0] & 0xf0) << 4) | p[1];
				p += 2;
				if (len == 18)
				{
					if (p >= pend)
						goto bad;
					len += *p++;
				}
				if (off == 0 || off > produced || produced + len > chunklen)
					goto bad;
				if (!pglz_put_item(o, 0, off, len))
					return false;
				produced += len;
			}
			else
			{
				if (produced >= chunklen)
					goto bad;
				if (!pglz_put_item(o, *p++, 0, 0))
					return false;
				produced++;
			}
		}
	}
	if (produced != chunklen)
		goto bad;
	return true;

bad:
	elog(ERROR, "pglz compression made output compressx cannot join");
	return false;
}

/*
 * pglz on src in chunks (see the file header): pglz's format in dst, or -1
 * when it does not fit in dstcap.
 */
static int32
pglz_compress_chunked(const char *src, int32 srclen, char *dst, int32 dstcap)
{
	unsigned char *chunk = palloc(PGLZ_MAX_OUTPUT(CX_PGLZ_CHUNK));
	PglzOut		o;
	int32		pos = 0;
	int32		result = -1;

	o.op = (unsigned char *) dst;
	o.oend = (unsigned char *) dst + dstcap;
	o.ctrlp = NULL;
	o.ctrlbit = 0x100;
	while (pos < srclen)
	{
		int32		len = Min(CX_PGLZ_CHUNK, srclen - pos);
		int32		clen;

		CHECK_FOR_INTERRUPTS();
		clen = pglz_compress(src + pos, len, (char *) chunk, &cx_pglz_chunk_strategy);
		if (!pglz_join_chunk(&o, chunk, clen, src + pos, len))
			goto done;
		pos += len;
	}
	result = (int32) ((char *) o.op - dst);
done:
	pfree(chunk);
	return result;
}

CxLz4Dict *
cx_codec_lz4_dict_create(const char *dict, int32 dictlen)
{
	CxLz4Dict  *d;
	size_t		skip = 0;

	/* a trained (zstd-format) dictionary: its content follows the header */
	if (dictlen >= 8 && ZDICT_getDictID(dict, dictlen) != 0)
	{
		skip = ZDICT_getDictHeaderSize(dict, dictlen);
		if (ZDICT_isError(skip) || skip >= (size_t) dictlen)
			return NULL;
	}
	if ((size_t) dictlen - skip > CX_LZ4_WINDOW)
		skip = dictlen - CX_LZ4_WINDOW;
	d = palloc(sizeof(CxLz4Dict));
	d->content = dict + skip;
	d->len = dictlen - (int32) skip;
	d->stream = palloc(sizeof(LZ4_stream_t));
	if (LZ4_initStream(d->stream, sizeof(LZ4_stream_t)) == NULL)
		elog(ERROR, "could not initialize an lz4 stream");
	LZ4_loadDict(d->stream, d->content, d->len);
	return d;
}

void
cx_codec_lz4_dict_free(CxLz4Dict *d)
{
	if (d == NULL)
		return;
	pfree(d->stream);
	pfree(d);
}

Size
cx_codec_lz4_dict_size(void)
{
	return sizeof(CxLz4Dict) + sizeof(LZ4_stream_t);
}

int32
cx_codec_compress(const CxCodec *codec, int level, const void *dict,
				  const char *src, int32 srclen, char *dst, int32 dstcap)
{
	Assert(dict == NULL || codec->id == CX_CODEC_ZSTD || codec->id == CX_CODEC_LZ4);
	switch (codec->id)
	{
		case CX_CODEC_NONE:
			Assert(dstcap >= srclen);
			memcpy(dst, src, srclen);
			return srclen;

		case CX_CODEC_PGLZ:
			if (srclen > CX_PGLZ_CHUNK)
				return pglz_compress_chunked(src, srclen, dst, dstcap);
			return pglz_compress(src, srclen, dst, PGLZ_strategy_always);

		case CX_CODEC_LZ4:
			{
				int			n;

				if (srclen > lz4_chunk_size(level))
					return lz4_compress_chunked((const CxLz4Dict *) dict, level,
												src, srclen, dst, dstcap);
				if (dict)
					n = lz4_compress_with_dict((const CxLz4Dict *) dict, level,
											   src, srclen, dst, dstcap);
				else if (level <= 1)
					n = LZ4_compress_default(src, dst, srclen, dstcap);
				else
					n = LZ4_compress_HC(src, dst, srclen, dstcap, level);
				if (n <= 0)
					elog(ERROR, "lz4 compression failed");
				return n;
			}

		case CX_CODEC_ZSTD:
			{
				size_t		n;

				if (srclen > CX_ZSTD_CHUNK)
					return zstd_compress_chunked(level, dict, src, srclen, dst, dstcap);

				zstd_ensure_contexts();

				/*
				 * Content size and checksum in every frame: decoding verifies
				 * both.  With a dictionary, its level, and no dictionary id in
				 * the frame (compressx's format names the dictionary).  The
				 * reset drops the previous call's dictionary reference too.
				 */
				ZSTD_CCtx_reset(zstd_cctx, ZSTD_reset_session_and_parameters);
				ZSTD_CCtx_setParameter(zstd_cctx, ZSTD_c_checksumFlag, 1);
				ZSTD_CCtx_setParameter(zstd_cctx, ZSTD_c_contentSizeFlag, 1);
				if (dict)
				{
					ZSTD_CCtx_setParameter(zstd_cctx, ZSTD_c_dictIDFlag, 0);
					ZSTD_CCtx_refCDict(zstd_cctx, (const ZSTD_CDict *) dict);
				}
				else
					ZSTD_CCtx_setParameter(zstd_cctx, ZSTD_c_compressionLevel, level);
				n = ZSTD_compress2(zstd_cctx, dst, dstcap, src, srclen);
				if (ZSTD_isError(n))
					elog(ERROR, "zstd compression failed: %s",
						 ZSTD_getErrorName(n));
				return (int32) n;
			}
	}
	elog(ERROR, "invalid compressx codec id %d", (int) codec->id);
	return -1;
}

bool
cx_codec_plausible_rawlen_bound(const CxCodec *codec, int64 srclen, int32 rawlen)
{
	if (rawlen < 0 || srclen < 0)
		return false;
	switch (codec->id)
	{
		case CX_CODEC_NONE:
			return rawlen == srclen;
		case CX_CODEC_PGLZ:
			/* a 3-byte match tag expands to at most 273 bytes */
			return (int64) rawlen <= srclen * 91 + 8;
		case CX_CODEC_LZ4:
			/* every extra length byte adds at most 255 bytes */
			return (int64) rawlen <= srclen * 255 + 16;
		case CX_CODEC_ZSTD:
			return (int64) rawlen <= srclen * CX_ZSTD_MAX_EXPANSION;
	}
	return false;
}

bool
cx_codec_plausible_rawlen(const CxCodec *codec, const char *src, int32 srclen,
						  int32 rawlen)
{
	if (!cx_codec_plausible_rawlen_bound(codec, srclen, rawlen))
		return false;
	if (codec->id == CX_CODEC_ZSTD)
	{
		unsigned long long content = ZSTD_getFrameContentSize(src, srclen);
		unsigned long long bound;

		/*
		 * The frame header's size must match, and be one its blocks can
		 * produce: a header is only a claim, and the caller allocates what
		 * it says.
		 */
		if (content == ZSTD_CONTENTSIZE_ERROR ||
			content == ZSTD_CONTENTSIZE_UNKNOWN ||
			content != (unsigned long long) rawlen)
			return false;
		bound = ZSTD_decompressBound(src, srclen);
		return bound != ZSTD_CONTENTSIZE_ERROR &&
			bound >= (unsigned long long) rawlen;
	}
	return true;
}

bool
cx_codec_decompress(const CxCodec *codec, const void *dict,
					const char *src, int32 srclen, char *dst, int32 rawlen)
{
	Assert(dict == NULL || codec->id == CX_CODEC_ZSTD || codec->id == CX_CODEC_LZ4);
	switch (codec->id)
	{
		case CX_CODEC_NONE:
			if (srclen != rawlen)
				return false;
			memcpy(dst, src, rawlen);
			return true;

		case CX_CODEC_PGLZ:
			return pglz_decompress(src, srclen, dst, rawlen, true) == rawlen;

		case CX_CODEC_LZ4:
			if (dict)
				return LZ4_decompress_safe_usingDict(src, dst, srclen, rawlen,
													 ((const CxLz4Dict *) dict)->content,
													 ((const CxLz4Dict *) dict)->len) == rawlen;
			return LZ4_decompress_safe(src, dst, srclen, rawlen) == rawlen;

		case CX_CODEC_ZSTD:
			{
				size_t		n;

				zstd_ensure_contexts();
				n = ZSTD_decompress_usingDDict(zstd_dctx, dst, rawlen, src, srclen,
											   (const ZSTD_DDict *) dict);
				return !ZSTD_isError(n) && n == (size_t) rawlen;
			}
	}
	return false;
}
