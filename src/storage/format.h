/*-------------------------------------------------------------------------
 *
 * format.h
 *	  Stored format of values in compressx tables.
 *
 * pglz and lz4 values are stored in core's own format (inline compressed
 * varlena with method bits 0 or 1, or core TOAST), which core reads
 * natively.  zstd values, and lz4 values compressed with a dictionary, use
 * compressx's own format, marked by method bits 2, which core does not
 * write today (see Attribution below):
 *
 *	  version 1 (zstd):
 *	  inline:  4-byte compressed varlena header | va_tcinfo (raw size,
 *			   method 2) | version 1 | codec id 3 | flags | [dictionary id,
 *			   4 bytes, if flags has CX_FLAG_DICT] | zstd frame
 *	  version 2 (lz4 with a dictionary, since 0.4.0):
 *	  inline:  header | va_tcinfo | version 2 | codec id 2 | flags exactly
 *			   CX_FLAG_DICT | dictionary id | CRC-32C | lz4 block
 *			   (the CRC covers the 7 bytes from the version byte through the
 *			   dictionary id, and the block: lz4 blocks carry no checksum)
 *	  reference (CX_FLAG_EXTERNAL), exactly CX_REF_SIZE = 24 bytes:
 *			   header | va_tcinfo | version | codec id | flags | 0 |
 *			   stored length | TOAST value id | TOAST relation id
 *			   (version and codec id those of the body it points to)
 *
 * A reference points to an *uncompressed* TOAST value (saved with
 * toast_save_datum) holding what follows va_tcinfo in the inline form:
 * "version | codec id | flags | [dictionary id] | zstd frame".
 *
 * A dictionary id names a row of compressx.dictionaries (dict.h); the frame
 * itself carries no dictionary id.
 * References are never larger than MAXALIGN(TOAST_POINTER_SIZE), so heap's
 * toaster never moves them, and it never hands a method-2 value to
 * toast_save_datum (which only accepts pglz and lz4).
 *
 * Attribution.  Core writes no value with method bits 2 today (it calls
 * them TOAST_INVALID_COMPRESSION_ID), but may claim them: pgsql-hackers
 * series have proposed zstd for TOAST as a "long" compressed header whose
 * method bits hold a LONG marker followed by a one-byte method id (zstd
 * being id 2 there; earlier versions used bits value 3 as the marker), and
 * core could as well put a plain zstd frame after va_tcinfo under bits 2.
 * So method bits 2 alone do not make a value compressx's.  A stored value
 * with method bits 2 is compressx's if and only if (cx_attribute()):
 *
 *	  inline:	 version byte 1, codec id CX_CODEC_ZSTD (3), flags 0 or
 *				 CX_FLAG_DICT, and the zstd frame magic 28 B5 2F FD at its
 *				 fixed offset right after the header (body offset 3, or 7
 *				 after a dictionary id); or version byte 2, codec id
 *				 CX_CODEC_LZ4 (2), flags exactly CX_FLAG_DICT, and at least
 *				 one byte after the 11-byte header;
 *	  reference: exactly CX_REF_SIZE bytes, version 1 with codec id 3 or
 *				 version 2 with codec id 2, flags exactly CX_FLAG_EXTERNAL,
 *				 pad byte 0, naming the TOAST relation of its table where the
 *				 table is known; and the TOAST body it names, when fetched,
 *				 passes the inline check with the reference's version and
 *				 codec id.
 *
 * Version 2 has no magic: its 48 bits of protection are the CRC-32C, which
 * tells damage (corrupt) from nothing; the version byte 2 excludes core's
 * plausible layouts as below (a zstd frame starts 0x28 or 0x5X; a long
 * header with method id 2, zstd, would be followed by a frame's 0x28, not
 * 02; a magicless frame's first byte 2 announces a dictionary id, which a
 * server compressing without dictionaries never writes).
 *
 * Everything else with method bits 2 is unattributable: reading it raises
 * ERRCODE_DATA_CORRUPTED saying it was not written by compressx, and
 * compressx.verify() reports it apart from corrupt values of its own.  A
 * value whose header was damaged on disk cannot be told from a foreign one
 * and is reported the same way.  Damage after the magic is corruption,
 * caught by the zstd frame's content size and checksum.
 *
 * Every frame compressx writes starts with the magic: frames come from
 * ZSTD_compress2() or ZSTD_compressStream2() in zstd's default format
 * ZSTD_f_zstd1 (codec.c never sets ZSTD_c_format, and resets the context's
 * parameters before every use); a dictionary changes neither (compressx
 * only leaves the dictionary id out of the frame header).
 *
 * Why no plausible core layout under method bits 2 matches: what would
 * follow va_tcinfo is
 *	  - a zstd frame: its first byte is 0x28 (magic 28 B5 2F FD), or
 *		0x50-0x5F for a skippable frame (magic 0x184D2A50-5F), never 1;
 *	  - a long header: its method id byte, then that method's data.  zstd's
 *		id 2 is not 1.  An id 1 (lz4, which has method bits 1 of its own)
 *		would have to be followed by 03 00 28 B5 2F FD or 03 02 ...:  an lz4
 *		block whose first token 0x03 has no literals, so its match refers to
 *		output before the start, which no lz4 encoder writes;
 *	  - a magicless zstd frame (ZSTD_f_zstd1_magicless): its first byte is
 *		the frame header descriptor, 1 only for "a one-byte dictionary id,
 *		no content size", which a server compressing without dictionaries
 *		(the series has none) never writes.
 * The version byte excludes each of them; the codec id, the flags and the
 * magic (48 more bits) stand behind it.  The rule costs a few byte compares
 * per value on the read path, and a reference's TOAST body is checked when
 * it is fetched anyway.
 *
 * The promise of the version byte (an on-disk contract: pg_upgrade copies
 * files as they are):
 *	  - A version never changes meaning; a new layout takes a new number.
 *		0.1.0 to 0.3.0 write and read version 1 only; 0.4.0 adds version 2
 *		(lz4 with a dictionary; 0.3.0 refuses such values as below).
 *	  - Newer reads older: every compressx reads every version an earlier
 *		one wrote, as it was written; values are converted only when a row is
 *		rewritten (UPDATE, VACUUM FULL, CLUSTER, recompress_table).
 *	  - Every version keeps the shape the rule relies on: version byte,
 *		codec id, flags, then a zstd frame (magic included) or, from version
 *		2 on, a checksummed payload, at an offset the version and flags fix;
 *		new numbers count up from 3 and stay below 0x28, outside the first
 *		bytes of zstd frames.
 *	  - Downgrade: a compressx meeting a version it does not know refuses
 *		that value (ERRCODE_DATA_CORRUPTED, "not written by compressx", the
 *		detail naming the version and that a newer compressx may have
 *		written it) and reads every other value; nothing is converted or
 *		lost, and the newer compressx reads the value again.  Rewrites of a
 *		table holding such values fail the same way instead of copying them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_FORMAT_H
#define COMPRESSX_FORMAT_H

#include "access/tupdesc.h"
#include "utils/rel.h"

#include "storage/codec.h"
#include "compat.h"

#define CX_FORMAT_VERSION		1	/* zstd */
#define CX_FORMAT_LZ4DICT		2	/* lz4 with a dictionary */
#define CX_METHOD_ID			2	/* va_tcinfo method bits of own values */
#define CX_FLAG_EXTERNAL		0x01
#define CX_FLAG_DICT			0x02
#define CX_INLINE_HDRSZ			(VARHDRSZ_COMPRESSED + 3)
#define CX_DICT_HDRSZ			(CX_INLINE_HDRSZ + 4)
/* version 2: version, codec, flags, dictionary id, CRC-32C */
#define CX_LZ4DICT_BODY_HDRSZ	11
#define CX_REF_SIZE				24

