/*-------------------------------------------------------------------------
 *
 * dict.h
 *	  zstd dictionaries of compressx columns (compressx.dictionaries).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_H
#define COMPRESSX_DICT_H

/*
 * The digested dictionary dict_id for decompressing (a ZSTD_DDict), or NULL
 * when no such dictionary exists.  Cached for the life of the backend:
 * dictionaries never change.
 */
extern const void *cx_dict_ddict(int32 dict_id);

/*
 * The digested dictionary dict_id for compressing at level (a ZSTD_CDict);
 * errors when no such dictionary exists.
 */
extern const void *cx_dict_cdict(int32 dict_id, int level);

#endif							/* COMPRESSX_DICT_H */
