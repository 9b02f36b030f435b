/*-------------------------------------------------------------------------
 *
 * recompress.h
 *	  What recompress_table() and recompress_online() share: the request
 *	  (codec, level), the target columns, and the checks of both.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_RECOMPRESS_H
#define COMPRESSX_RECOMPRESS_H

#include "utils/array.h"
#include "utils/rel.h"

#include "storage/codec.h"
#include "sql/inspect.h"

/* One target column, by name (attnums differ between partitions). */
typedef struct TargetColumn
{
	char		name[NAMEDATALEN];
	char		method;			/* heap: core compression method char */
	CxStoredMethod target;		/* stored method wanted in the current leaf */
	int64		rewritten;
	int64		bytes_before;
	int64		bytes_after;
	int64		plain_values;	/* heap leaves: values stored inline uncompressed */
	int64		plain_bytes;
} TargetColumn;

/* What the caller asked for. */
typedef struct CxRecompressRequest
{
	const CxCodec *codec;		/* NULL: each column's own setting */
	bool		level_isnull;
	int			level;
} CxRecompressRequest;

/* Parse the codec and level arguments (valid for some access method). */
extern void cx_recompress_parse_request(bool codec_isnull, text *codec_text,
										bool level_isnull, int level,
										CxRecompressRequest *req);

/* Error unless the request suits rel's access method (heap: pglz, lz4). */
extern void cx_recompress_check_request(Relation rel, const CxRecompressRequest *req);

/* The same, for rel stored by heap (heap_target) or by compressx. */
extern void cx_recompress_check_request_for(Relation rel, const CxRecompressRequest *req,
											bool heap_target);

/* Core method char for heap columns: pglz/lz4 or invalid (column's own). */
extern char cx_recompress_heap_method(const CxRecompressRequest *req);

/*
 * The columns argument resolved against rel (NULL: every column whose type
 * supports compression); method is the heap target or invalid.
 */
extern TargetColumn *cx_recompress_resolve_targets(Relation rel, ArrayType *columns,
												   char method, int *ntargets);

/*
 * Set attcompression of the target columns of relid to their method (heap),
 * invalidating its relcache entry.  The caller holds ACCESS EXCLUSIVE.
 */
extern void cx_set_column_compression(Oid relid, TargetColumn *targets,
									  int ntargets);

/* Error unless relid exists and the user owns it.  Takes no lock. */
extern void cx_recompress_check_owner(Oid relid);

/* The stored method of a core method char (pglz, lz4). */
extern CxStoredMethod cx_stored_method_of_char(char cmethod);

/* The stored method a codec writes. */
extern CxStoredMethod cx_stored_method_of_codec(const CxCodec *codec);
extern CxStoredMethod cx_stored_method_of_setting(const CxColumnSetting *s);

/*
 * Whether a stored value must be re-encoded for the target method.
 * Uncompressed values stay as they are unless the target is "none".
 */
extern bool cx_value_needs_rewrite(const CxStoredValue *sv, CxStoredMethod target);

#endif							/* COMPRESSX_RECOMPRESS_H */
