/*-------------------------------------------------------------------------
 *
 * decoder.c
 *	  Logical decoding of compressx tables: an output plugin that wraps
 *	  another one (pgoutput, test_decoding) and hands it every change of a
 *	  compressx table with compressx's values decoded.
 *
 * Decoding rebuilds rows from heap WAL records, never through the access
 * method, so a plugin sees compressx's stored values: core reads pglz and
 * lz4 (core's format), but a zstd value (method bits 2) makes its output
 * function fail and the slot stop.  This wrapper loads the inner plugin,
 * copies its callbacks and replaces a few:
 *
 *	- change (and stream change): for a compressx table, the old and new
 *	  tuples are re-formed with each own value replaced by an indirect
 *	  pointer to its decoded bytes, and the inner plugin gets a shallow copy
 *	  of the change holding them.  The change itself is never written to:
 *	  reorderbuffer.c accounts memory by the tuples it holds.  Every other
 *	  change is passed on as it is.
 *	- message (and stream message): compressx's body messages are kept, not
 *	  passed on; every other message is.
 *	- the ends of a transaction (commit, prepare, stream commit, stream
 *	  prepare, stream abort of the top transaction): the bodies kept for it
 *	  are freed.
 *
 * An out-of-line value (a 24-byte reference, format.h) is rebuilt from, in
 * order:
 *	1. the TOAST rows the decoded transaction wrote for it: reorderbuffer
 *	   collects a transaction's TOAST inserts in txn->toast_hash, keyed by
 *	   value id, and keeps them until the change that follows them has been
 *	   handed to the plugin (for COPY, until the last row of the batch);
 *	2. for the new version of an UPDATE, a value in no identity column and
 *	   not found in 1: it was not changed, and is sent as core sends an
 *	   unchanged out-of-line value, an on-disk TOAST pointer (pgoutput's 'u',
 *	   test_decoding's unchanged-toast-datum).  The pointer names no relation
 *	   (InvalidOid), so nothing can fetch wrong bytes through it;
 *	3. for the old version, and identity columns of the new one, a body
 *	   message the writer logged just before the change (am_write.c); bodies
 *	   are kept from their message until the next change of the transaction,
 *	   at most CX_BODIES_MAX_BYTES, and only compressx's own can be looked
 *	   at (see decode_value());
 *	4. otherwise the TOAST relation itself, under the historic snapshot: the
 *	   rows are there unless VACUUM removed them since, in which case the
 *	   fetch fails naming relation and column (and the slot stops there).
 *
 * Dictionaries are read with the historic snapshot (catalog/dict.c).
 *
 * txn->toast_hash's entries are reorderbuffer.c's private
 * ReorderBufferToastEnt, copied below as CxToastEnt: identical in 15.18,
 * 18.6 and 19~rc1 (16 and 17: not checked here, no source; see compat.h).  The TAP test
 * 012_logical.pl exercises it on each major the suite runs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "fmgr.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "replication/logical.h"
#include "replication/output_plugin.h"
#include "replication/slot.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "catalog/relation.h"
#include "storage/format.h"
#include "logical/decoder.h"

#ifndef CX_TOAST_ENT_CHECKED
#error "reorderbuffer.c's ReorderBufferToastEnt is checked for PostgreSQL 15 to 19 only"
#endif

/* reorderbuffer.c's ReorderBufferToastEnt (see the head comment) */
typedef struct CxToastEnt
{
	Oid			chunk_id;
	int32		last_chunk_seq;
	Size		num_chunks;
	Size		size;
	dlist_head	chunks;
	struct varlena *reconstructed;
} CxToastEnt;

/* A body message, kept until its transaction ends. */
typedef struct BodyKey
{
	TransactionId xid;			/* top transaction */
	Oid			toastrelid;
	Oid			valueid;
} BodyKey;

typedef struct BodyEnt
{
	BodyKey		key;
	char	   *body;
	int32		len;
	dlist_node	node;			/* in bodies_order, oldest first */
} BodyEnt;

