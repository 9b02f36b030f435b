/*-------------------------------------------------------------------------
 *
 * format.c
 *	  Encoding and decoding of values stored in compressx tables.
 *
 * See format.h for the layout and the attribution rule.  Every field read
 * from disk is validated before use: damaged values, and method-2 values
 * compressx did not write, raise ERRCODE_DATA_CORRUPTED naming the
 * relation and column, never a crash and never wrong bytes (zstd frames
 * carry their content checksum).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "fmgr.h"
#include "port/pg_crc32c.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "compat.h"
#include "storage/format.h"

PG_FUNCTION_INFO_V1(compressx_decoded_values);

/* Values this backend decoded (compressx.decoded_values()). */
static int64 decoded_values = 0;

/*
 * compressx.decoded_values(): how many compressx-format values this backend
 * has decoded since it started; shows which queries decode what.
 */
Datum
compressx_decoded_values(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(decoded_values);
}

/* Where decoding finds dictionaries (cx_set_ddict_lookup). */
static CxDDictLookup ddict_lookup = NULL;

void
cx_set_ddict_lookup(CxDDictLookup lookup)
{
	ddict_lookup = lookup;
}

/* va_tcinfo of an own value */
static inline void
set_tcinfo(struct varlena *v, uint32 rawlen, uint32 method)
{
	((varattrib_4b *) v)->va_compressed.va_tcinfo =
		rawlen | (method << VARLENA_EXTSIZE_BITS);
}

/* Stored size of a plain value of rawlen bytes (short header if it fits). */
static inline int32
plain_stored_size(int32 rawlen)
{
	return rawlen + (rawlen + VARHDRSZ_SHORT <= VARATT_SHORT_MAX ?
					 VARHDRSZ_SHORT : VARHDRSZ);
}

static void
report_corrupt(Oid relid, const char *attname, const char *detail)
{
	char	   *relname = OidIsValid(relid) ? get_rel_name(relid) : NULL;

	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("compressed value of column \"%s\" of relation \"%s\" is corrupt",
					attname ? attname : "?", relname ? relname : "?"),
			 errdetail("%s", detail)));
}

/* Whether the last decode raised its error on an unattributable value. */
static bool last_decode_unattributable = false;

bool
cx_decode_unattributable(void)
{
	return last_decode_unattributable;
}

/*
 * Raise the error for a value compressx does not attribute to itself
 * (cx_attribute(), or has_header_and_frame() for a reference's TOAST body):
 * where says which part, why what is wrong.
 */
static void
report_unattributable(Oid relid, const char *attname, const char *where,
					  const char *why)
{
	char	   *relname = OidIsValid(relid) ? get_rel_name(relid) : NULL;

	last_decode_unattributable = true;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("compressed value of column \"%s\" of relation \"%s\" was not written by compressx",
					attname ? attname : "?", relname ? relname : "?"),
			 errdetail("%s%s", where ? where : "", why),
			 errhint("It may come from a newer compressx or from a PostgreSQL compression method using method bits 2, "
					 "or its first bytes are damaged.")));
}

/* The first bytes of every zstd frame (RFC 8878, section 3.1.1). */
static const unsigned char zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};

/*
 * Whether body, the bodylen bytes after va_tcinfo of an inline value or the
 * TOAST body of a reference, is compressx's header followed by its payload:
 * version 1, codec zstd, known flags, the frame's magic right after the
 * header; or version 2, codec lz4, flags exactly CX_FLAG_DICT, and at least
 * one byte of lz4 block after the header (its checksum is verified when it
 * is decoded).  A few byte compares: this runs for every value read.
 */
static inline bool
has_header_and_frame(const unsigned char *body, int32 bodylen)
{
	int32		at;

	if (bodylen >= CX_LZ4DICT_BODY_HDRSZ + 1 && body[0] == CX_FORMAT_LZ4DICT)
		return body[1] == CX_CODEC_LZ4 && body[2] == CX_FLAG_DICT;
	if (bodylen < 3 + (int32) sizeof(zstd_magic) ||
		body[0] != CX_FORMAT_VERSION || body[1] != CX_CODEC_ZSTD)
		return false;
	if (body[2] == 0)
		at = 3;
	else if (body[2] == CX_FLAG_DICT)
		at = 7;
	else
		return false;
	return bodylen >= at + (int32) sizeof(zstd_magic) &&
		memcmp(body + at, zstd_magic, sizeof(zstd_magic)) == 0;
}

