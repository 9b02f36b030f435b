/*
 * fuzz_decode.c
 *	  libFuzzer harness for every decoder of compressx: the frames of
 *	  compressx.decompress(), the access method's inline zstd values (with
 *	  and without a dictionary, see fuzz_stubs.c), its
 *	  24-byte out-of-line references (with their TOAST body), and the raw
 *	  pglz, lz4 and zstd decoders behind them.  The first input byte picks
 *	  the target.  A decoder may reject input (an ereport, caught here); it
 *	  must never crash, read or write out of bounds, or allocate more than
 *	  its size checks allow.
 *
 *	  Built with -DFUZZ_SEEDS it is instead a program writing a seed corpus
 *	  of valid inputs for each target (test/fuzz/corpus/).
 */
#include "postgres.h"

#include <stdio.h>

#include "fmgr.h"

#include "catalog/dict.h"
#include "storage/codec.h"
#include "storage/format.h"
#include "fuzz_stubs.h"

extern Datum compressx_decompress(PG_FUNCTION_ARGS);

enum
{
	T_FRAME, T_INLINE, T_REF, T_RAW, T_COUNT
};

static void
run_target(int target, const uint8_t *data, size_t size)
{
	switch (target)
	{
		case T_FRAME:
			{
				bytea	   *b = palloc(VARHDRSZ + size);

				LOCAL_FCINFO(fcinfo, 1);
				SET_VARSIZE(b, VARHDRSZ + size);
				memcpy(VARDATA(b), data, size);
				fcinfo->args[0].value = PointerGetDatum(b);
				fcinfo->args[0].isnull = false;
				(void) compressx_decompress(fcinfo);
				break;
			}
		case T_INLINE:
			{
				/* 4 bytes of raw size, then the body after va_tcinfo */
				uint32		rawlen;
				struct varlena *v;

				if (size < 4)
					return;
				memcpy(&rawlen, data, 4);
				v = palloc(VARHDRSZ_COMPRESSED + size - 4);
				SET_VARSIZE_COMPRESSED(v, VARHDRSZ_COMPRESSED + size - 4);
				((varattrib_4b *) v)->va_compressed.va_tcinfo =
					(rawlen & VARLENA_EXTSIZE_MASK) | ((uint32) CX_METHOD_ID << VARLENA_EXTSIZE_BITS);
				memcpy((char *) v + VARHDRSZ_COMPRESSED, data + 4, size - 4);
				(void) cx_own_dict_id(v, InvalidOid);
				(void) cx_decode(v, InvalidOid, "fuzzed");
				break;
			}
		case T_REF:
			{
				/* 4 bytes raw size, 16 bytes of reference, then the TOAST body */
				uint32		rawlen;
				struct varlena *v;

				if (size < 20)
					return;
				memcpy(&rawlen, data, 4);
				v = palloc(CX_REF_SIZE);
				SET_VARSIZE_COMPRESSED(v, CX_REF_SIZE);
				((varattrib_4b *) v)->va_compressed.va_tcinfo =
					(rawlen & VARLENA_EXTSIZE_MASK) | ((uint32) CX_METHOD_ID << VARLENA_EXTSIZE_BITS);
				memcpy((char *) v + VARHDRSZ_COMPRESSED, data + 4, 16);
				((char *) v)[VARHDRSZ_COMPRESSED + 2] |= CX_FLAG_EXTERNAL;
				fuzz_external_body = (const char *) data + 20;
				fuzz_external_len = size - 20;
				(void) cx_own_dict_id(v, InvalidOid);
				(void) cx_decode(v, InvalidOid, "fuzzed");
				break;
			}
		case T_RAW:
			{
				/* codec, 4 bytes raw size (at most 1 MB), payload */
				const CxCodec *codec;
				uint32		rawlen;
				char	   *dst;

				if (size < 5)
					return;
				codec = cx_codec_by_id(data[0] % CX_CODEC_COUNT);
				memcpy(&rawlen, data + 1, 4);
				rawlen &= 0xFFFFF;
				if (!cx_codec_plausible_rawlen(codec, (const char *) data + 5, size - 5, rawlen))
					return;
				dst = palloc(rawlen);
				(void) cx_codec_decompress(codec, NULL, (const char *) data + 5, size - 5, dst, rawlen);
				break;
			}
	}
}

