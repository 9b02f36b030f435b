/*-------------------------------------------------------------------------
 *
 * dict.h
 *	  zstd dictionaries of compressx columns (compressx.dictionaries).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_H
#define COMPRESSX_DICT_H

/* Make decoding find dictionaries here (storage/format.h). */
extern void cx_dict_init(void);

/*
 * The digested dictionary dict_id for decompressing (a ZSTD_DDict), or NULL
 * when no such dictionary exists.  Cached (within
 * compressx.dictionary_cache_memory) until the dictionaries table's rows
 * are updated or deleted (or the table is dropped).  Every digest these
 * functions return (decoding's lookup too) stays valid until the next call
 * of one of them, which may free it to keep the cache within its bound:
 * use it before looking up another.
 */
extern const void *cx_dict_ddict(int32 dict_id);

/*
 * The digested dictionary dict_id for compressing at level (a ZSTD_CDict),
 * or NULL, with a warning, when no such dictionary exists (values are then
 * compressed without one).
 */
extern const void *cx_dict_cdict(int32 dict_id, int level);

/*
 * The digested dictionary dict_id for compressing with codec at level: as
 * cx_dict_cdict() for zstd, a CxLz4Dict for lz4 (storage/codec.h).
 */
struct CxCodec;
extern const void *cx_dict_for_encode(int32 dict_id, const struct CxCodec *codec, int level);

/* A digested dict for compressing at level, or for decompressing; NULL on failure. */
extern void *cx_dict_digest(const bytea *dict, int level, bool for_compress);
extern void cx_dict_free_digested(void *cdict, void *ddict);

#endif							/* COMPRESSX_DICT_H */