/* Length of the header of an attributed body (has_header_and_frame()). */
static inline int32
body_header_size(const unsigned char *body)
{
	if (body[0] == CX_FORMAT_LZ4DICT)
		return CX_LZ4DICT_BODY_HDRSZ;
	return (body[2] & CX_FLAG_DICT) ? 7 : 3;
}

/*
 * CRC-32C of a version-2 body: its first 7 bytes (version, codec, flags,
 * dictionary id) and the lz4 block after the checksum.  lz4 blocks carry no
 * checksum of their own, and a damaged block can decode to wrong bytes of
 * the right length; zstd frames carry theirs.
 */
static uint32
lz4dict_checksum(const unsigned char *body, int32 bodylen)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, body, 7);
	COMP_CRC32C(crc, body + CX_LZ4DICT_BODY_HDRSZ, bodylen - CX_LZ4DICT_BODY_HDRSZ);
	FIN_CRC32C(crc);
	return (uint32) crc;
}

/*
 * Why has_header_and_frame() refused body, as a palloc'd sentence; names
 * the layouts core might use for method bits 2 when body has one of them.
 */
static char *
why_no_header_and_frame(const unsigned char *body, int32 bodylen)
{
	if (bodylen >= 4 &&
		(memcmp(body, zstd_magic, 4) == 0 ||
		 ((body[0] & 0xF0) == 0x50 && body[1] == 0x2A && body[2] == 0x4D && body[3] == 0x18)))
		return pstrdup("It begins with a zstd frame, as a PostgreSQL compression method using these bits might store one.");
	if (bodylen >= 5 && memcmp(body + 1, zstd_magic, 4) == 0)
		return psprintf("It is a byte (%d) followed by a zstd frame, as a PostgreSQL compression header "
						"naming its method in one byte might store one.", body[0]);
	if (bodylen < 3 + (int32) sizeof(zstd_magic))
		return psprintf("It is %d bytes long, shorter than compressx's header and a zstd frame.", bodylen);
	if (body[0] != CX_FORMAT_VERSION && body[0] != CX_FORMAT_LZ4DICT)
		return psprintf("It has format version %d, which this compressx does not know "
						"(it reads versions %d and %d; a newer compressx may have written the value).",
						body[0], CX_FORMAT_VERSION, CX_FORMAT_LZ4DICT);
	if (body[0] == CX_FORMAT_LZ4DICT)
	{
		if (body[1] != CX_CODEC_LZ4)
			return psprintf("Its codec id %d is not the one of format version %d.", body[1], body[0]);
		if (body[2] != CX_FLAG_DICT)
			return psprintf("Its flags 0x%02x are not ones compressx writes.", body[2]);
		return psprintf("It is %d bytes long, too short for an lz4 block after its header.", bodylen);
	}
	if (body[1] != CX_CODEC_ZSTD)
		return psprintf("Its codec id %d is not one compressx stores in its own format.", body[1]);
	if (body[2] != 0 && body[2] != CX_FLAG_DICT)
		return psprintf("Its flags 0x%02x are not ones compressx writes.", body[2]);
	return pstrdup("No zstd frame follows its header.");
}

static Oid	relation_toast_oid(Oid relid);

CxAttribution
cx_attribute(const struct varlena *v, Oid relid, char **why)
{
	const unsigned char *body = (const unsigned char *) v + VARHDRSZ_COMPRESSED;
	int32		bodylen = (int32) VARSIZE(v) - VARHDRSZ_COMPRESSED;

	Assert(cx_is_own_datum(v));
	if (has_header_and_frame(body, bodylen))
		return CX_OWN_INLINE;
	if (bodylen == CX_REF_SIZE - VARHDRSZ_COMPRESSED &&
		((body[0] == CX_FORMAT_VERSION && body[1] == CX_CODEC_ZSTD) ||
		 (body[0] == CX_FORMAT_LZ4DICT && body[1] == CX_CODEC_LZ4)) &&
		body[2] == CX_FLAG_EXTERNAL && body[3] == 0)
	{
		Oid			toastrelid;

		/* a reference: its TOAST body is checked when it is fetched */
		memcpy(&toastrelid, body + 12, sizeof(Oid));
		if (!OidIsValid(relid) || toastrelid == relation_toast_oid(relid))
			return CX_OWN_REFERENCE;
		if (why)
			*why = psprintf("It is a reference naming relation %u, which is not the table's TOAST relation.",
							toastrelid);
		return CX_UNATTRIBUTABLE;
	}
	if (why)
	{
		if (bodylen >= 4 && body[0] == CX_FORMAT_VERSION && (body[2] & CX_FLAG_EXTERNAL))
			*why = psprintf("It is marked as a reference, but is not compressx's %d-byte reference "
							"(%d bytes, codec id %d, flags 0x%02x, pad byte %d).",
							CX_REF_SIZE, (int) VARSIZE(v), body[1], body[2], body[3]);
		else
			*why = why_no_header_and_frame(body, bodylen);
	}
	return CX_UNATTRIBUTABLE;
}