/*
 * What the kept bodies may take.  Legitimate ones are those of one row
 * (compressx logs them just before the row's change, which drops them);
 * anyone may emit messages with compressx's prefix, so beyond this the
 * oldest are dropped, and a value whose body was dropped is read from the
 * TOAST relation instead (source 4).
 */
#define CX_BODIES_MAX_BYTES		((Size) 256 * 1024 * 1024)

/*
 * One decoding context runs in a process at a time; its state lives in
 * contexts below the decoding context's, made at startup.
 */
static OutputPluginCallbacks inner;
static MemoryContext change_cxt = NULL;
static MemoryContext bodies_cxt = NULL;
static HTAB *bodies = NULL;
static dlist_head bodies_order;
static Size bodies_bytes = 0;

/* What a tuple is, for the choice of sources (head comment). */
typedef enum RowKind
{
	ROW_NEW,					/* INSERT's row */
	ROW_UPDATED,				/* UPDATE's new version */
	ROW_OLD						/* UPDATE's or DELETE's old version or key */
} RowKind;

static void
forget_body(BodyEnt *e)
{
	dlist_delete(&e->node);
	bodies_bytes -= e->len;
	pfree(e->body);
	hash_search(bodies, &e->key, HASH_REMOVE, NULL);
}

/*
 * Drop the bodies kept for txn's top transaction: after each of its
 * changes (a body serves the change that follows it), and at its end.
 */
static void
drop_bodies(ReorderBufferTXN *txn)
{
	TransactionId xid;
	dlist_mutable_iter it;

	if (bodies == NULL)
		return;
	xid = cx_top_txn(txn)->xid;
	dlist_foreach_modify(it, &bodies_order)
	{
		BodyEnt    *e = dlist_container(BodyEnt, node, it.cur);

		if (e->key.xid == xid)
			forget_body(e);
	}
	if (dlist_is_empty(&bodies_order))
	{
		/* nothing kept: start again from an empty context */
		hash_destroy(bodies);
		MemoryContextReset(bodies_cxt);
		bodies = NULL;
		bodies_bytes = 0;
	}
}