/*
 * Whether a stored varlena has compressx's method bits 2: compressx's own
 * format if cx_attribute() attributes it.
 */
static inline bool
cx_is_own_datum(const void *ptr)
{
	return VARATT_IS_4B_C(ptr) &&
		VARDATA_COMPRESSED_GET_COMPRESS_METHOD(ptr) == CX_METHOD_ID;
}

/* Whose a stored value with method bits 2 is (see Attribution above). */
typedef enum CxAttribution
{
	CX_OWN_INLINE,				/* compressx's inline form */
	CX_OWN_REFERENCE,			/* compressx's reference (its body is checked
								 * when fetched) */
	CX_UNATTRIBUTABLE			/* not written by compressx */
} CxAttribution;

/*
 * Attribute v, a stored value with method bits 2 (cx_is_own_datum).  relid:
 * the table it is stored in, whose TOAST relation a reference must name, or
 * InvalidOid when unknown.  When v is unattributable and why is not NULL,
 * *why is a palloc'd sentence saying why.
 */
extern CxAttribution cx_attribute(const struct varlena *v, Oid relid, char **why);

/*
 * Whether the last cx_decode() of this backend raised its error because the
 * value is unattributable (for compressx.verify()).
 */
extern bool cx_decode_unattributable(void);

/* Describe an own value without decoding it (for inspection). */
typedef struct CxOwnInfo
{
	int			codec_id;		/* -1 if the header is damaged */
	bool		external;
	int64		raw_bytes;
	int64		stored_bytes;	/* inline size, or TOAST payload size */
} CxOwnInfo;

extern void cx_own_info(const void *ptr, CxOwnInfo *info);

/*
 * The dictionary id an own value names (0: none), from its header, or for
 * a reference from the first bytes of its TOAST body; -1 when the value is
 * not attributable to compressx.
 */
extern int32 cx_own_dict_id(const struct varlena *v, Oid relid);

/*
 * Decode an own value into a plain varlena palloc'd in the current memory
 * context.  Damaged data, and a value cx_attribute() does not attribute,
 * raise ERRCODE_DATA_CORRUPTED naming relid's relation and attname.
 */
