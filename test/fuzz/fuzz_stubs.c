/*
 * fuzz_stubs.c
 *	  Just enough of the PostgreSQL backend for compressx's decoders to run
 *	  in a standalone fuzzing harness: palloc from a per-input arena,
 *	  ereport/elog unwinding with longjmp, and the catalog and TOAST
 *	  functions the decoders may reach (an out-of-line reference reads its
 *	  body from the harness).
 */
#include "postgres.h"

#include <setjmp.h>
#include <zstd.h>

#include "access/detoast.h"
#include "access/toast_internals.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "replication/message.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "storage/codec.h"
#include "fuzz_stubs.h"

sigjmp_buf fuzz_jmp;
const char *fuzz_external_body = NULL;
size_t		fuzz_external_len = 0;

/* error handling globals referenced by macros */
ErrorContextCallback *error_context_stack = NULL;
sigjmp_buf *PG_exception_stack = NULL;
MemoryContext CurrentMemoryContext = NULL;

/* arena: every allocation of one input, freed after it */
static void **arena = NULL;
static size_t arena_n = 0,
			arena_cap = 0;

/* each block starts with its size, for repalloc */
static void *
arena_alloc(size_t size)
{
	size_t	   *p = calloc(1, sizeof(size_t) * 2 + size);

	if (p == NULL)
		abort();
	if (arena_n == arena_cap)
	{
		arena_cap = arena_cap ? arena_cap * 2 : 64;
		arena = realloc(arena, arena_cap * sizeof(void *));
	}
	arena[arena_n++] = p;
	p[0] = size;
	return p + 2;
}

void
fuzz_arena_reset(void)
{
	for (size_t i = 0; i < arena_n; i++)
		free(arena[i]);
	arena_n = 0;
}

void *
palloc(Size size)
{
	if (size > MaxAllocSize)
		abort();				/* the decoders must check sizes first */
	return arena_alloc(size);
}

void *
palloc0(Size size)
{
	return palloc(size);
}

void
pfree(void *pointer)
{
	/* freed with the arena */
}

void *
repalloc(void *pointer, Size size)
{
	size_t		old = ((size_t *) pointer)[-2];
	void	   *p = palloc(size);

	memcpy(p, pointer, old < size ? old : size);
	return p;
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	return palloc(size);
}

/* the codec's own zstd contexts: memory from the arena, freed with it */
MemoryContext
AllocSetContextCreateInternal(MemoryContext parent, const char *name,
							  Size minContextSize, Size initBlockSize,
							  Size maxBlockSize)
{
	static int	dummy;

	return (MemoryContext) &dummy;
}

void *
MemoryContextAllocExtended(MemoryContext context, Size size, int flags)
{
	return arena_alloc(size);
}

void
MemoryContextDelete(MemoryContext context)
{
}

/* the decoder's scratch context: its memory goes with the arena */
MemoryContext TopMemoryContext = NULL;

void
MemoryContextReset(MemoryContext context)
{
}

/* CHECK_FOR_INTERRUPTS(): never pending here */
volatile sig_atomic_t InterruptPending = false;

void
ProcessInterrupts(void)
{
}

/* compressx.max_codec_memory keeps its default */
void
DefineCustomIntVariable(const char *name, const char *short_desc,
						const char *long_desc, int *valueAddr, int bootValue,
						int minValue, int maxValue, GucContext context,
						int flags, GucIntCheckHook check_hook,
						GucIntAssignHook assign_hook, GucShowHook show_hook)
{
}

char *
pstrdup(const char *in)
{
	char	   *p = palloc(strlen(in) + 1);

	strcpy(p, in);
	return p;
}

/* ereport / elog: remember and unwind to the harness */
bool
errstart(int elevel, const char *domain)
{
	return elevel >= ERROR;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	siglongjmp(fuzz_jmp, 1);
}

int			errcode(int sqlerrcode) { return 0; }
int			errmsg(const char *fmt,...) { return 0; }
int			errmsg_internal(const char *fmt,...) { return 0; }
int			errdetail(const char *fmt,...) { return 0; }
int			errhint(const char *fmt,...) { return 0; }
int			errcontext_msg(const char *fmt,...) { return 0; }
int			set_errcontext_domain(const char *domain) { return 0; }

/* SQL-level helpers of frame.c the harness never reaches */
void		InitMaterializedSRF(FunctionCallInfo fcinfo, bits32 flags) { abort(); }
void		tuplestore_putvalues(Tuplestorestate *state, TupleDesc tdesc,
								 Datum *values, bool *isnull) { abort(); }