static void
keep_body(ReorderBufferTXN *txn, const char *message, Size size)
{
	BodyKey		key;
	BodyEnt    *e;
	bool		found;

	/* a payload version this compressx does not know is of no use to it */
	if (size < CX_BODY_MESSAGE_HDRSZ || message[0] != CX_BODY_MESSAGE_VERSION ||
		size - CX_BODY_MESSAGE_HDRSZ > CX_BODIES_MAX_BYTES)
		return;
	memset(&key, 0, sizeof(key));
	key.xid = cx_top_txn(txn)->xid;
	memcpy(&key.toastrelid, message + 1, sizeof(Oid));
	memcpy(&key.valueid, message + 5, sizeof(Oid));
	if (bodies == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(BodyKey);
		ctl.entrysize = sizeof(BodyEnt);
		ctl.hcxt = bodies_cxt;
		bodies = hash_create("compressx body messages", 16, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		dlist_init(&bodies_order);
		bodies_bytes = 0;
	}
	/* the latest message for a value wins: compressx logs its own last */
	e = hash_search(bodies, &key, HASH_FIND, NULL);
	if (e)
		forget_body(e);
	while (!dlist_is_empty(&bodies_order) &&
		   bodies_bytes + (size - CX_BODY_MESSAGE_HDRSZ) > CX_BODIES_MAX_BYTES)
		forget_body(dlist_container(BodyEnt, node, dlist_head_node(&bodies_order)));
	e = hash_search(bodies, &key, HASH_ENTER, &found);
	e->len = (int32) (size - CX_BODY_MESSAGE_HDRSZ);
	e->body = MemoryContextAlloc(bodies_cxt, Max(e->len, 1));
	memcpy(e->body, message + CX_BODY_MESSAGE_HDRSZ, e->len);
	dlist_push_tail(&bodies_order, &e->node);
	bodies_bytes += e->len;
}

/*
 * The inline value a reference stands for, from the TOAST rows of txn
 * (source 1); NULL when they are not there, or do not add up to the
 * reference's stored length.
 */
static struct varlena *
inline_from_chunks(ReorderBufferTXN *txn, Relation rel, const struct varlena *ref,
				   Oid valueid, uint32 storedlen)
{
	CxToastEnt *ent;
	Relation	toastrel;
	TupleDesc	desc;
	char	   *body;
	Size		off = 0;
	dlist_iter	it;
	struct varlena *result = NULL;

	if (txn->toast_hash == NULL || !OidIsValid(rel->rd_rel->reltoastrelid))
		return NULL;
	ent = hash_search(txn->toast_hash, &valueid, HASH_FIND, NULL);
	if (ent == NULL || ent->size != storedlen)
		return NULL;
	toastrel = RelationIdGetRelation(rel->rd_rel->reltoastrelid);
	if (!RelationIsValid(toastrel))
		return NULL;
	desc = RelationGetDescr(toastrel);
	body = palloc(Max(storedlen, 1));
	dlist_foreach(it, &ent->chunks)
	{
		ReorderBufferChange *c = dlist_container(ReorderBufferChange, node, it.cur);
		HeapTuple	t = cx_change_tuple(c->data.tp.newtuple);
		bool		isnull;
		Pointer		chunk = DatumGetPointer(heap_getattr(t, 3, desc, &isnull));
		Size		len;
		char	   *data;

		if (isnull || (VARATT_IS_EXTENDED(chunk) && !VARATT_IS_SHORT(chunk)))
			break;
		if (VARATT_IS_SHORT(chunk))
		{
			len = VARSIZE_SHORT(chunk) - VARHDRSZ_SHORT;
			data = VARDATA_SHORT(chunk);
		}
		else
		{
			len = VARSIZE(chunk) - VARHDRSZ;
			data = VARDATA(chunk);
		}
		if (off + len > storedlen)
			break;
		memcpy(body + off, data, len);
		off += len;
	}
	RelationClose(toastrel);
	if (off == storedlen)
		result = cx_inline_from_body(ref, body, (int32) storedlen);
	pfree(body);
	return result;
}

/* The same from a body message of txn (source 3). */
static struct varlena *
inline_from_message(ReorderBufferTXN *txn, const struct varlena *ref,
					Oid toastrelid, Oid valueid, uint32 storedlen)
{
	BodyKey		key;
	BodyEnt    *e;

	if (bodies == NULL)
		return NULL;
	memset(&key, 0, sizeof(key));
	key.xid = cx_top_txn(txn)->xid;
	key.toastrelid = toastrelid;
	key.valueid = valueid;
	e = hash_search(bodies, &key, HASH_FIND, NULL);
	if (e == NULL || e->len != (int32) storedlen)
		return NULL;
	return cx_inline_from_body(ref, e->body, e->len);
}

/* An indirect pointer to plain, as reorderbuffer.c gives reassembled values. */
static Datum
indirect_datum(struct varlena *plain)
{
	struct varatt_indirect redirect;
	struct varlena *p = palloc(INDIRECT_POINTER_SIZE);

	redirect.pointer = plain;
	SET_VARTAG_EXTERNAL(p, VARTAG_INDIRECT);
	memcpy(VARDATA_EXTERNAL(p), &redirect, sizeof(redirect));
	return PointerGetDatum(p);
}

/* Core's unchanged out-of-line value for a reference (source 2). */
static Datum
unchanged_datum(const struct varlena *ref, uint32 storedlen)
{
	struct varatt_external ext;
	struct varlena *p = palloc(TOAST_POINTER_SIZE);

	ext.va_rawsize = VARDATA_COMPRESSED_GET_EXTSIZE(ref) + VARHDRSZ;
	ext.va_extinfo = storedlen;
	ext.va_valueid = InvalidOid;
	ext.va_toastrelid = InvalidOid;
	SET_VARTAG_EXTERNAL(p, VARTAG_ONDISK);
	memcpy(VARDATA_EXTERNAL(p), &ext, sizeof(ext));
	return PointerGetDatum(p);
}

/* The decoded value of own value v of rel's column att, as a Datum. */
static Datum
decode_value(ReorderBufferTXN *txn, Relation rel, struct varlena *v,
			 Form_pg_attribute att, RowKind kind, Bitmapset **idattrs,
			 bool *idattrs_known)
{
	Oid			relid = RelationGetRelid(rel);
	const char *attname = NameStr(att->attname);
	Oid			toastrelid;
	Oid			valueid;
	uint32		storedlen;
	struct varlena *inl;
	struct varlena *plain;
	Snapshot	snap;

	if (cx_attribute(v, relid, NULL) != CX_OWN_REFERENCE)
		return indirect_datum(cx_decode(v, relid, attname));	/* inline, or
																 * the error */
	cx_reference_target(v, &toastrelid, &valueid, &storedlen);
	inl = inline_from_chunks(txn, rel, v, valueid, storedlen);

	/*
	 * Messages only where compressx logs one before the change: for the old
	 * row, and for identity columns of an UPDATE's new row (the same
	 * values).  Anyone can emit a message with compressx's prefix; one
	 * emitted before compressx's own for the same value is replaced by it,
	 * and one for a value compressx logs nothing for is never looked at.
	 */
	if (inl == NULL && kind == ROW_UPDATED)
	{
		if (!*idattrs_known)
		{
			*idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
			*idattrs_known = true;
		}
		if (!bms_is_member(att->attnum - FirstLowInvalidHeapAttributeNumber, *idattrs))
			return unchanged_datum(v, storedlen);
	}
	if (inl == NULL && kind != ROW_NEW)
		inl = inline_from_message(txn, v, toastrelid, valueid, storedlen);
	if (inl != NULL)
		return indirect_datum(cx_decode(inl, relid, attname));

	/* source 4: the TOAST relation, read as systable_beginscan() would */
	snap = RegisterSnapshot(GetCatalogSnapshot(relid));
	plain = cx_decode(v, relid, attname);
	UnregisterSnapshot(snap);
	return indirect_datum(plain);
}

/* tup with own values decoded, or NULL when it holds none. */
static HeapTuple
decode_row(ReorderBufferTXN *txn, Relation rel, HeapTuple tup, RowKind kind)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values;
	bool	   *isnull;
	bool		changed = false;
	Bitmapset  *idattrs = NULL;
	bool		idattrs_known = false;
	HeapTuple	result;

	if (tup == NULL || !HeapTupleHasVarWidth(tup))
		return NULL;
	values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	heap_deform_tuple(tup, desc, values, isnull);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		struct varlena *v = (struct varlena *) DatumGetPointer(values[i]);

		if (isnull[i] || att->attlen != -1 || att->attisdropped ||
			!cx_is_own_datum(v))
			continue;
		values[i] = decode_value(txn, rel, v, att, kind, &idattrs, &idattrs_known);
		changed = true;
	}
	if (!changed)
		return NULL;
	result = heap_form_tuple(desc, values, isnull);
	result->t_self = tup->t_self;
	result->t_tableOid = tup->t_tableOid;
	return result;
}