extern struct varlena *cx_decode(const struct varlena *value, Oid relid,
								 const char *attname);

/*
 * VARHDRSZ plus the raw size an own value declares, after checking that its
 * stored bytes can produce that much (ERRCODE_DATA_CORRUPTED otherwise):
 * what a caller allocates for cx_decode_into().
 */
extern Size cx_flat_size(const struct varlena *value, Oid relid,
						 const char *attname);

/*
 * The same, into dst when not NULL: VARHDRSZ plus the value's raw size
 * (VARDATA_COMPRESSED_GET_EXTSIZE), which the caller has checked.
 */
extern struct varlena *cx_decode_into(const struct varlena *value, Oid relid,
									  const char *attname, struct varlena *dst);

/*
 * Plain (decoded, detoasted, flattened) form of any value a caller hands to
 * compressx; returns the input itself when it is already plain.
 */
extern struct varlena *cx_plain_value(struct varlena *value, Oid relid,
									  const char *attname);

/*
 * Encode a plain value with codec/level.  Returns the stored form, or NULL
 * when the value should be stored as it is (the codec does not shrink it).
 * pglz and lz4 produce core's format, zstd compressx's inline format; with
 * cdict (a digested dictionary for level, found by the caller) the value
 * is compressed with it and names dict_id.
 */
extern struct varlena *cx_encode(const struct varlena *plain,
								 const CxCodec *codec, int level,
								 int32 dict_id, const void *cdict);

/*
 * Decoding a value that names a dictionary asks lookup for the digested
 * dictionary for its codec (a ZSTD_DDict for zstd, a CxLz4Dict for lz4;
 * NULL: it does not exist).  The layer that keeps dictionaries
 * sets it once (catalog/dict.c); none set: no dictionary exists.
 */
typedef const void *(*CxDDictLookup) (int32 dict_id, int codec_id);
extern void cx_set_ddict_lookup(CxDDictLookup lookup);

/*
 * Move an inline own value out of line: save its body as an uncompressed
 * TOAST value of rel and return the 24-byte reference.  old_ref (or NULL):
 * in a rewrite, the reference the copied version had for the same value;
 * versions sharing it share the new copy.
 */
extern struct varlena *cx_externalize(Relation rel, const struct varlena *own,
									  const struct varlena *old_ref,
									  int options);

/*
 * The reference cx_externalize() will return for own, except that it names
 * no TOAST value yet (value and relation ids are invalid): same size, same
 * stored length, different from every stored reference.  It stands for the
 * value while a row is planned; it must never be stored.
 */
extern struct varlena *cx_ref_placeholder(const struct varlena *own);

/* Delete the TOAST value a reference points to (same transaction). */
extern void cx_delete_external(Relation rel, const struct varlena *ref,
							   bool is_speculative);

/*
 * Whether v is an own reference (cx_attribute(), relid as there); if so,
 * the TOAST value id it names.
 */
extern bool cx_external_value_id(const struct varlena *v, Oid relid, Oid *valueid);

/* Whether two references name the same TOAST value. */
extern bool cx_same_external(const struct varlena *a, const struct varlena *b);

/*
 * Logical decoding (logical/decoder.c).  Decoding rebuilds rows from WAL,
 * where a reference is 24 bytes; its body is found in the TOAST rows the
 * same transaction wrote, or, for a body written earlier (the old version
 * of an updated or deleted row), in a transactional logical message the
 * writer logs just before the change: prefix CX_BODY_MESSAGE_PREFIX,
 * payload "payload version (1 byte) | TOAST relation id | value id | body"
 * (the body: the bytes of the TOAST value).
 */
#define CX_BODY_MESSAGE_PREFIX	"compressx.body"
#define CX_BODY_MESSAGE_VERSION 1
#define CX_BODY_MESSAGE_HDRSZ	9

/* Log the body message for own reference ref of relid's column attname. */
extern void cx_log_reference_body(const struct varlena *ref, Oid relid,
								  const char *attname);

/* The TOAST relation, value id and stored length a reference names. */
extern void cx_reference_target(const struct varlena *ref, Oid *toastrelid,
								Oid *valueid, uint32 *storedlen);

/*
 * The inline own value a reference stands for, rebuilt from its header and
 * body (bodylen bytes, the stored length it records), palloc'd.  Decode it
 * with cx_decode(), which checks it as any inline value.
 */
extern struct varlena *cx_inline_from_body(const struct varlena *ref,
										   const char *body, int32 bodylen);

/*
 * The inline own value the reference ref of relid's column attname stands
 * for, its body fetched from TOAST and checked against the recorded length
 * (not decoded), palloc'd: what cx_externalize() saves again elsewhere.
 */
extern struct varlena *cx_fetch_own_inline(const struct varlena *ref, Oid relid,
										   const char *attname);

#endif							/* COMPRESSX_FORMAT_H */
