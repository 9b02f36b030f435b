/*-------------------------------------------------------------------------
 *
 * inspect.h
 *	  Reading the stored form of varlena values without decoding them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_INSPECT_H
#define COMPRESSX_INSPECT_H

#include "access/htup.h"
#include "nodes/pg_list.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

/* How a value is stored; also the index into the per-method counters. */
typedef enum CxStoredMethod
{
	CX_STORED_NONE = 0,			/* not compressed */
	CX_STORED_PGLZ = 1,
	CX_STORED_LZ4 = 2,
	CX_STORED_ZSTD = 3,			/* compressx's own format */
	CX_STORED_OTHER = 4,		/* method bits nobody we know uses */
	CX_STORED_LZ4_DICT = 5		/* compressx's own format: lz4, dictionary */
} CxStoredMethod;

#define CX_STORED_METHOD_COUNT 6

typedef struct CxStoredValue
{
	CxStoredMethod method;
	bool		external;		/* stored out of line in TOAST */
	int64		raw_bytes;		/* decoded payload, without varlena header */
	int64		stored_bytes;	/* as pg_column_size() reports it */
} CxStoredValue;

extern const char *cx_stored_method_name(CxStoredMethod method);

/* Describe a stored (on-disk form) varlena datum. */
extern void cx_inspect_datum(Datum value, CxStoredValue *out);

/*
 * Visit tuples of a heap-format relation block by block.  With snapshot
 * SnapshotAny every tuple version is visited.  sample_rows < 0 reads every
 * block; otherwise a random set of blocks expected to hold about
 * sample_rows tuples.  The callback runs with a share lock on the buffer
 * and must not do anything that could block or error on the page.
 */
typedef void (*CxTupleVisitor) (HeapTuple tuple, void *arg);

extern void cx_visit_tuples(Relation rel, Snapshot snapshot,
							int64 sample_rows, CxTupleVisitor visitor,
							void *arg);

/*
 * Copies of at most limit visible tuples of a block sample of about
 * sample_rows rows (cx_visit_tuples), in the current memory context.
 * Errors when they take more than compressx.sample_memory.
 */
extern List *cx_sample_tuples(Relation rel, Snapshot snapshot,
							  int64 sample_rows, int64 limit);

/*
 * The same, drawn from seed alone: blocks are read in the order of a hash
 * of their number and seed until limit visible tuples are copied, so the
 * same contents and seed give the same sample, whatever the planner's
 * statistics (which only size the batches of blocks ordered at once).
 * Blocks are read in that order, not sequentially.
 */
extern List *cx_sample_tuples_seeded(Relation rel, Snapshot snapshot,
									 int64 sample_rows, int64 limit,
									 uint64 seed);

/* Error if a sample of rel takes more than compressx.sample_memory. */
extern void cx_check_sample_memory(Relation rel, int64 bytes);

/* Open a readable table and list its leaves with storage (see inspect.c). */
extern Relation cx_open_readable_table(Oid relid, List **leaves);

/* Error unless rel is a table stored by heap or compressx, or partitioned. */
extern void cx_check_table_relkind(Relation rel);

/* Register the GUCs compressx.ratio_sample_rows and sample_memory. */
extern void cx_inspect_init(void);

#endif							/* COMPRESSX_INSPECT_H */