typedef void (*ChangeCallback) (LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
								Relation relation, ReorderBufferChange *change);

static void
pass_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, Relation rel,
			ReorderBufferChange *change, ChangeCallback cb)
{
	HeapTuple	oldtup;
	HeapTuple	newtup;
	MemoryContext oldcxt;
	ReorderBufferChange copy;

	if (!cx_is_compressx_relation(rel) ||
		(change->action != REORDER_BUFFER_CHANGE_INSERT &&
		 change->action != REORDER_BUFFER_CHANGE_UPDATE &&
		 change->action != REORDER_BUFFER_CHANGE_DELETE))
	{
		cb(ctx, txn, rel, change);
		drop_bodies(txn);
		return;
	}

	oldcxt = MemoryContextSwitchTo(change_cxt);
	oldtup = decode_row(txn, rel, cx_change_tuple(change->data.tp.oldtuple), ROW_OLD);
	newtup = decode_row(txn, rel, cx_change_tuple(change->data.tp.newtuple),
						change->action == REORDER_BUFFER_CHANGE_UPDATE ? ROW_UPDATED : ROW_NEW);
	copy = *change;
	if (oldtup)
		copy.data.tp.oldtuple = cx_make_change_tuple(oldtup);
	if (newtup)
		copy.data.tp.newtuple = cx_make_change_tuple(newtup);
	MemoryContextSwitchTo(oldcxt);

	cb(ctx, txn, rel, (oldtup || newtup) ? &copy : change);
	MemoryContextReset(change_cxt);
	drop_bodies(txn);
}

