/*-------------------------------------------------------------------------
 *
 * dict.h
 *	  zstd dictionaries of compressx columns (compressx.dictionaries).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_H
#define COMPRESSX_DICT_H

#include "nodes/pg_list.h"

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

/*
 * Limits of training samples: each value's first bytes, and the total.
 * zstd's trainer is one library call that cannot be interrupted; it took
 * about 60 ms per MB of samples on a 2-core test machine (3.4 s for 64 MB),
 * so 8 MB keeps it near half a second.  zstd advises samples of about 100
 * times the dictionary's size: 8 MB is that for the default 16 kB and
 * eight times the largest dictionary (1 MB).
 */
#define CX_SAMPLE_VALUE_MAX		(128 * 1024)
#define CX_SAMPLE_TOTAL_MAX		(8 * 1024 * 1024)

/*
 * Fewest non-empty values zstd's trainer accepts: it keeps a quarter of
 * them apart to test candidate dictionaries on, and needs at least five to
 * train on and one to test (fewer: "Src size is incorrect").  A useful
 * dictionary needs far more; this is only where training cannot start.
 */
#define CX_DICT_MIN_VALUES		7

/*
 * Shortest value training uses: zstd's trainer works on 8-byte segments,
 * and libzstd 1.5.4 crashes (SIGSEGV, SIGFPE) when the values it trains on
 * total fewer than 8 bytes, which a few 1-byte values among longer test
 * values make happen.  Shorter values gain nothing from a dictionary.
 */
#define CX_DICT_MIN_SAMPLE		8

/*
 * Train a dictionary of at most dict_size bytes on plain values (a List of
 * varlenas; each one's first CX_SAMPLE_VALUE_MAX bytes, CX_SAMPLE_TOTAL_MAX
 * in all; values shorter than CX_DICT_MIN_SAMPLE are left out).  Returns it
 * as a bytea, or NULL with *error set (zstd's error name, or why training
 * did not start) when no dictionary can be trained on these values.
 */
extern bytea *cx_dict_train(List *plain_values, int32 dict_size,
							int32 *nsamples, int64 *nbytes, const char **error);

#endif							/* COMPRESSX_DICT_H */
