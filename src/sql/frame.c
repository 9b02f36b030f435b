/*-------------------------------------------------------------------------
 *
 * frame.c
 *	  SQL functions compressx.codecs(), compressx.compress() and
 *	  compressx.decompress().
 *
 * A frame is self-describing, all integers big-endian:
 *
 *	  offset 0  2 bytes  magic "CX"
 *	  offset 2  1 byte   frame format version (CX_FRAME_VERSION)
 *	  offset 3  1 byte   codec id (codec.h, persisted)
 *	  offset 4  4 bytes  raw (decompressed) length
 *	  offset 8  4 bytes  CRC-32C of the raw data
 *	  offset 12 ...      codec payload
 *
 * Decoding validates every header field and the declared size against the
 * codec's maximum expansion before allocating, and the decoded bytes against
 * the checksum (lz4 and pglz carry none of their own, so a damaged literal
 * would otherwise decode to wrong bytes); malformed input raises
 * ERRCODE_DATA_CORRUPTED.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "port/pg_crc32c.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "storage/codec.h"
#include "compat.h"

#define CX_FRAME_MAGIC0		'C'
#define CX_FRAME_MAGIC1		'X'
#define CX_FRAME_VERSION	1
#define CX_FRAME_HDRSZ		12

PG_FUNCTION_INFO_V1(compressx_codecs);
PG_FUNCTION_INFO_V1(compressx_compress);
PG_FUNCTION_INFO_V1(compressx_decompress);

/*
 * compressx.codecs(): one row per built-in codec.
 */
Datum
compressx_codecs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);

	for (int id = 0; id < CX_CODEC_COUNT; id++)
	{
		const CxCodec *codec = cx_codec_by_id(id);
		const char *version = cx_codec_library_version(codec);
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = CStringGetTextDatum(codec->name);
		values[1] = Int32GetDatum(codec->id);
		values[2] = Int32GetDatum(codec->min_level);
		values[3] = Int32GetDatum(codec->max_level);
		values[4] = Int32GetDatum(codec->default_level);
		nulls[2] = nulls[3] = nulls[4] = !codec->has_levels;
		if (version)
			values[5] = CStringGetTextDatum(version);
		else
			nulls[5] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

static void
put_be32(unsigned char *p, uint32 v)
{
	p[0] = (v >> 24) & 0xFF;
	p[1] = (v >> 16) & 0xFF;
	p[2] = (v >> 8) & 0xFF;
	p[3] = v & 0xFF;
}

static uint32
raw_checksum(const char *data, int32 len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return (uint32) crc;
}

static uint32
get_be32(const unsigned char *p)
{
	return ((uint32) p[0] << 24) | ((uint32) p[1] << 16) |
		((uint32) p[2] << 8) | (uint32) p[3];
}

/*
 * compressx.compress(data bytea, codec text, level int DEFAULT NULL)
 *
 * The frame records the codec actually used: pglz declines input it cannot
 * shrink, and such input is framed with codec "none".
 */
Datum
compressx_compress(PG_FUNCTION_ARGS)
{
	bytea	   *data;
	const CxCodec *codec;
	int			level;
	int32		rawlen;
	int64		cap;
	bytea	   *result;
	unsigned char *hdr;
	int32		n;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("codec must not be null"),
				 errhint("Valid codecs are: %s.", cx_codec_names_list())));
	codec = cx_codec_by_name_or_error(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	level = cx_codec_resolve_level(codec, PG_ARGISNULL(2),
								   PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2));
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();

	data = PG_GETARG_BYTEA_PP(0);
	rawlen = VARSIZE_ANY_EXHDR(data);

	cap = (int64) VARHDRSZ + CX_FRAME_HDRSZ +
		Max(cx_codec_bound(codec, rawlen), rawlen);
	if (cap > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("value of %d bytes is too large to compress", rawlen)));

	result = (bytea *) palloc(cap);
	hdr = (unsigned char *) VARDATA(result);
	n = cx_codec_compress(codec, level, NULL, VARDATA_ANY(data), rawlen,
						  (char *) hdr + CX_FRAME_HDRSZ,
						  cap - VARHDRSZ - CX_FRAME_HDRSZ);
	if (n < 0)
	{
		codec = cx_codec_by_id(CX_CODEC_NONE);
		memcpy(hdr + CX_FRAME_HDRSZ, VARDATA_ANY(data), rawlen);
		n = rawlen;
	}

	hdr[0] = CX_FRAME_MAGIC0;
	hdr[1] = CX_FRAME_MAGIC1;
	hdr[2] = CX_FRAME_VERSION;
	hdr[3] = (unsigned char) codec->id;
	put_be32(hdr + 4, (uint32) rawlen);
	put_be32(hdr + 8, raw_checksum(VARDATA_ANY(data), rawlen));
	SET_VARSIZE(result, VARHDRSZ + CX_FRAME_HDRSZ + n);

	PG_RETURN_BYTEA_P(result);
}

/*
 * compressx.decompress(data bytea): decode a frame made by compress().
 */
Datum
compressx_decompress(PG_FUNCTION_ARGS)
{
	bytea	   *frame = PG_GETARG_BYTEA_PP(0);
	const unsigned char *p = (const unsigned char *) VARDATA_ANY(frame);
	int32		len = VARSIZE_ANY_EXHDR(frame);
	const CxCodec *codec;
	uint32		rawlen;
	int32		payload_len;
	bytea	   *result;

	if (len < CX_FRAME_HDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed frame is truncated"),
				 errdetail("The frame has %d bytes; its header alone needs %d.",
						   len, CX_FRAME_HDRSZ)));
	if (p[0] != CX_FRAME_MAGIC0 || p[1] != CX_FRAME_MAGIC1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("data is not a compressx frame"),
				 errdetail("The first two bytes are not the frame marker \"CX\".")));
	if (p[2] != CX_FRAME_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unsupported compressx frame version %d", p[2]),
				 errdetail("This build reads frame version %d.",
						   CX_FRAME_VERSION)));
	codec = cx_codec_by_id(p[3]);
	if (codec == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressx frame names unknown codec id %d", p[3])));

	rawlen = get_be32(p + 4);
	payload_len = len - CX_FRAME_HDRSZ;
	if (rawlen > MaxAllocSize - VARHDRSZ ||
		!cx_codec_plausible_rawlen(codec, (const char *) p + CX_FRAME_HDRSZ,
								   payload_len, (int32) rawlen))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressx frame declares an implausible size"),
				 errdetail("The frame declares %u decompressed bytes for %d bytes of %s data.",
						   rawlen, payload_len, codec->name)));

	result = (bytea *) palloc(VARHDRSZ + rawlen);
	if (!cx_codec_decompress(codec, NULL, (const char *) p + CX_FRAME_HDRSZ,
							 payload_len, VARDATA(result), (int32) rawlen))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data is corrupt"),
				 errdetail("The %s payload of %d bytes does not decode to the declared %u bytes.",
						   codec->name, payload_len, rawlen)));
	if (raw_checksum(VARDATA(result), (int32) rawlen) != get_be32(p + 8))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data is corrupt"),
				 errdetail("The decoded data does not match the frame's checksum.")));
	SET_VARSIZE(result, VARHDRSZ + rawlen);
	PG_RETURN_BYTEA_P(result);
}