static void
cx_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, Relation rel,
		  ReorderBufferChange *change)
{
	pass_change(ctx, txn, rel, change, inner.change_cb);
}

static void
cx_stream_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, Relation rel,
				 ReorderBufferChange *change)
{
	pass_change(ctx, txn, rel, change, inner.stream_change_cb);
}

static void
cx_message(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn,
		   bool transactional, const char *prefix, Size size, const char *message)
{
	if (transactional && strcmp(prefix, CX_BODY_MESSAGE_PREFIX) == 0)
		keep_body(txn, message, size);
	else if (inner.message_cb)
		inner.message_cb(ctx, txn, lsn, transactional, prefix, size, message);
}

static void
cx_stream_message(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn,
				  bool transactional, const char *prefix, Size size, const char *message)
{
	if (transactional && strcmp(prefix, CX_BODY_MESSAGE_PREFIX) == 0)
		keep_body(txn, message, size);
	else if (inner.stream_message_cb)
		inner.stream_message_cb(ctx, txn, lsn, transactional, prefix, size, message);
}

static void
cx_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn)
{
	inner.commit_cb(ctx, txn, lsn);
	drop_bodies(txn);
}

static void
cx_prepare(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn)
{
	inner.prepare_cb(ctx, txn, lsn);
	drop_bodies(txn);
}

static void
cx_stream_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn)
{
	inner.stream_commit_cb(ctx, txn, lsn);
	drop_bodies(txn);
}

static void
cx_stream_prepare(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn)
{
	inner.stream_prepare_cb(ctx, txn, lsn);
	drop_bodies(txn);
}

static void
cx_stream_abort(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn)
{
	inner.stream_abort_cb(ctx, txn, lsn);
	/* a subtransaction's abort leaves its top transaction going on */
	if (cx_top_txn(txn) == txn)
		drop_bodies(txn);
}

static void
cx_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt, bool is_init)
{
	change_cxt = AllocSetContextCreate(ctx->context, "compressx decoding",
									   ALLOCSET_DEFAULT_SIZES);
	bodies_cxt = AllocSetContextCreate(ctx->context, "compressx body messages",
									   ALLOCSET_DEFAULT_SIZES);
	bodies = NULL;
	bodies_bytes = 0;
	if (inner.startup_cb)
		inner.startup_cb(ctx, opt, is_init);
}

static void
cx_shutdown(LogicalDecodingContext *ctx)
{
	if (inner.shutdown_cb)
		inner.shutdown_cb(ctx);
	/* the contexts go with the decoding context */
	change_cxt = NULL;
	bodies_cxt = NULL;
	bodies = NULL;
}