#ifndef FUZZ_SEEDS

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	cx_set_ddict_lookup(fuzz_dict_lookup);	/* the stubs' dictionary 1 */
	if (sigsetjmp(fuzz_jmp, 0) == 0)
		run_target(data[0] % T_COUNT, data + 1, size - 1);
	fuzz_external_body = NULL;
	fuzz_arena_reset();
	return 0;
}

#else

static void
write_seed(const char *dir, const char *name, int target, const char *buf, size_t len)
{
	char		path[1024];
	FILE	   *f;
	unsigned char t = (unsigned char) target;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
	{
		perror(path);
		exit(1);
	}
	fwrite(&t, 1, 1, f);
	fwrite(buf, 1, len, f);
	fclose(f);
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	const char *text = "compressx seed corpus: values compress well when they repeat, "
		"values compress well when they repeat, {\"json\": [1, 2, 3], \"json\": [1, 2, 3]}";
	int32		rawlen = strlen(text);
	char		out[4096];
	char		buf[8192];

	for (int id = 0; id < CX_CODEC_COUNT; id++)
	{
		const CxCodec *codec = cx_codec_by_id(id);
		int32		n = cx_codec_compress(codec, codec->default_level, NULL, text, rawlen,
										  out, sizeof(out));
		char		name[64];

		if (n < 0)
			continue;
		/* raw decoder: codec, raw length, payload */
		buf[0] = id;
		memcpy(buf + 1, &rawlen, 4);
		memcpy(buf + 5, out, n);
		snprintf(name, sizeof(name), "raw-%s", codec->name);
		write_seed(dir, name, T_RAW, buf, 5 + n);
		/* frame: magic, version, codec, raw length (big-endian), crc (0), payload */
		if (codec->id == CX_CODEC_ZSTD)
		{
			/* inline own value: raw length, version, codec, flags, frame */
			memcpy(buf, &rawlen, 4);
			buf[4] = CX_FORMAT_VERSION;
			buf[5] = CX_CODEC_ZSTD;
			buf[6] = 0;
			memcpy(buf + 7, out, n);
			write_seed(dir, "inline-zstd", T_INLINE, buf, 7 + n);
			/* the same with dictionary 1 (fuzz_stubs.c) */
			{
				struct varlena *plain = palloc(VARHDRSZ + rawlen);
				struct varlena *enc;
				int32		body;

				SET_VARSIZE(plain, VARHDRSZ + rawlen);
				memcpy(VARDATA(plain), text, rawlen);
				enc = cx_encode(plain, codec, codec->default_level, 1,
								cx_dict_cdict(1, codec->default_level));
				if (enc == NULL || !(((char *) enc)[VARHDRSZ_COMPRESSED + 2] & CX_FLAG_DICT))
				{
					fprintf(stderr, "no dictionary seed\n");
					exit(1);
				}
				body = VARSIZE(enc) - VARHDRSZ_COMPRESSED;
				memcpy(buf, &rawlen, 4);
				memcpy(buf + 4, (char *) enc + VARHDRSZ_COMPRESSED, body);
				write_seed(dir, "inline-zstd-dict", T_INLINE, buf, 4 + body);
			}
			/* reference: raw length, 16 bytes, body = version, codec, 0, frame */
			{
				uint32		len = 3 + n;

				memset(buf, 0, 20);
				memcpy(buf, &rawlen, 4);
				buf[4] = CX_FORMAT_VERSION;
				buf[5] = CX_CODEC_ZSTD;
				buf[6] = CX_FLAG_EXTERNAL;
				memcpy(buf + 8, &len, 4);
				buf[20] = CX_FORMAT_VERSION;
				buf[21] = CX_CODEC_ZSTD;
				buf[22] = 0;
				memcpy(buf + 23, out, n);
				write_seed(dir, "ref-zstd", T_REF, buf, 23 + n);
			}
		}
		buf[0] = 'C';
		buf[1] = 'X';
		buf[2] = 1;
		buf[3] = id;
		buf[4] = (rawlen >> 24) & 0xFF;
		buf[5] = (rawlen >> 16) & 0xFF;
		buf[6] = (rawlen >> 8) & 0xFF;
		buf[7] = rawlen & 0xFF;
		memset(buf + 8, 0, 4);
		memcpy(buf + 12, out, n);
		snprintf(name, sizeof(name), "frame-%s", codec->name);
		write_seed(dir, name, T_FRAME, buf, 12 + n);
	}
	return 0;
}

#endif