/* Rebuild core's on-disk TOAST pointer for a reference. */
static void
ref_to_pointer(const struct varlena *ref, char *buf)
{
	const char *p = (const char *) ref + VARHDRSZ_COMPRESSED;
	struct varatt_external toast_pointer;
	uint32		len;

	memcpy(&len, p + 4, sizeof(uint32));
	toast_pointer.va_rawsize = len + VARHDRSZ;
	toast_pointer.va_extinfo = len;
	memcpy(&toast_pointer.va_valueid, p + 8, sizeof(Oid));
	memcpy(&toast_pointer.va_toastrelid, p + 12, sizeof(Oid));
	SET_VARTAG_EXTERNAL(buf, VARTAG_ONDISK);
	memcpy(VARDATA_EXTERNAL(buf), &toast_pointer, sizeof(toast_pointer));
}

/*
 * The dictionary id of an own value (0: none), without decoding it: read
 * from the header of an inline value, from the first bytes of the TOAST
 * body of a reference (one chunk fetched).  -1 when the header is not
 * compressx's (cx_attribute() says why when the value is read).
 */
int32
cx_own_dict_id(const struct varlena *v, Oid relid)
{
	const unsigned char *body;
	int32		bodylen;
	struct varlena *slice = NULL;
	int32		dict_id = -1;

	switch (cx_attribute(v, relid, NULL))
	{
		case CX_OWN_INLINE:
			body = (const unsigned char *) v + VARHDRSZ_COMPRESSED;
			bodylen = (int32) VARSIZE(v) - VARHDRSZ_COMPRESSED;
			break;
		case CX_OWN_REFERENCE:
			{
				char		ptrbuf[TOAST_POINTER_SIZE];

				ref_to_pointer(v, ptrbuf);
				slice = detoast_attr_slice((struct varlena *) ptrbuf, 0, 7);
				body = (const unsigned char *) VARDATA_ANY(slice);
				bodylen = (int32) VARSIZE_ANY_EXHDR(slice);
				break;
			}
		default:
			return -1;
	}
	if (bodylen >= 3 && body[2] == 0)
		dict_id = 0;
	else if (bodylen >= 7 && body[2] == CX_FLAG_DICT)	/* either version */
		memcpy(&dict_id, body + 3, sizeof(int32));
	if (slice)
		pfree(slice);
	return dict_id;
}

void
cx_own_info(const void *ptr, CxOwnInfo *info)
{
	const unsigned char *body = (const unsigned char *) ptr + VARHDRSZ_COMPRESSED;

	info->raw_bytes = VARDATA_COMPRESSED_GET_EXTSIZE(ptr);
	info->external = false;
	info->stored_bytes = VARSIZE(ptr);
	info->codec_id = -1;
	switch (cx_attribute((const struct varlena *) ptr, InvalidOid, NULL))
	{
		case CX_OWN_INLINE:
			info->codec_id = body[1];
			break;
		case CX_OWN_REFERENCE:
			{
				uint32		len;

				memcpy(&len, body + 4, sizeof(uint32));
				info->codec_id = body[1];
				info->external = true;
				info->stored_bytes = len;
				break;
			}
		case CX_UNATTRIBUTABLE:
			break;
	}
}

/* Error context while fetching an out-of-line value. */
typedef struct FetchContext
{
	Oid			relid;
	const char *attname;
} FetchContext;