void
cx_wrap_output_plugin(OutputPluginCallbacks *cb, const char *inner_library)
{
	LogicalOutputPluginInit init;

	init = (LogicalOutputPluginInit)
		load_external_function(inner_library, "_PG_output_plugin_init", false, NULL);
	if (init == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("library \"%s\" is not a logical decoding output plugin",
						inner_library),
				 errdetail("compressx wraps an output plugin; this library has no _PG_output_plugin_init.")));
	memset(&inner, 0, sizeof(inner));
	init(&inner);
	if (inner.change_cb == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("output plugin \"%s\" has no change callback", inner_library)));

	/* everything as the inner plugin has it, NULLs included (logical.c
	 * derives streaming and two-phase support from which are set) */
	*cb = inner;
	cb->startup_cb = cx_startup;
	cb->shutdown_cb = cx_shutdown;
	cb->change_cb = cx_change;
	cb->message_cb = cx_message;
	cb->commit_cb = inner.commit_cb ? cx_commit : NULL;
	cb->prepare_cb = inner.prepare_cb ? cx_prepare : NULL;
	cb->stream_change_cb = inner.stream_change_cb ? cx_stream_change : NULL;
	cb->stream_message_cb = inner.stream_change_cb ? cx_stream_message : NULL;
	cb->stream_commit_cb = inner.stream_commit_cb ? cx_stream_commit : NULL;
	cb->stream_prepare_cb = inner.stream_prepare_cb ? cx_stream_prepare : NULL;
	cb->stream_abort_cb = inner.stream_abort_cb ? cx_stream_abort : NULL;
}

void
cx_decoder_init(void)
{
	/*
	 * Loaded while a change is decoded: the relcache met a compressx table
	 * and called its handler, so the slot's plugin is not one of the
	 * wrappers (they load this library before decoding starts).  Say so
	 * once, where the slot's owner looks, before the plugin fails on a
	 * zstd value (core's "invalid compression method id 2").
	 */
	if (HistoricSnapshotActive() && MyReplicationSlot != NULL &&
		SlotIsLogical(MyReplicationSlot))
	{
		const char *plugin = NameStr(MyReplicationSlot->data.plugin);

		/*
		 * A pgoutput or test_decoding slot keeps its place: with the shadow
		 * plugins enabled its next attempt decodes the change it stopped at
		 * (a consumer such as Debezium resumes, nothing lost).  A slot of
		 * another plugin cannot be repaired.
		 */
		if (strcmp(plugin, "pgoutput") == 0 || strcmp(plugin, "test_decoding") == 0)
			ereport(WARNING,
					(errmsg("logical decoding slot \"%s\" with output plugin \"%s\" meets a compressx table",
							NameStr(MyReplicationSlot->data.name), plugin),
					 errdetail("That plugin cannot decode compressx's zstd values: the slot stops at the first one it has to send."),
					 errhint("To keep this slot, put $libdir/compressx_decoders before $libdir on dynamic_library_path "
							 "and reload the configuration: the slot's next attempt then decodes the same change "
							 "with compressx's %s.", plugin)));
		else
			ereport(WARNING,
					(errmsg("logical decoding slot \"%s\" with output plugin \"%s\" meets a compressx table",
							NameStr(MyReplicationSlot->data.name), plugin),
					 errdetail("That plugin cannot decode compressx's zstd values: the slot stops at the first one it has to send."),
					 errhint("Use a slot with output plugin compressx (pgoutput's protocol) or compressx_test_decoding, "
							 "or a pgoutput slot with $libdir/compressx_decoders before $libdir on dynamic_library_path; "
							 "compressx.check_logical() lists such slots.")));
	}
}

/*
 * The slot plugin "compressx": pgoutput, wrapped, loaded by its full path
 * (not "$libdir/pgoutput", which PostgreSQL 18 looks up on
 * dynamic_library_path, where the shadow pgoutput may come first).
 */
void
_PG_output_plugin_init(OutputPluginCallbacks *cb)
{
	char		inner[MAXPGPATH];

	snprintf(inner, sizeof(inner), "%s/pgoutput", pkglib_path);
	cx_wrap_output_plugin(cb, inner);
}
