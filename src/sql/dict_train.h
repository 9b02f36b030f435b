/*-------------------------------------------------------------------------
 *
 * dict_train.h
 *	  Training zstd dictionaries (compressx.train_dictionary(), advise()).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_TRAIN_H
#define COMPRESSX_DICT_TRAIN_H

#include "nodes/pg_list.h"

/*
 * Train a dictionary of at most dict_size bytes on plain values (a List of
 * varlenas; each one's first 128 kB, 64 MB in all).  Returns it as a bytea,
 * or NULL with *error set when zstd cannot train one on these values.
 */
extern bytea *cx_dict_train(List *plain_values, int32 dict_size,
							int32 *nsamples, int64 *nbytes, const char **error);

#endif							/* COMPRESSX_DICT_TRAIN_H */