static void
fetch_error_callback(void *arg)
{
	FetchContext *fc = (FetchContext *) arg;
	char	   *relname = OidIsValid(fc->relid) ? get_rel_name(fc->relid) : NULL;

	errcontext("reading compressx value of column \"%s\" of relation \"%s\"",
			   fc->attname ? fc->attname : "?", relname ? relname : "?");
}

/*
 * The TOAST relation of relid, remembered for the last table asked about
 * (reads of out-of-line values come table by table) until a relcache
 * invalidation, instead of a catalog cache lookup per value.
 */
static Oid	toast_of_relid = InvalidOid;
static Oid	toast_of_toastoid = InvalidOid;

static void
toast_of_invalidate(Datum arg, Oid relid)
{
	if (!OidIsValid(relid) || relid == toast_of_relid)
		toast_of_relid = InvalidOid;
}

static Oid
relation_toast_oid(Oid relid)
{
	static bool registered = false;
	HeapTuple	tup;

	if (relid == toast_of_relid)
		return toast_of_toastoid;
	if (!registered)
	{
		CacheRegisterRelcacheCallback(toast_of_invalidate, (Datum) 0);
		registered = true;
	}
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	toast_of_toastoid = ((Form_pg_class) GETSTRUCT(tup))->reltoastrelid;
	toast_of_relid = relid;
	ReleaseSysCache(tup);
	return toast_of_toastoid;
}

/*
 * The TOAST value a reference names, fetched (in the current memory
 * context) and checked against the length the reference records.
 */
static struct varlena *
fetch_body(const struct varlena *ref, Oid relid, const char *attname)
{
	char		ptrbuf[TOAST_POINTER_SIZE];
	struct varatt_external toast_pointer;
	ErrorContextCallback errcb;
	FetchContext fc = {relid, attname};
	struct varlena *fetched;

	ref_to_pointer(ref, ptrbuf);
	VARATT_EXTERNAL_GET_POINTER(toast_pointer, ptrbuf);
	if (toast_pointer.va_extinfo < 3 || toast_pointer.va_extinfo > MaxAllocSize - VARHDRSZ)
		report_corrupt(relid, attname, "An out-of-line reference has an impossible length.");

	errcb.callback = fetch_error_callback;
	errcb.arg = &fc;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	fetched = detoast_external_attr((struct varlena *) ptrbuf);
	error_context_stack = errcb.previous;

	if (VARATT_IS_EXTENDED(fetched) ||
		VARSIZE(fetched) - VARHDRSZ != (int32) toast_pointer.va_extinfo)
		report_corrupt(relid, attname, "An out-of-line value does not have its recorded length.");
	return fetched;
}

struct varlena *
cx_fetch_own_inline(const struct varlena *ref, Oid relid, const char *attname)
{
	struct varlena *body;
	struct varlena *v;

	Assert(cx_attribute(ref, relid, NULL) == CX_OWN_REFERENCE);
	body = fetch_body(ref, relid, attname);
	v = cx_inline_from_body(ref, VARDATA(body), (int32) (VARSIZE(body) - VARHDRSZ));
	pfree(body);
	return v;
}

struct varlena *
cx_decode(const struct varlena *value, Oid relid, const char *attname)
{
	return cx_decode_into(value, relid, attname, NULL);
}

/*
 * Memory for the work of one decode: the fetched out-of-line body, what
 * fetching it and looking up a dictionary allocate and free.  A decode may
 * run in any caller's memory context, including one where pfree and
 * repalloc are not allowed (since PostgreSQL 17 tuplesort keeps tuples in a
 * bump context, and a sort flattens compressx's placeholders straight into
 * them, decoding there): only the result is allocated in the caller's
 * context.  Reset at the start and end of every decode (a decode does not
 * nest: fetching reads a heap TOAST table, and a dictionary a heap table).
 */
static MemoryContext decode_scratch = NULL;

