/*
 * codec_micro.c: per-value cost of zstd and lz4 with a trained dictionary
 * on small values, outside PostgreSQL (test/bench/PROFILES.md).
 *
 *   codec_micro VALUES_FILE
 *
 * VALUES_FILE: records of a 4-byte little-endian length and the value's
 * bytes (codec_micro.sh writes one from make_json.py's documents).  A
 * dictionary is trained on every sixth value (as train_dictionary samples
 * a part of the table); every value is compressed once and decompressed
 * five times; each line gives the stored ratio, compression speed and the
 * time to decompress one value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <lz4.h>
#include <lz4hc.h>
#include <zdict.h>
#include <zstd.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int	n;
static char **val;
static size_t *len;
static size_t total;

static void
load(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	long		sz;
	char	   *buf;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0)
	{
		perror(path);
		exit(1);
	}
	rewind(f);
	buf = malloc(sz);
	if (fread(buf, 1, sz, f) != (size_t) sz)
	{
		perror(path);
		exit(1);
	}
	val = malloc(sizeof(char *) * (sz / 4 + 1));
	len = malloc(sizeof(size_t) * (sz / 4 + 1));
	for (long p = 0; p + 4 <= sz;)
	{
		unsigned	l;

		memcpy(&l, buf + p, 4);
		p += 4;
		val[n] = buf + p;
		len[n] = l;
		total += l;
		p += l;
		n++;
	}
}

/* compress every value with f, decompress 5 times with g; print a line */
typedef size_t (*compress_fn) (int i, char *dst, size_t cap, void *arg);
typedef size_t (*decompress_fn) (const char *src, size_t srclen, char *dst, size_t rawlen, void *arg);

static void
run(const char *label, compress_fn f, decompress_fn g, void *arg)
{
	char	  **c = malloc(sizeof(char *) * n);
	size_t	   *cl = malloc(sizeof(size_t) * n);
	char	   *tmp = malloc(1 << 20);
	char	   *out = malloc(1 << 20);
	size_t		stored = 0;
	double		t0,
				t1,
				t2;

	t0 = now();
	for (int i = 0; i < n; i++)
	{
		cl[i] = f(i, tmp, 1 << 20, arg);
		c[i] = malloc(cl[i]);
		memcpy(c[i], tmp, cl[i]);
		stored += cl[i];
	}
	t1 = now();
	for (int r = 0; r < 5; r++)
		for (int i = 0; i < n; i++)
			if (g(c[i], cl[i], out, len[i], arg) != len[i] || memcmp(out, val[i], len[i]) != 0)
			{
				fprintf(stderr, "%s: value %d does not round-trip\n", label, i);
				exit(1);
			}
	t2 = now();
	printf("%-28s ratio %.3f  compress %6.1f MB/s  decompress %5.0f ns/value\n",
		   label, (double) total / stored, total / 1e6 / (t1 - t0), (t2 - t1) / 5 / n * 1e9);
	for (int i = 0; i < n; i++)
		free(c[i]);
	free(c);
	free(cl);
	free(tmp);
	free(out);
}

typedef struct
{
	ZSTD_CCtx  *cc;
	ZSTD_DCtx  *dc;
	ZSTD_CDict *cd;
	ZSTD_DDict *dd;
	const char *dict;
	int			dictlen;
	int			level;
	LZ4_stream_t *loaded;
	LZ4_stream_t *work;
	LZ4_streamHC_t *hc;
} Ctx;

static size_t
zc(int i, char *dst, size_t cap, void *arg)
{
	Ctx		   *x = arg;

	ZSTD_CCtx_reset(x->cc, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(x->cc, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(x->cc, ZSTD_c_dictIDFlag, 0);
	ZSTD_CCtx_refCDict(x->cc, x->cd);
	return ZSTD_compress2(x->cc, dst, cap, val[i], len[i]);
}

static size_t
zd(const char *src, size_t srclen, char *dst, size_t rawlen, void *arg)
{
	Ctx		   *x = arg;

	return ZSTD_decompress_usingDDict(x->dc, dst, rawlen, src, srclen, x->dd);
}

static size_t
lc(int i, char *dst, size_t cap, void *arg)
{
	Ctx		   *x = arg;

	if (x->level <= 1)
	{
		memcpy(x->work, x->loaded, sizeof(LZ4_stream_t));
		return LZ4_compress_fast_continue(x->work, val[i], dst, len[i], cap, 1);
	}
	LZ4_resetStreamHC_fast(x->hc, x->level);
	LZ4_loadDictHC(x->hc, x->dict, x->dictlen);
	return LZ4_compress_HC_continue(x->hc, val[i], dst, len[i], cap);
}

static size_t
ld(const char *src, size_t srclen, char *dst, size_t rawlen, void *arg)
{
	Ctx		   *x = arg;
	int			r = LZ4_decompress_safe_usingDict(src, dst, srclen, rawlen, x->dict, x->dictlen);

	return r < 0 ? 0 : (size_t) r;
}

int
main(int argc, char **argv)
{
	static const int dictsizes[] = {16384, 65536, 112640};
	static const int zlevels[] = {1, 3, 9, 19};
	static const int llevels[] = {1, 9};

	if (argc != 2)
	{
		fprintf(stderr, "usage: %s VALUES_FILE\n", argv[0]);
		return 2;
	}
	load(argv[1]);
	printf("%d values, %zu bytes\n", n, total);
	for (int d = 0; d < 3; d++)
	{
		char	   *sample = malloc(total);
		size_t	   *sl = malloc(sizeof(size_t) * n);
		size_t		ns = 0,
					sb = 0;
		char	   *dict = malloc(dictsizes[d]);
		size_t		dl;
		size_t		hdr;
		Ctx			x = {0};
		char		label[64];

		for (int i = 0; i < n; i += 6)
		{
			memcpy(sample + sb, val[i], len[i]);
			sl[ns++] = len[i];
			sb += len[i];
		}
		dl = ZDICT_trainFromBuffer(dict, dictsizes[d], sample, sl, ns);
		if (ZDICT_isError(dl))
		{
			fprintf(stderr, "training failed: %s\n", ZDICT_getErrorName(dl));
			return 1;
		}
		x.cc = ZSTD_createCCtx();
		x.dc = ZSTD_createDCtx();
		x.dd = ZSTD_createDDict(dict, dl);
		for (int l = 0; l < 4; l++)
		{
			x.cd = ZSTD_createCDict(dict, dl, zlevels[l]);
			snprintf(label, sizeof(label), "zstd %d, %d kB dict", zlevels[l], dictsizes[d] / 1024);
			run(label, zc, zd, &x);
			ZSTD_freeCDict(x.cd);
		}
		/* lz4: the content after the zstd header, its last 64 kB */
		hdr = ZDICT_getDictHeaderSize(dict, dl);
		if (dl - hdr > 65536)
			hdr = dl - 65536;
		x.dict = dict + hdr;
		x.dictlen = dl - hdr;
		x.loaded = LZ4_createStream();
		x.work = LZ4_createStream();
		x.hc = LZ4_createStreamHC();
		LZ4_loadDict(x.loaded, x.dict, x.dictlen);
		for (int l = 0; l < 2; l++)
		{
			x.level = llevels[l];
			snprintf(label, sizeof(label), "lz4 %d, %d kB dict", llevels[l], x.dictlen / 1024);
			run(label, lc, ld, &x);
		}
		free(sample);
		free(sl);
	}
	return 0;
}