char	   *text_to_cstring(const text *t) { abort(); }
text	   *cstring_to_text(const char *s) { abort(); }

/* encoding paths of format.c, not fuzzed here */
Datum		toast_compress_datum(Datum value, char cmethod) { abort(); }
Datum		toast_save_datum(Relation rel, Datum value, struct varlena *oldexternal,
							 int options) { abort(); }
void		toast_delete_datum(Relation rel, Datum value, bool is_speculative) { abort(); }

/* catalog lookups: no relation is known */
char *
get_rel_name(Oid relid)
{
	return NULL;
}

/*
 * An out-of-line reference's body comes from the harness input, as
 * detoast_external_attr would return it: a plain 4-byte-header varlena.
 */
struct varlena *
detoast_external_attr(struct varlena *attr)
{
	struct varlena *result;

	if (fuzz_external_body == NULL)
		elog(ERROR, "no external value");
	result = palloc(VARHDRSZ + fuzz_external_len);
	SET_VARSIZE(result, VARHDRSZ + fuzz_external_len);
	memcpy(VARDATA(result), fuzz_external_body, fuzz_external_len);
	return result;
}

/* The first bytes of that body, as detoast_attr_slice would return them. */
struct varlena *
detoast_attr_slice(struct varlena *attr, int32 sliceoffset, int32 slicelength)
{
	struct varlena *result;
	int32		total = (int32) fuzz_external_len;
	int32		len;

	if (fuzz_external_body == NULL)
		elog(ERROR, "no external value");
	if (sliceoffset < 0 || sliceoffset > total)
		sliceoffset = total;
	len = total - sliceoffset;
	if (slicelength >= 0 && slicelength < len)
		len = slicelength;
	result = palloc(VARHDRSZ + len);
	SET_VARSIZE(result, VARHDRSZ + len);
	memcpy(VARDATA(result), fuzz_external_body + sliceoffset, len);
	return result;
}

/* Logging a body for logical decoding is not a fuzzed path. */
XLogRecPtr
LogLogicalMessage(const char *prefix, const char *message, size_t size,
				  bool transactional
#if PG_VERSION_NUM >= 170000
				  ,bool flush
#endif
)
{
	elog(ERROR, "LogLogicalMessage is not part of the fuzzed paths");
	return InvalidXLogRecPtr;
}

struct varlena *
detoast_attr(struct varlena *attr)
{
	elog(ERROR, "detoast_attr is not part of the fuzzed paths");
	return NULL;
}

struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	return datum;
}

HeapTuple
SearchSysCache1(int cacheId, Datum key1)
{
	return NULL;
}

void
ReleaseSysCache(HeapTuple tuple)
{
}

/* format.c remembers a table's TOAST relation until an invalidation */
void
CacheRegisterRelcacheCallback(RelcacheCallbackFunction func, Datum arg)
{
}

/*
 * Dictionaries: id 1 is a fixed raw-content dictionary (fuzz_dict_text, the
 * seeds' dictionary too); any other id does not exist.
 */
const char fuzz_dict_text[] =
	"{\"Package\": \"\", \"Version\": \"\", \"Depends\": \"libc6 (>= 2.34)\", "
	"\"Description\": \"values compress well when they repeat\"}";

const void *
cx_dict_ddict(int32 dict_id)
{
	static ZSTD_DDict *ddict = NULL;

	if (dict_id != 1)
		return NULL;
	if (ddict == NULL)
		ddict = ZSTD_createDDict(fuzz_dict_text, sizeof(fuzz_dict_text) - 1);
	return ddict;
}

/*
 * Decoding's lookup (format.h's CxDDictLookup): dictionary 1 as the codec
 * digests it, a ZSTD_DDict for zstd and a CxLz4Dict for lz4 (its stream is
 * only for compressing), as catalog/dict.c's lookup gives them.
 */
const void *
fuzz_dict_lookup(int32 dict_id, int codec_id)
{
	static const CxLz4Dict lz4 = {fuzz_dict_text, sizeof(fuzz_dict_text) - 1, NULL};

	if (dict_id != 1)
		return NULL;
	if (codec_id == CX_CODEC_LZ4)
		return &lz4;
	if (codec_id == CX_CODEC_ZSTD)
		return cx_dict_ddict(dict_id);
	return NULL;
}

const void *
cx_dict_cdict(int32 dict_id, int level)
{
	static ZSTD_CDict *cdict = NULL;

	if (dict_id != 1)
		abort();
	if (cdict == NULL)
		cdict = ZSTD_createCDict(fuzz_dict_text, sizeof(fuzz_dict_text) - 1, level);
	return cdict;
}