static MemoryContext
decode_scratch_begin(void)
{
	if (decode_scratch == NULL)
		decode_scratch = AllocSetContextCreate(TopMemoryContext,
											   "compressx decode scratch",
											   ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(decode_scratch);
	return MemoryContextSwitchTo(decode_scratch);
}

/*
 * The size a decoded own value takes, VARHDRSZ plus the raw size its header
 * declares, checked against what its stored bytes can produce before any
 * caller allocates it: a damaged header must not cost a large allocation
 * before the decoder reports it.  A reference's TOAST value is not fetched:
 * its recorded length bounds the raw size.
 */
Size
cx_flat_size(const struct varlena *value, Oid relid, const char *attname)
{
	uint32		rawlen = VARDATA_COMPRESSED_GET_EXTSIZE(value);
	const unsigned char *body = (const unsigned char *) value + VARHDRSZ_COMPRESSED;
	int32		bodylen = (int32) VARSIZE(value) - VARHDRSZ_COMPRESSED;
	char	   *why = NULL;
	bool		plausible;

	switch (cx_attribute(value, relid, &why))
	{
		case CX_OWN_INLINE:
			{
				int32		hdr = body_header_size(body);

				plausible = cx_codec_plausible_rawlen(cx_codec_by_id(body[1]),
													  (const char *) body + hdr,
													  bodylen - hdr, (int32) rawlen);
				break;
			}
		case CX_OWN_REFERENCE:
			{
				uint32		storedlen;

				memcpy(&storedlen, body + 4, sizeof(uint32));
				plausible = cx_codec_plausible_rawlen_bound(cx_codec_by_id(body[1]),
															(int64) storedlen, (int32) rawlen);
				break;
			}
		default:
			report_unattributable(relid, attname, NULL, why);
			plausible = false;	/* keep compiler quiet */
	}
	if (rawlen > MaxAllocSize - VARHDRSZ || !plausible)
		report_corrupt(relid, attname,
					   psprintf("The value declares %u bytes, implausible for its %d stored bytes.",
								rawlen, bodylen));
	return VARHDRSZ + (Size) rawlen;
}

struct varlena *
cx_decode_into(const struct varlena *value, Oid relid, const char *attname,
			   struct varlena *dst)
{
	MemoryContext callercxt;
	int32		size = VARSIZE(value);
	uint32		rawlen = VARDATA_COMPRESSED_GET_EXTSIZE(value);
	const unsigned char *body = (const unsigned char *) value + VARHDRSZ_COMPRESSED;
	int32		bodylen = size - VARHDRSZ_COMPRESSED;
	struct varlena *fetched = NULL;
	const CxCodec *codec;
	const void *ddict = NULL;
	int32		hdr;
	struct varlena *result;
	CxAttribution kind;
	char	   *why = NULL;

	decoded_values++;
	last_decode_unattributable = false;
	callercxt = decode_scratch_begin();
	kind = cx_attribute(value, relid, &why);
	if (kind == CX_UNATTRIBUTABLE)
		report_unattributable(relid, attname, NULL, why);

	if (kind == CX_OWN_REFERENCE)
	{
		const unsigned char *ref = body;

		fetched = fetch_body(value, relid, attname);
		body = (const unsigned char *) VARDATA(fetched);
		bodylen = VARSIZE(fetched) - VARHDRSZ;
		if (!has_header_and_frame(body, bodylen))
			report_unattributable(relid, attname, "The TOAST value it references is not compressx's. ",
								  why_no_header_and_frame(body, bodylen));
		if (body[0] != ref[0] || body[1] != ref[1])
			report_unattributable(relid, attname, "The TOAST value it references is not compressx's. ",
								  psprintf("Its format version %d and codec id %d are not the reference's (%d and %d).",
										   body[0], body[1], ref[0], ref[1]));
	}

	/*
	 * Attributed: version 1, codec zstd, known flags, a frame after them; or
	 * version 2, codec lz4 with a dictionary, a checksum, an lz4 block.
	 */
	codec = cx_codec_by_id(body[1]);
	hdr = body_header_size(body);
	if (body[2] & CX_FLAG_DICT)
	{
		int32		dict_id;

		memcpy(&dict_id, body + 3, sizeof(int32));
		ddict = ddict_lookup ? ddict_lookup(dict_id, codec->id) : NULL;
		if (ddict == NULL)
			report_corrupt(relid, attname,
						   psprintf("The value names %s dictionary %d, which does not exist.",
									codec->name, dict_id));
	}
	if (body[0] == CX_FORMAT_LZ4DICT)
	{
		uint32		stored;

		memcpy(&stored, body + 7, sizeof(uint32));
		if (stored != lz4dict_checksum(body, bodylen))
			report_corrupt(relid, attname,
						   "The checksum of the lz4 data does not match its bytes.");
	}
	if (rawlen > MaxAllocSize - VARHDRSZ ||
		!cx_codec_plausible_rawlen(codec, (const char *) body + hdr, bodylen - hdr, (int32) rawlen))
		report_corrupt(relid, attname,
					   psprintf("The value declares %u bytes, implausible for %d bytes of %s data.",
								rawlen, bodylen - hdr, codec->name));

	result = dst ? dst : (struct varlena *) MemoryContextAlloc(callercxt, VARHDRSZ + rawlen);
	if (!cx_codec_decompress(codec, ddict, (const char *) body + hdr, bodylen - hdr,
							 VARDATA(result), (int32) rawlen))
		report_corrupt(relid, attname,
					   psprintf("The %s data does not decode to the declared %u bytes.",
								codec->name, rawlen));
	SET_VARSIZE(result, VARHDRSZ + rawlen);
	MemoryContextSwitchTo(callercxt);
	MemoryContextReset(decode_scratch);
	return result;
}

struct varlena *
cx_plain_value(struct varlena *value, Oid relid, const char *attname)
{
	/* TOAST pointers, expanded objects (our own placeholders too) */
	if (VARATT_IS_EXTERNAL(value))
		return detoast_attr(value);
	if (VARATT_IS_4B_C(value))
		return cx_is_own_datum(value) ? cx_decode(value, relid, attname) :
			detoast_attr(value);
	return value;
}

/* An lz4 value with a dictionary: the version-2 inline form, or NULL. */
static struct varlena *
encode_lz4_dict(const char *raw, int32 rawlen, int level, int32 dict_id,
				const CxLz4Dict *d)
{
	int32		hdrsz = VARHDRSZ_COMPRESSED + CX_LZ4DICT_BODY_HDRSZ;
	int32		cap = cx_codec_bound(cx_codec_by_id(CX_CODEC_LZ4), rawlen);
	struct varlena *out = palloc(hdrsz + cap);
	unsigned char *body = (unsigned char *) out + VARHDRSZ_COMPRESSED;
	int32		n;
	uint32		crc;

	n = cx_codec_compress(cx_codec_by_id(CX_CODEC_LZ4), level, d, raw, rawlen,
						  (char *) out + hdrsz, cap);
	if (n < 0 || hdrsz + n >= plain_stored_size(rawlen))
	{
		pfree(out);
		return NULL;
	}
	body[0] = CX_FORMAT_LZ4DICT;
	body[1] = CX_CODEC_LZ4;
	body[2] = CX_FLAG_DICT;
	memcpy(body + 3, &dict_id, sizeof(int32));
	crc = lz4dict_checksum(body, CX_LZ4DICT_BODY_HDRSZ + n);
	memcpy(body + 7, &crc, sizeof(uint32));
	SET_VARSIZE_COMPRESSED(out, hdrsz + n);
	set_tcinfo(out, rawlen, CX_METHOD_ID);
	return out;
}

/*
 * A value in core's own compressed format (method_id: pglz or lz4) made by
 * cx_codec_compress (lz4 levels 2-12, and large values, which it compresses
 * in interruptible chunks), or NULL when the compressed bytes are not
 * fewer than max_bytes or would not be stored smaller than the plain value.
 */
static struct varlena *
encode_core_format(const CxCodec *codec, int level, const char *raw, int32 rawlen,
				   int method_id, int64 max_bytes)
{
	int32		cap = cx_codec_bound(codec, rawlen);
	struct varlena *out;
	int32		n;

	/* in chunks, compression stops once its output would exceed cap */
	if (cx_codec_compresses_in_chunks(codec, level, rawlen))
		cap = (int32) Min(cap, max_bytes);
	out = palloc(VARHDRSZ_COMPRESSED + cap);
	n = cx_codec_compress(codec, level, NULL, raw, rawlen,
						  (char *) out + VARHDRSZ_COMPRESSED, cap);
	if (n < 0 || n >= max_bytes ||
		VARHDRSZ_COMPRESSED + n >= plain_stored_size(rawlen))
	{
		pfree(out);
		return NULL;
	}
	SET_VARSIZE_COMPRESSED(out, VARHDRSZ_COMPRESSED + n);
	set_tcinfo(out, rawlen, method_id);
	return out;
}

struct varlena *
cx_encode(const struct varlena *plain, const CxCodec *codec, int level,
		  int32 dict_id, const void *cdict)
{
	int32		rawlen = VARSIZE_ANY_EXHDR(plain);
	const char *raw = VARDATA_ANY(plain);

	switch (codec->id)
	{
		case CX_CODEC_NONE:
			return NULL;

		case CX_CODEC_PGLZ:
			/* core's pglz is one call: large values go in chunks */
			if (!cx_codec_compresses_in_chunks(codec, level, rawlen))
				return (struct varlena *)
					DatumGetPointer(toast_compress_datum(PointerGetDatum(plain),
														 TOAST_PGLZ_COMPRESSION));
			/* kept when a quarter smaller, as core's PGLZ_strategy_default */
			return encode_core_format(codec, level, raw, rawlen,
									  TOAST_PGLZ_COMPRESSION_ID,
									  (int64) rawlen / 100 * 75);

		case CX_CODEC_LZ4:
			if (cdict)
				return encode_lz4_dict(raw, rawlen, level, dict_id,
									   (const CxLz4Dict *) cdict);
			/* core's lz4 is one call: large values go in chunks */
			if (level <= 1 && !cx_codec_compresses_in_chunks(codec, level, rawlen))
				return (struct varlena *)
					DatumGetPointer(toast_compress_datum(PointerGetDatum(plain),
														 TOAST_LZ4_COMPRESSION));
			return encode_core_format(codec, level, raw, rawlen,
									  TOAST_LZ4_COMPRESSION_ID, rawlen);

		case CX_CODEC_ZSTD:
			{
				int32		hdrsz = cdict ? CX_DICT_HDRSZ : CX_INLINE_HDRSZ;
				int32		cap = cx_codec_bound(codec, rawlen);
				struct varlena *out = palloc(hdrsz + cap);
				unsigned char *body = (unsigned char *) out + VARHDRSZ_COMPRESSED;
				int32		n;

				n = cx_codec_compress(codec, level, cdict, raw, rawlen, (char *) out + hdrsz, cap);
				if (hdrsz + n >= plain_stored_size(rawlen))
				{
					pfree(out);
					return NULL;
				}
				body[0] = CX_FORMAT_VERSION;
				body[1] = CX_CODEC_ZSTD;
				body[2] = cdict ? CX_FLAG_DICT : 0;
				if (cdict)
					memcpy(body + 3, &dict_id, sizeof(int32));
				SET_VARSIZE_COMPRESSED(out, hdrsz + n);
				set_tcinfo(out, rawlen, CX_METHOD_ID);
				return out;
			}
	}
	elog(ERROR, "invalid compressx codec id %d", (int) codec->id);
	return NULL;
}

/*
 * The reference to the TOAST copy of own value "own" with value id valueid
 * in TOAST relation toastrelid; the stored length is that of the body
 * cx_externalize() saves (uncompressed, so the TOAST pointer's extsize).
 */
static struct varlena *
make_ref(const struct varlena *own, Oid valueid, Oid toastrelid)
{
	struct varlena *ref = palloc0(CX_REF_SIZE);
	char	   *p = (char *) ref + VARHDRSZ_COMPRESSED;
	uint32		len = VARSIZE(own) - VARHDRSZ_COMPRESSED;

	SET_VARSIZE_COMPRESSED(ref, CX_REF_SIZE);
	set_tcinfo(ref, VARDATA_COMPRESSED_GET_EXTSIZE(own), CX_METHOD_ID);
	p[0] = ((const char *) own)[VARHDRSZ_COMPRESSED];	/* its format version */
	p[1] = ((const char *) own)[VARHDRSZ_COMPRESSED + 1];
	p[2] = CX_FLAG_EXTERNAL;
	memcpy(p + 4, &len, sizeof(uint32));
	memcpy(p + 8, &valueid, sizeof(Oid));
	memcpy(p + 12, &toastrelid, sizeof(Oid));
	return ref;
}

struct varlena *
cx_ref_placeholder(const struct varlena *own)
{
	Assert(cx_is_own_datum(own) && VARSIZE(own) > CX_REF_SIZE);
	return make_ref(own, InvalidOid, InvalidOid);
}

struct varlena *
cx_externalize(Relation rel, const struct varlena *own,
			   const struct varlena *old_ref, int options)
{
	int32		bodylen = VARSIZE(own) - VARHDRSZ_COMPRESSED;
	struct varlena *body = palloc(VARHDRSZ + bodylen);
	Datum		pointer;
	struct varatt_external toast_pointer;
	struct varlena *ref;
	char		oldbuf[TOAST_POINTER_SIZE];

	Assert(cx_is_own_datum(own));
	SET_VARSIZE(body, VARHDRSZ + bodylen);
	memcpy(VARDATA(body), (const char *) own + VARHDRSZ_COMPRESSED, bodylen);

	/*
	 * An uncompressed value: toast_save_datum stores its bytes as they are.
	 * Given the old value's TOAST pointer during a rewrite into a new heap
	 * whose rd_toastoid is the old TOAST relation, it keeps the old value id
	 * and writes the bytes only once for all versions naming that id.  The
	 * bytes are the same for each: the same plain value encoded with the
	 * same settings.
	 */
	if (old_ref)
		ref_to_pointer(old_ref, oldbuf);
	pointer = toast_save_datum(rel, PointerGetDatum(body),
							   old_ref ? (struct varlena *) oldbuf : NULL, options);
	VARATT_EXTERNAL_GET_POINTER(toast_pointer, DatumGetPointer(pointer));
	Assert(toast_pointer.va_extinfo == (uint32) bodylen);

	ref = make_ref(own, toast_pointer.va_valueid, toast_pointer.va_toastrelid);
	pfree(body);
	pfree(DatumGetPointer(pointer));
	return ref;
}

void
cx_delete_external(Relation rel, const struct varlena *ref, bool is_speculative)
{
	char		ptrbuf[TOAST_POINTER_SIZE];

	ref_to_pointer(ref, ptrbuf);
	toast_delete_datum(rel, PointerGetDatum(ptrbuf), is_speculative);
}

bool
cx_external_value_id(const struct varlena *v, Oid relid, Oid *valueid)
{
	if (!cx_is_own_datum(v) || cx_attribute(v, relid, NULL) != CX_OWN_REFERENCE)
		return false;
	memcpy(valueid, (const char *) v + VARHDRSZ_COMPRESSED + 8, sizeof(Oid));
	return true;
}

bool
cx_same_external(const struct varlena *a, const struct varlena *b)
{
	return VARSIZE(a) == CX_REF_SIZE && VARSIZE(b) == CX_REF_SIZE &&
		memcmp(a, b, CX_REF_SIZE) == 0;
}

void
cx_reference_target(const struct varlena *ref, Oid *toastrelid, Oid *valueid,
					uint32 *storedlen)
{
	const char *p = (const char *) ref + VARHDRSZ_COMPRESSED;

	memcpy(storedlen, p + 4, sizeof(uint32));
	memcpy(valueid, p + 8, sizeof(Oid));
	memcpy(toastrelid, p + 12, sizeof(Oid));
}

struct varlena *
cx_inline_from_body(const struct varlena *ref, const char *body, int32 bodylen)
{
	struct varlena *v = palloc(VARHDRSZ_COMPRESSED + bodylen);

	SET_VARSIZE_COMPRESSED(v, VARHDRSZ_COMPRESSED + bodylen);
	/* va_tcinfo: the raw size and method bits, as in the reference */
	memcpy((char *) v + VARHDRSZ, (const char *) ref + VARHDRSZ, sizeof(uint32));
	memcpy((char *) v + VARHDRSZ_COMPRESSED, body, bodylen);
	return v;
}

void
cx_log_reference_body(const struct varlena *ref, Oid relid, const char *attname)
{
	struct varlena *fetched = fetch_body(ref, relid, attname);
	int32		bodylen = VARSIZE(fetched) - VARHDRSZ;
	char	   *payload = palloc(CX_BODY_MESSAGE_HDRSZ + bodylen);
	Oid			toastrelid;
	Oid			valueid;
	uint32		storedlen;

	cx_reference_target(ref, &toastrelid, &valueid, &storedlen);
	payload[0] = CX_BODY_MESSAGE_VERSION;
	memcpy(payload + 1, &toastrelid, sizeof(Oid));
	memcpy(payload + 5, &valueid, sizeof(Oid));
	memcpy(payload + CX_BODY_MESSAGE_HDRSZ, VARDATA(fetched), bodylen);
	(void) cx_log_message(CX_BODY_MESSAGE_PREFIX, payload,
						  CX_BODY_MESSAGE_HDRSZ + bodylen);
	pfree(payload);
	pfree(fetched);
}
