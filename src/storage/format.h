/*-------------------------------------------------------------------------
 *
 * format.h
 *	  Stored format of values in compressx tables.
 *
 * pglz and lz4 values are stored in core's own format (inline compressed
 * varlena with method bits 0 or 1, or core TOAST), which core reads
 * natively.  zstd values use compressx's own format, recognizable by the
 * method bits 2 that core never writes:
 *
 *	  inline:  4-byte compressed varlena header | va_tcinfo (raw size,
 *			   method 2) | version | codec id | flags | [dictionary id,
 *			   4 bytes, if flags has CX_FLAG_DICT] | zstd frame
 *	  reference (CX_FLAG_EXTERNAL), exactly CX_REF_SIZE = 24 bytes:
 *			   header | va_tcinfo | version | codec id | flags | 0 |
 *			   stored length | TOAST value id | TOAST relation id
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
 * The version byte is an on-disk contract: pg_upgrade copies files as they
 * are.  Never change the meaning of a version; add one.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_FORMAT_H
#define COMPRESSX_FORMAT_H

#include "access/tupdesc.h"
#include "utils/rel.h"

#include "storage/codec.h"
#include "compat.h"

#define CX_FORMAT_VERSION		1
#define CX_METHOD_ID			2	/* va_tcinfo method bits of own values */
#define CX_FLAG_EXTERNAL		0x01
#define CX_FLAG_DICT			0x02
#define CX_INLINE_HDRSZ			(VARHDRSZ_COMPRESSED + 3)
#define CX_DICT_HDRSZ			(CX_INLINE_HDRSZ + 4)
#define CX_REF_SIZE				24

/* Whether a stored varlena is in compressx's own format (method bits 2). */
static inline bool
cx_is_own_datum(const void *ptr)
{
	return VARATT_IS_4B_C(ptr) &&
		VARDATA_COMPRESSED_GET_COMPRESS_METHOD(ptr) == CX_METHOD_ID;
}

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
 * Decode an own value into a plain varlena palloc'd in the current memory
 * context.  Damaged data raises ERRCODE_DATA_CORRUPTED naming relid's
 * relation and attname.
 */
extern struct varlena *cx_decode(const struct varlena *value, Oid relid,
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
 * dictionary (NULL: it does not exist).  The layer that keeps dictionaries
 * sets it once (catalog/dict.c); none set: no dictionary exists.
 */
typedef const void *(*CxDDictLookup) (int32 dict_id);
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

/* Whether v is an own reference; if so, the TOAST value id it names. */
extern bool cx_external_value_id(const struct varlena *v, Oid *valueid);

/* Whether two references name the same TOAST value. */
extern bool cx_same_external(const struct varlena *a, const struct varlena *b);

#endif							/* COMPRESSX_FORMAT_H */
