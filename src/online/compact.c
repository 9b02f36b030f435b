/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  recompress_online's last step on a table: move the live data out of
 *	  the end of the table and of its TOAST relation, so that a plain
 *	  VACUUM can truncate what the rewrite left there.
 *
 * Why.  The passes rewrite rows in place, as UPDATEs do: the new versions
 * (and TOAST chunks) of the first batches cannot go where the old ones
 * are, still visible, so they go to new pages at the end; later batches
 * reuse the room of earlier ones (online.c prunes it and records it in the
 * free space map).  So the run ends with the live data spread over the old
 * size plus the first batches' output, though it takes less room when the
 * codec shrinks it; VACUUM frees the room in the middle but truncates only
 * empty pages at the end.  Reported (issue 28): 3 507 HTML documents moved
 * from heap (pglz) to compressx (zstd) took TOAST from 17 to 24 MB, after
 * VACUUM too; VACUUM FULL gave 14 MB.
 *
 * What.  Rounds (at most three; a round that moves nothing ends them), each
 * a brief wait for old snapshots (each transaction at most max_lock_wait),
 * then steps, in transactions as short as the passes' batches:
 *	  1. Survey the table: the room its versions not dead to everyone take,
 *		 page by page, and the room free once pruned.  Its cut: the lowest
 *		 block from which its versions fit in the free room before it,
 *		 counted in rows, each a slot the size of the tail's largest row.
 *	  2. Prune the table's pages before the cut (heap_page_prune_opt, as any
 *		 reader does), measure their room again (the cut may rise) and
 *		 record it in the free space map, and none for the pages from the
 *		 cut: nothing new goes there.  The pages from the cut are not
 *		 pruned: full, they keep no new version on them.
 *	  3. The same for the TOAST relation, its pages pruned as they are read.
 *		 Its cut counts chunks against slots (room for the largest chunk),
 *		 or bytes against each page's room less the largest chunk: either
 *		 bound holds for chunks of any size, so what moves fits.
 *	  4. The TOAST values with a chunk from the cut (their last block), then
 *		 the rows holding them, in the order of that block, last first.
 *	  5. Each such row is copied (cx_move_locked_row), its values in the tail
 *		 saved again as stored (nothing decoded or encoded), the chunks going
 *		 to the lowest pages with room, the old ones deleted as an UPDATE
 *		 deletes them; a row holding an inline value in compressx's own
 *		 format keeps its core TOAST values (heap's toaster must not shrink
 *		 such a row).  Rows of the table's tail are left to step 6.
 *	  6. The table's rows from its cut, from its end down, copied the same
 *		 way (their values in the TOAST tail saved again too), each only
 *		 when the free space map offers a page before the cut.  heap keeps
 *		 a new version on its page when it fits: the room of such a page is
 *		 first filled by copies of the row in a subtransaction that is
 *		 rolled back (fill_page), so that the one copy that counts leaves.
 * Each row is copied at most once per call (issue 33, B9), rounds included.
 * A relation is left as it is when its cut would free less than VACUUM
 * truncates (a sixteenth of it and 1 000 pages: lazy vacuum's rule) or less
 * than 16 pages.  Moves stop when the room counted before a cut is used up,
 * when a copy lands from the cut on (the relation grew), or at the first
 * row of the tail that cannot move (a client holds it, this call moved it):
 * last blocks first, so what stays is the lowest part of the tail, and
 * nothing moved lies below a row that stays.
 *
 * Guarantees as the passes': each transaction holds ROW EXCLUSIVE taken
 * without queueing, is SERIALIZABLE (SSI sees the copies as UPDATEs),
 * locks rows without waiting and as heap's non-key UPDATE does (a row a
 * client holds stays where it is), runs as the table's owner, fires no
 * trigger, is
 * cancellable, and a crash leaves each row in its old or new version
 * (they hold the same values).  A copy is an UPDATE to replication and
 * logical decoding, with index entries for the new version.  Nothing is
 * truncated here (that takes ACCESS EXCLUSIVE): VACUUM, or autovacuum, does
 * it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/snapmgr.h"

#include "am/am.h"
#include "am/rewrite.h"
#include "online/run.h"
#include "sql/followup.h"

/* lazy vacuum's rule (vacuumlazy.c): it truncates at least this much */
#define CX_TRUNCATE_MINIMUM		1000
#define CX_TRUNCATE_FRACTION	16
/* and less than 128 kB is not worth the rows' new versions and index entries */
#define CX_COMPACT_MIN_BLOCKS	16

/* One relation (the table or its TOAST relation), as surveyed. */
typedef struct Survey
{
	BlockNumber nblocks;		/* its size at the survey */
	BlockNumber cut;			/* what lies from here moves (nblocks: none) */
	uint32	   *used;			/* per block: room of versions not dead */
	uint32	   *avail;			/* per block: room free once pruned */
	uint32	   *versions;		/* per block: versions not dead */
	uint32	   *largest;		/* per block: its largest version not dead,
								 * line pointer included */
	Size		biggest;		/* the largest version, line pointer included */
	Size		slot;			/* the table's: room one row of its tail takes */
	int64		room;			/* left before the cut, in rows (the table)
								 * or chunks (the TOAST relation) */
	int64		room_bytes;		/* the TOAST relation's, in bytes */
	BlockNumber soft_cut;		/* the TOAST relation's: the lowest cut a
								 * later round may find (see values_in_tail) */
	bool		full;			/* no more room: stop moving there */
} Survey;

/* A TOAST value with a chunk from the cut: its last block. */
typedef struct TailValue
{
	Oid			valueid;
	BlockNumber last;
} TailValue;

/* A row holding such values, and the last block of any of them. */
typedef struct Candidate
{
	ItemPointerData tid;
	BlockNumber last;
} Candidate;

typedef enum Step
{
	STEP_SURVEY_TABLE,			/* read the table's pages */
	STEP_PRUNE_TABLE,			/* prune the table's pages before its cut */
	STEP_SURVEY_TOAST,			/* prune and read the TOAST relation's */
	STEP_FIND_VALUES,			/* the values with chunks from the cut */
	STEP_FIND_ROWS,				/* the rows that hold them */
	STEP_MOVE_VALUES,			/* save them again, last ones first */
	STEP_MOVE_ROWS,				/* copy the rows from the table's cut */
	STEP_DONE
} Step;

/*
 * The transactions of this call's compaction that moved rows, in the order
 * of their xids: a version one of them wrote is not moved again (one move
 * per row and call, issue 33 B9).
 */
typedef struct MovedBy
{
	TransactionId *xids;
	int			n;
	int			max;
	MemoryContext cxt;
} MovedBy;

typedef struct Compaction
{
	Step		step;
	BlockNumber pos;			/* the step's next block, or candidate */
	BlockNumber fill;			/* STEP_MOVE_VALUES and STEP_MOVE_ROWS: the
								 * lowest TOAST block that may have room */
	BlockNumber end;			/* STEP_MOVE_ROWS: the table's end then */
	BlockNumber table_fill;		/* STEP_MOVE_ROWS: the lowest table block
								 * that may have room for a row */
	Survey		table;
	Survey		toast;
	HTAB	   *tail_values;
	Candidate  *cands;
	int			ncands;
	int			maxcands;
	int64		moved_values;
	int64		moved_rows;
	int64		hard_chunks;	/* the TOAST room the values with a chunk from
								 * the cut not saved again yet take */
	int64		hard_bytes;
	MovedBy    *moved_by;		/* lives as long as the call */
	OnlineRun  *run;
	MemoryContext cxt;			/* lives as long as the compaction */
} Compaction;

/*
 * The room a page must have beyond a row for the free space map to offer
 * it for that row (its sizes are rounded to 32 bytes, down as recorded, up
 * as asked); the rows after the first go to the same page (the relation's
 * target block) while they fit.
 */
#define CX_FSM_SLACK			32

static void
wait_vxid_fn(void *arg)
{
	(void) VirtualXactLock(*(VirtualTransactionId *) arg, true);
}

/*
 * Wait for the transactions that hold a snapshot now (as the passes' wait
 * for old snapshots), each at most max_lock_wait: the versions the passes
 * replaced are then dead to everyone and their room counts as free.  A
 * longer transaction is not waited for: what it may still see counts as
 * live (VACUUM frees it later).
 */
static void
wait_briefly_for_snapshots(OnlineRun *run)
{
	VirtualTransactionId *vxids;
	int			n;

	vxids = GetCurrentVirtualXIDs(ReadNextTransactionId(), true, false,
								  PROC_IS_AUTOVACUUM | PROC_IN_VACUUM, &n);
	for (int i = 0; i < n; i++)
	{
		if (!cx_online_with_lock_timeout(run, wait_vxid_fn, &vxids[i]))
			break;
	}
	pfree(vxids);
}

static void
survey_init(Compaction *c, Survey *sv, BlockNumber nblocks)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(c->cxt);

	sv->nblocks = nblocks;
	sv->cut = nblocks;
	sv->used = palloc0(sizeof(uint32) * Max(nblocks, 1));
	sv->avail = palloc0(sizeof(uint32) * Max(nblocks, 1));
	sv->versions = palloc0(sizeof(uint32) * Max(nblocks, 1));
	sv->largest = palloc0(sizeof(uint32) * Max(nblocks, 1));
	sv->biggest = MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Read block blk of rel into the survey: the room its versions not dead to
 * everyone take (line pointers included), and the room free once the dead
 * ones are pruned.  With prune (the TOAST relation), the page is pruned
 * first, as any reader does (heap_page_prune_opt): nothing there is ever
 * updated in place, so free room cannot keep a version on its page.  The
 * table's pages are pruned only before the cut (STEP_PRUNE_TABLE).
 */
static void
survey_block(Relation rel, Survey *sv, BlockNumber blk, bool prune,
			 TransactionId horizon, BufferAccessStrategy strategy)
{
	Size		reserve = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);
	Buffer		buf;
	Page		page;
	OffsetNumber maxoff;
	Size		used = 0;
	Size		taken;
	uint32		versions = 0;
	Size		largest = 0;

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
	page = BufferGetPage(buf);
	if (prune)
	{
		/* see cx_online_prune_range(): pruning wants the page to look full */
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		if (!PageIsNew(page) && !PageIsFull(page) &&
			TransactionIdIsValid(((PageHeader) page)->pd_prune_xid))
		{
			PageSetFull(page);
			MarkBufferDirtyHint(buf, true);
		}
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		cx_heap_page_prune_opt(rel, buf);
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	maxoff = PageIsNew(page) ? InvalidOffsetNumber : PageGetMaxOffsetNumber(page);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		itemid = PageGetItemId(page, off);
		HeapTupleData tuple;
		Size		size;

		used += sizeof(ItemIdData);
		if (!ItemIdIsNormal(itemid))
			continue;
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
		tuple.t_len = ItemIdGetLength(itemid);
		tuple.t_tableOid = RelationGetRelid(rel);
		ItemPointerSet(&tuple.t_self, blk, off);
		if (HeapTupleSatisfiesVacuum(&tuple, horizon, buf) == HEAPTUPLE_DEAD)
			continue;
		size = MAXALIGN(tuple.t_len);
		used += size;
		versions++;
		sv->biggest = Max(sv->biggest, size + sizeof(ItemIdData));
		largest = Max(largest, size + sizeof(ItemIdData));
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buf);
	sv->used[blk] = (uint32) used;
	sv->versions[blk] = versions;
	sv->largest[blk] = (uint32) largest;
	taken = SizeOfPageHeaderData + used + reserve;
	sv->avail[blk] = taken < BLCKSZ ? (uint32) (BLCKSZ - taken) : 0;
}

/* How many rows (chunks) taking slot bytes each (line pointer included) fit in avail. */
static int64
slots_in(uint32 avail, Size slot)
{
	return avail >= slot + CX_FSM_SLACK ? avail / slot : 0;
}

/*
 * The cut of a surveyed relation: the first block from which what is not
 * dead fits before it.  The table's rows in 85% of the free room before it
 * (rows differ in size; heap fills a page until the next row does not
 * fit); the TOAST relation's chunks in its free slots, a slot being room
 * for the largest chunk: a chunk of any size takes at most one slot of a
 * page, so this cannot fall short (a twentieth more, for the free space
 * map's coarse sizes).  No cut (nblocks) when what it would free is less
 * than VACUUM truncates, or less than 16 pages.  Sets the room left before
 * the cut.
 */
static void
choose_toast_cut(Survey *sv)
{
	uint64		tail = 0;
	uint64		tail_bytes = 0;
	uint64		front = 0;
	uint64		front_bytes = 0;
	uint64		all_bytes = 0;
	uint64		room_bytes = 0;
	BlockNumber cut;

	for (BlockNumber blk = 0; blk < sv->nblocks; blk++)
	{
		tail += sv->versions[blk];
		tail_bytes += sv->used[blk];
	}
	/* the soft cut: where what lives would fit in the free room, packed */
	all_bytes = tail_bytes;
	for (sv->soft_cut = 0; sv->soft_cut < sv->nblocks; sv->soft_cut++)
	{
		if (room_bytes >= all_bytes)
			break;
		all_bytes -= sv->used[sv->soft_cut];
		room_bytes += sv->avail[sv->soft_cut];
	}
	for (cut = 0; cut < sv->nblocks; cut++)
	{
		if (front >= tail + tail / 20 + 4 ||
			front_bytes >= tail_bytes + tail_bytes / 20 + 4 * sv->biggest)
			break;
		tail -= sv->versions[cut];
		tail_bytes -= sv->used[cut];
		front += slots_in(sv->avail[cut], sv->biggest);
		if (sv->avail[cut] >= CX_FSM_SLACK + sv->biggest)
			front_bytes += sv->avail[cut] - sv->biggest;
	}
	sv->cut = sv->nblocks;
	sv->room = 0;
	sv->room_bytes = 0;
	if (sv->nblocks - cut >= CX_COMPACT_MIN_BLOCKS &&
		(sv->nblocks - cut >= CX_TRUNCATE_MINIMUM ||
		 sv->nblocks - cut >= sv->nblocks / CX_TRUNCATE_FRACTION))
	{
		sv->cut = cut;
		sv->room = front;
		sv->room_bytes = front_bytes;
	}
	sv->soft_cut = Min(sv->soft_cut, sv->cut);
}

/*
 * Whether the table's versions not dead from block cut on fit in the room
 * before it, counted in rows: each takes a slot the size of the largest of
 * them, so rows of any size fit (a page with room for k such slots takes
 * k rows of the tail whatever their sizes); counting bytes put 1.1 kB rows
 * into front pages with 188 bytes free each, and the table grew (issue 33,
 * B10).  tailv[cut], tailbig[cut]: the versions and largest version from
 * cut on.  Sets *room and *slot.
 */
static bool
table_fits(Survey *sv, BlockNumber cut, const uint64 *tailv, const uint32 *tailbig,
		   int64 *room, Size *slot)
{
	int64		front = 0;

	*slot = Max(tailbig[cut], MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData));
	for (BlockNumber blk = 0; blk < cut && (uint64) front < tailv[cut]; blk++)
		front += slots_in(sv->avail[blk], *slot);
	*room = front;
	return (uint64) front >= tailv[cut];
}

/*
 * The table's cut: the lowest block from which its versions fit in the
 * room before it (table_fits).  No cut
 * (nblocks) when what it would free is less than VACUUM truncates (a
 * sixteenth of the table and 1 000 pages: lazy vacuum's rule), or less than
 * 16 pages.  Sets the room left before the cut, in rows, and the slot.
 */
static void
choose_table_cut(Survey *sv)
{
	BlockNumber n = sv->nblocks;
	BlockNumber lo = 0;
	BlockNumber hi = n;
	uint64	   *tailv = palloc(sizeof(uint64) * (n + 1));
	uint32	   *tailbig = palloc(sizeof(uint32) * (n + 1));
	int64		room = 0;
	Size		slot = 0;

	tailv[n] = 0;
	tailbig[n] = 0;
	for (BlockNumber blk = n; blk > 0; blk--)
	{
		tailv[blk - 1] = tailv[blk] + sv->versions[blk - 1];
		tailbig[blk - 1] = Max(tailbig[blk], sv->largest[blk - 1]);
	}
	/* the lowest cut that fits: fitting grows with the cut */
	while (lo < hi)
	{
		BlockNumber mid = lo + (hi - lo) / 2;

		if (table_fits(sv, mid, tailv, tailbig, &room, &slot))
			hi = mid;
		else
			lo = mid + 1;
	}
	sv->cut = n;
	sv->room = 0;
	if (n - lo >= CX_COMPACT_MIN_BLOCKS &&
		(n - lo >= CX_TRUNCATE_MINIMUM || n - lo >= n / CX_TRUNCATE_FRACTION) &&
		table_fits(sv, lo, tailv, tailbig, &room, &slot))
	{
		sv->cut = lo;
		sv->room = room;
		sv->slot = slot;
	}
	pfree(tailv);
	pfree(tailbig);
}

/*
 * The room blocks [from, to) of the table have now (after pruning), as
 * heap_update() finds it, less the fillfactor reserve.
 */
static void
measure_room(Relation rel, Survey *sv, BlockNumber from, BlockNumber to)
{
	Size		reserve = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);

	to = Min(to, RelationGetNumberOfBlocks(rel));
	for (BlockNumber blk = from; blk < to; blk++)
	{
		Buffer		buf = ReadBuffer(rel, blk);
		Size		avail;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		avail = PageIsNew(BufferGetPage(buf)) ? 0 : PageGetHeapFreeSpace(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		sv->avail[blk] = avail > reserve ? (uint32) (avail - reserve) : 0;
	}
}

/*
 * The free space map of a surveyed relation: no room from the cut, so that
 * nothing new goes there; with front, the room before the cut too.
 */
static void
record_cut(Relation rel, Survey *sv, bool front)
{
	Size		reserve = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);
	BlockNumber end = Min(sv->nblocks, RelationGetNumberOfBlocks(rel));

	for (BlockNumber blk = front ? 0 : sv->cut; blk < end; blk++)
		RecordPageWithFreeSpace(rel, blk, blk < sv->cut ? sv->avail[blk] + reserve : 0);
	FreeSpaceMapVacuumRange(rel, 0, end);
}

/*
 * Which out-of-line values of a stored row have a chunk in the TOAST
 * relation's tail (with soft, from its soft cut: a row that moves anyway
 * saves those again too, when there is room, so that a later round, whose
 * cut is lower, does not find them in rows it may not move again): marks
 * them in resave (may be NULL); returns the last
 * block of any of them (InvalidBlockNumber: none), and in *chunks and
 * *bytes the chunks saving them again takes and their room.  Reads the catalogs (whose TOAST
 * relation a reference names): never under a buffer lock.
 */
static BlockNumber
values_in_tail(Relation rel, Compaction *c, HeapTuple tuple, bool *resave,
			   int64 *chunks, int64 *bytes, bool soft)
{
	TupleDesc	desc = RelationGetDescr(rel);
	BlockNumber last = InvalidBlockNumber;
	bool		own_inline = false;

	*chunks = 0;
	*bytes = 0;
	if (c->tail_values == NULL)
		return last;

	/* cx_move_locked_row() leaves core's values of such a row where they are */
	for (int i = 0; i < desc->natts; i++)
	{
		bool		isnull;
		Datum		d;

		if (TupleDescAttr(desc, i)->attlen != -1)
			continue;
		d = heap_getattr(tuple, i + 1, desc, &isnull);
		own_inline |= !isnull && cx_is_own_datum(DatumGetPointer(d)) &&
			VARSIZE(DatumGetPointer(d)) > CX_REF_SIZE;
	}

	for (int i = 0; i < desc->natts; i++)
	{
		bool		isnull;
		Datum		d;
		struct varlena *v;
		Oid			valueid;
		int64		size;
		TailValue  *tv;

		if (TupleDescAttr(desc, i)->attlen != -1 || TupleDescAttr(desc, i)->attisdropped)
			continue;
		d = heap_getattr(tuple, i + 1, desc, &isnull);
		if (isnull)
			continue;
		v = (struct varlena *) DatumGetPointer(d);
		if (VARATT_IS_EXTERNAL_ONDISK(v) && !own_inline)
		{
			struct varatt_external ptr;

			VARATT_EXTERNAL_GET_POINTER(ptr, v);
			valueid = ptr.va_valueid;
			size = VARATT_EXTERNAL_GET_EXTSIZE(ptr);
		}
		else if (cx_external_value_id(v, RelationGetRelid(rel), &valueid))
		{
			Oid			toastrelid;
			uint32		storedlen;

			cx_reference_target(v, &toastrelid, &valueid, &storedlen);
			size = storedlen;
		}
		else
			continue;
		tv = hash_search(c->tail_values, &valueid, HASH_FIND, NULL);
		if (tv == NULL || (!soft && tv->last < c->toast.cut))
			continue;
		if (resave)
			resave[i] = true;
		*chunks += (size + TOAST_MAX_CHUNK_SIZE - 1) / TOAST_MAX_CHUNK_SIZE;
		/* each chunk: its tuple header, id, number, length and line pointer */
		*bytes += size + (size + TOAST_MAX_CHUNK_SIZE - 1) / TOAST_MAX_CHUNK_SIZE *
			(MAXALIGN(SizeofHeapTupleHeader + 12) + MAXIMUM_ALIGNOF + sizeof(ItemIdData));
		if (last == InvalidBlockNumber || tv->last > last)
			last = tv->last;
	}
	return last;
}

/*
 * Point the TOAST relation's target block (where heap_insert() tries a
 * chunk first) at the lowest block before its cut with room for a chunk
 * of the largest size: the values saved again fill the front from its
 * start, and the next round finds values not moved yet above what they
 * fill (a round does not move a row this call moved).  Else the free space
 * map's pick.
 */
static void
target_lowest_room(Relation toast, Compaction *c)
{
	Survey	   *sv = &c->toast;
	BlockNumber end = Min(sv->cut, RelationGetNumberOfBlocks(toast));

	for (; c->fill < end; c->fill++)
	{
		Buffer		buf;
		Size		avail;

		if (sv->avail[c->fill] < sv->biggest)
			continue;			/* had no room at the survey */
		buf = ReadBuffer(toast, c->fill);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		avail = PageIsNew(BufferGetPage(buf)) ? 0 : PageGetHeapFreeSpace(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		if (avail >= sv->biggest)
		{
			RelationSetTargetBlock(toast, c->fill);
			return;
		}
	}
	RelationSetTargetBlock(toast, InvalidBlockNumber);
}

/*
 * Whether the TOAST room left before the cut takes chunks more chunks of
 * bytes bytes (see choose_toast_cut: counted either way).
 */
static bool
toast_room_for(Compaction *c, int64 chunks, int64 bytes)
{
	return chunks <= c->toast.room || bytes <= c->toast.room_bytes;
}

/* Whether a version of this call's compaction wrote tuple (see MovedBy). */
static bool
moved_by_call(Compaction *c, HeapTuple tuple)
{
	TransactionId xmin = HeapTupleHeaderGetXmin(tuple->t_data);
	int			lo = 0;
	int			hi = c->moved_by->n;

	if (!TransactionIdIsNormal(xmin))
		return false;
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		TransactionId x = c->moved_by->xids[mid];

		if (TransactionIdEquals(x, xmin))
			return true;
		if (TransactionIdPrecedes(x, xmin))
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* This transaction moved a row: remember its xid. */
static void
note_moved(Compaction *c)
{
	MovedBy    *m = c->moved_by;
	TransactionId xid = GetCurrentTransactionIdIfAny();

	if (!TransactionIdIsValid(xid) || (m->n > 0 && TransactionIdEquals(m->xids[m->n - 1], xid)))
		return;
	if (m->n == m->max)
	{
		m->max = Max(64, m->max * 2);
		m->xids = m->xids == NULL ?
			MemoryContextAlloc(m->cxt, sizeof(TransactionId) * m->max) :
			repalloc(m->xids, sizeof(TransactionId) * m->max);
	}
	m->xids[m->n++] = xid;
}

/*
 * Whether heap_update() would keep a new version of len bytes on block blk
 * (it does whenever the version fits there, HOT or not).
 */
static bool
copy_stays(Relation rel, BlockNumber blk, Size len)
{
	Buffer		buf = ReadBuffer(rel, blk);
	bool		stays;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	stays = MAXALIGN(len) <= PageGetHeapFreeSpace(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	return stays;
}

/*
 * Make heap put the copy of the locked row version oldtup elsewhere than on
 * its page, which has room for it: heap_update() keeps a new version on its
 * page whenever it fits there, and a row of a page with room could leave it
 * only by being copied again and again until the page is full (up to 185
 * UPDATEs of one row, issue 33 B9).  The room is filled instead by copies
 * of the row's size (filler tuples: the row's header, no attribute, zeroed
 * data) inserted in a subtransaction that is rolled back: their space
 * stays taken until the page is pruned (this call does not prune the pages
 * from the cut), so the one copy that counts goes where the free space map
 * says.  Inserts, not UPDATEs of the row: the row is locked by this
 * transaction, and an UPDATE of it in a subtransaction makes its xmax a
 * multixact with that (then aborted) updater, which heap_update() of the
 * real copy would take over as its temporary lock (an assertion failure on
 * assert-enabled servers).  The fillers are never visible (their
 * subtransaction aborted), write no index entry and no logical decoding
 * record (HEAP_INSERT_NO_LOGICAL), fire no trigger; the statistics count
 * them as inserts and WAL holds them.  Returns whether the page is full now
 * (false when a client's prune or change got in the way).
 */
/*
 * A tuple of tup's length that holds nothing: tup's header with no
 * attribute (every column reads as NULL), no external value (so
 * heap_insert() toasts nothing), zeroed data.
 */
static HeapTuple
filler_tuple(HeapTuple tup)
{
	HeapTuple	f = (HeapTuple) palloc0(HEAPTUPLESIZE + tup->t_len);

	f->t_len = tup->t_len;
	f->t_tableOid = tup->t_tableOid;
	ItemPointerSetInvalid(&f->t_self);
	f->t_data = (HeapTupleHeader) ((char *) f + HEAPTUPLESIZE);
	f->t_data->t_hoff = tup->t_data->t_hoff;
	HeapTupleHeaderSetNatts(f->t_data, 0);
	Assert(f->t_len >= f->t_data->t_hoff);
	return f;
}

static bool
fill_page(Batch *b, Compaction *c, HeapTuple oldtup)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	BlockNumber blk = ItemPointerGetBlockNumber(&oldtup->t_self);
	bool		full = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		HeapTuple	filler = filler_tuple(oldtup);
		CommandId	cid = GetCurrentCommandId(true);

		for (int copies = 0; copies < MaxHeapTuplesPerPage; copies++)
		{
			if (!copy_stays(b->rel, blk, oldtup->t_len))
			{
				full = true;
				break;
			}
			RelationSetTargetBlock(b->rel, blk);
			heap_insert(b->rel, filler, cid, HEAP_INSERT_NO_LOGICAL, NULL);
			if (ItemPointerGetBlockNumber(&filler->t_self) != blk)
				break;
		}
		heap_freetuple(filler);
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		PG_RE_THROW();
	}
	PG_END_TRY();
	/* an aborted subtransaction ends the backend's progress reporting */
	cx_online_progress_restart(c->run);
	return full;
}

/*
 * Whether the free space map offers a page before limit for a new version
 * of len bytes (RelationGetBufferForTuple() asks for len and the fillfactor
 * reserve): else the copy would go to a new page at the end, and the table
 * would grow (issue 33, B10).  A version too large for the map to be asked
 * goes to the end: no.
 */
static bool
front_has_room(Relation rel, Size len, BlockNumber limit)
{
	Size		reserve = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);
	BlockNumber blk;

	if (len + reserve > MaxHeapTupleSize)
		return false;
	blk = GetPageWithFreeSpace(rel, len + reserve);
	return blk != InvalidBlockNumber && blk < limit;
}

/*
 * Point the table's target block (the page heap_update() tries first for a
 * new version that leaves its page) at the lowest block before limit with
 * room for a version of len bytes and the fillfactor reserve, as
 * target_lowest_room() does for the TOAST relation: the copies fill the
 * front from its start.  The free space map alone is not asked: its entries
 * for pages the passes filled are stale, and a page of the tail a reader
 * pruned meanwhile is offered too, so a copy went back into the tail and
 * the moves stopped there, leaving one row on each of a thousand pages
 * (issue 34, item 4).  Returns false when no block before limit has that
 * room.
 */
static bool
target_table_room(Relation rel, Compaction *c, Size len, BlockNumber limit)
{
	Size		reserve = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);
	Size		need = MAXALIGN(len) + reserve;

	limit = Min(limit, RelationGetNumberOfBlocks(rel));
	for (; c->table_fill < limit; c->table_fill++)
	{
		Buffer		buf;
		Size		avail;

		buf = ReadBuffer(rel, c->table_fill);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		avail = PageIsNew(BufferGetPage(buf)) ? 0 : PageGetHeapFreeSpace(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		if (avail >= need)
		{
			RelationSetTargetBlock(rel, c->table_fill);
			return true;
		}
	}
	return false;
}

/* Record the room left on block blk (a copy went there) in the map. */
static void
record_room(Relation rel, BlockNumber blk)
{
	Buffer		buf = ReadBuffer(rel, blk);
	Size		avail;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	avail = PageGetHeapFreeSpace(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	RecordPageWithFreeSpace(rel, blk, avail);
}

/*
 * Copy the row version at tid, at most once in the call: with values, to
 * save its out-of-line values in the TOAST relation's tail again (skipped
 * when it has none left there); else to move it from the table's cut,
 * saving again those of its values in the TOAST tail when there is room.
 * Locked without waiting, as heap's UPDATE of no key column locks it
 * (LockTupleNoKeyExclusive; LockTupleExclusive only when a key column's
 * value is saved again out of line): false when a client holds it or
 * replaced it meanwhile (the client's version went where the free space
 * map said), when this call moved it already, or when there is no room for
 * it.  A move from the cut is made only when its copy leaves its page for a
 * page before the cut: heap keeps a new version on its page when it fits
 * there, and copying such a row again until a copy leaves its page made up
 * to 185 UPDATEs of one row (issue 33, B9).  Where a row of the table's
 * tail cannot move, its page cannot be emptied, nor can VACUUM truncate
 * below it: moves from the cut stop (c->table.full).
 */
static bool
move_row(Batch *b, Compaction *c, ItemPointer tid, bool values)
{
	HeapTuple	oldtup;
	ItemPointerData newtid;
	CxUpdateIndexes update_indexes;
	TM_Result	result;
	bool	   *resave = palloc0(sizeof(bool) * Max(b->desc->natts, 1));
	int64		chunks = 0;
	int64		bytes = 0;
	BlockNumber blk = ItemPointerGetBlockNumber(tid);
	BlockNumber front = Min(c->table.cut, c->table.nblocks);
	bool		leaves;

	if (!values && blk < c->table.cut)
		return false;
	/* a row in the table's tail: its move saves its values again too */
	if (values && c->table.cut < c->table.nblocks && blk >= c->table.cut)
		return false;
	result = cx_online_lock_row(b, tid, LockWaitSkip, LockTupleNoKeyExclusive, &oldtup);
	if (result != TM_Ok)
	{
		/* a client holds it: it stays where it is */
		if (!values && result == TM_WouldBlock)
			c->table.full = true;
		return false;
	}
	if (moved_by_call(c, oldtup))
	{
		if (!values)
			c->table.full = true;
		return false;
	}
	if (values)
	{
		if (values_in_tail(b->rel, c, oldtup, resave, &chunks, &bytes, false) == InvalidBlockNumber)
			return false;
		if (!toast_room_for(c, chunks, bytes))
		{
			c->toast.full = true;
			return false;
		}
	}
	else
	{
		if (c->table.room <= 0)
		{
			c->table.full = true;
			return false;
		}
		if (c->tail_values != NULL && !c->toast.full)
		{
			int64		hc;
			int64		hb;

			/*
			 * Its values from the soft cut when the room left still takes
			 * those from the cut not saved again yet, else from the cut
			 * when there is room for them, else none.
			 */
			(void) values_in_tail(b->rel, c, oldtup, NULL, &hc, &hb, false);
			(void) values_in_tail(b->rel, c, oldtup, resave, &chunks, &bytes, true);
			if (!(c->toast.room - chunks >= c->hard_chunks - hc ||
				  c->toast.room_bytes - bytes >= c->hard_bytes - hb))
			{
				memset(resave, 0, sizeof(bool) * Max(b->desc->natts, 1));
				(void) values_in_tail(b->rel, c, oldtup, resave, &chunks, &bytes, false);
				if (!toast_room_for(c, chunks, bytes))
				{
					memset(resave, 0, sizeof(bool) * Max(b->desc->natts, 1));
					chunks = bytes = 0;
				}
			}
		}
	}

	/* a key column's value saved again: heap_update()'s stronger lock */
	if (cx_online_update_lock_mode(b->rel, resave) == LockTupleExclusive &&
		cx_online_lock_row(b, tid, LockWaitSkip, LockTupleExclusive, &oldtup) != TM_Ok)
	{
		if (!values)
			c->table.full = true;
		return false;
	}

	/* where heap puts the copy: on its page when it fits, else by the map */
	leaves = !copy_stays(b->rel, blk, oldtup->t_len);
	if (!values)
	{
		/* a row of the tail: to the lowest page before the cut with room */
		if (c->table.full || !target_table_room(b->rel, c, oldtup->t_len, front))
		{
			c->table.full = true;
			return false;
		}
		if (!leaves)
			leaves = fill_page(b, c, oldtup);
		if (!leaves)
		{
			c->table.full = true;
			return false;
		}
		/* fill_page() pointed the target block at the row's own page */
		RelationSetTargetBlock(b->rel, c->table_fill);
	}
	else
	{
		/* saving values again, the row would rather stay: room on its page? */
		if (leaves)
		{
			cx_online_prune_range(b->rel, blk, blk + 1);
			leaves = !copy_stays(b->rel, blk, oldtup->t_len);
		}
		if (leaves && (c->table.full || !front_has_room(b->rel, oldtup->t_len, front)))
			return false;
	}

	result = cx_move_locked_row(b->rel, oldtup, resave, GetCurrentCommandId(true),
								&newtid, &update_indexes);
	if (result != TM_Ok)
		elog(ERROR, "could not update locked tuple (%u,%u) of relation \"%s\"",
			 ItemPointerGetBlockNumber(&oldtup->t_self),
			 ItemPointerGetOffsetNumber(&oldtup->t_self),
			 RelationGetRelationName(b->rel));
	cx_online_index_new_version(b, &newtid, update_indexes);
	c->toast.room -= chunks;
	c->toast.room_bytes -= bytes;
	if (c->tail_values != NULL)
	{
		int64		hc;
		int64		hb;

		(void) values_in_tail(b->rel, c, oldtup, NULL, &hc, &hb, false);
		if (chunks > 0)
		{
			c->hard_chunks -= hc;
			c->hard_bytes -= hb;
		}
	}
	if (ItemPointerGetBlockNumber(&newtid) != blk)
	{
		c->table.room--;
		record_room(b->rel, ItemPointerGetBlockNumber(&newtid));
		/* the copy went to the table's tail or end after all: stop there */
		if (ItemPointerGetBlockNumber(&newtid) >= front)
			c->table.full = true;
	}
	else if (!values)
		c->table.full = true;
	return true;
}

/*
 * The visible row versions of block blk, copied under the buffer lock
 * (into pagecopy, at most a page) and looked at once it is released.
 * Returns how many.
 */
static int
visible_rows(Batch *b, BlockNumber blk, HeapTupleData *rows)
{
	Buffer		buf;
	Page		page;
	OffsetNumber maxoff;
	int			n = 0;
	Size		copied = 0;

	buf = ReadBufferExtended(b->rel, MAIN_FORKNUM, blk, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	maxoff = PageIsNew(page) ? InvalidOffsetNumber : PageGetMaxOffsetNumber(page);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		itemid = PageGetItemId(page, off);
		HeapTupleData tuple;

		if (!ItemIdIsNormal(itemid))
			continue;
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
		tuple.t_len = ItemIdGetLength(itemid);
		tuple.t_tableOid = RelationGetRelid(b->rel);
		ItemPointerSet(&tuple.t_self, blk, off);
		if (!HeapTupleSatisfiesVisibility(&tuple, b->snapshot, buf))
			continue;
		if (copied + MAXALIGN(tuple.t_len) > BLCKSZ)
			break;				/* cannot be: rows of a page do not overlap */
		rows[n] = tuple;
		rows[n].t_data = (HeapTupleHeader) (b->pagecopy + copied);
		memcpy(b->pagecopy + copied, tuple.t_data, tuple.t_len);
		copied += MAXALIGN(tuple.t_len);
		n++;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buf);
	return n;
}

/* The TOAST value ids of block blk (from the cut) of the TOAST relation. */
static void
find_values(Relation toast, Compaction *c, BlockNumber blk, Snapshot snapshot)
{
	TupleDesc	desc = RelationGetDescr(toast);
	Buffer		buf;
	Page		page;
	OffsetNumber maxoff;

	buf = ReadBufferExtended(toast, MAIN_FORKNUM, blk, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	maxoff = PageIsNew(page) ? InvalidOffsetNumber : PageGetMaxOffsetNumber(page);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		itemid = PageGetItemId(page, off);
		HeapTupleData tuple;
		bool		isnull;
		Datum		chunk_id;
		TailValue  *tv;
		bool		found;

		if (!ItemIdIsNormal(itemid))
			continue;
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
		tuple.t_len = ItemIdGetLength(itemid);
		tuple.t_tableOid = RelationGetRelid(toast);
		ItemPointerSet(&tuple.t_self, blk, off);
		if (!HeapTupleSatisfiesVisibility(&tuple, snapshot, buf))
			continue;
		chunk_id = heap_getattr(&tuple, 1, desc, &isnull);
		if (isnull)
			continue;
		tv = hash_search(c->tail_values, &chunk_id, HASH_ENTER, &found);
		if (!found || tv->last < blk)
			tv->last = blk;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buf);
}

static int
candidate_cmp(const void *a, const void *b)
{
	BlockNumber la = ((const Candidate *) a)->last;
	BlockNumber lb = ((const Candidate *) b)->last;

	return la < lb ? 1 : la > lb ? -1 : 0;
}

/* The rows of block blk of the table that hold values in the TOAST tail. */
static void
find_rows(Batch *b, Compaction *c, BlockNumber blk)
{
	int			n = visible_rows(b, blk, b->visible);

	for (int i = 0; i < n; i++)
	{
		int64		chunks;
		int64		bytes;
		BlockNumber last = values_in_tail(b->rel, c, &b->visible[i], NULL, &chunks, &bytes, false);

		if (last == InvalidBlockNumber)
			continue;
		if (c->ncands == c->maxcands)
		{
			c->maxcands = Max(1024, c->maxcands * 2);
			c->cands = c->cands == NULL ?
				MemoryContextAlloc(c->cxt, sizeof(Candidate) * c->maxcands) :
				repalloc(c->cands, sizeof(Candidate) * c->maxcands);
		}
		c->hard_chunks += chunks;
		c->hard_bytes += bytes;
		c->cands[c->ncands].tid = b->visible[i].t_self;
		c->cands[c->ncands].last = last;
		c->ncands++;
	}
}

/* The step after a finished one, with what it needs set up. */
static void
next_step(Compaction *c, Relation rel)
{
	c->pos = 0;
	switch (c->step)
	{
		case STEP_SURVEY_TABLE:
			choose_table_cut(&c->table);
			c->step = c->table.cut < c->table.nblocks ? STEP_PRUNE_TABLE : STEP_SURVEY_TOAST;
			break;
		case STEP_PRUNE_TABLE:

			/*
			 * The cut again, with the room the pruned pages have (a page
			 * that could not be pruned has less than surveyed) and none
			 * counted from the first cut on: the same cut or a higher one.
			 */
			for (BlockNumber blk = c->table.cut; blk < c->table.nblocks; blk++)
				c->table.avail[blk] = 0;
			choose_table_cut(&c->table);
			if (c->table.cut < c->table.nblocks)
				record_cut(rel, &c->table, false);
			c->step = STEP_SURVEY_TOAST;
			break;
		case STEP_SURVEY_TOAST:
			if (c->toast.nblocks > 0)
			{
				Relation	toast = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);

				choose_toast_cut(&c->toast);
				if (c->toast.cut < c->toast.nblocks)
				{
					HASHCTL		ctl;

					record_cut(toast, &c->toast, true);
					ctl.keysize = sizeof(Oid);
					ctl.entrysize = sizeof(TailValue);
					ctl.hcxt = c->cxt;
					c->tail_values = hash_create("recompress_online tail values", 1024, &ctl,
												 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
				}
				table_close(toast, AccessShareLock);
			}
			c->step = c->tail_values ? STEP_FIND_VALUES : STEP_MOVE_ROWS;
			c->pos = c->tail_values ? c->toast.soft_cut : 0;
			break;
		case STEP_FIND_VALUES:
			c->step = STEP_FIND_ROWS;
			break;
		case STEP_FIND_ROWS:
			if (c->ncands > 1)
				qsort(c->cands, c->ncands, sizeof(Candidate), candidate_cmp);
			c->step = STEP_MOVE_VALUES;
			break;
		case STEP_MOVE_VALUES:
			c->step = STEP_MOVE_ROWS;
			break;
		case STEP_MOVE_ROWS:
		case STEP_DONE:
			c->step = STEP_DONE;
			break;
	}
	if (c->step == STEP_MOVE_ROWS)
	{
		/* from the table's end as it is now, back to its cut */
		c->end = RelationGetNumberOfBlocks(rel);
		c->pos = c->end;
		if (c->table.cut >= c->table.nblocks)
			c->step = STEP_DONE;
	}
}

/*
 * The survey's block numbers, clamped to the sizes of the table (nblocks)
 * and of its TOAST relation (toast_nblocks) now: the blocks past them are
 * gone.  A relation that grew keeps its surveyed size: its new blocks are
 * not counted, and moves stop when the table grew (STEP_MOVE_ROWS).
 */
static void
clamp_to_size(Compaction *c, BlockNumber nblocks, BlockNumber toast_nblocks)
{
	if (c->step == STEP_SURVEY_TABLE || c->step == STEP_DONE)
		return;					/* not surveyed yet (or done) */
	if (c->table.nblocks > nblocks)
	{
		c->table.nblocks = nblocks;
		c->table.cut = Min(c->table.cut, nblocks);
	}
	c->end = Min(c->end, nblocks);
	if (c->step == STEP_MOVE_ROWS)
		c->pos = Min(c->pos, nblocks);
	if (c->step == STEP_FIND_ROWS)
		c->pos = Min(c->pos, nblocks);
	if (c->step == STEP_SURVEY_TOAST)
		return;					/* its survey sizes itself */
	if (c->toast.nblocks > toast_nblocks)
	{
		c->toast.nblocks = toast_nblocks;
		c->toast.cut = Min(c->toast.cut, toast_nblocks);
	}
	if (c->step == STEP_FIND_VALUES)
		c->pos = Min(c->pos, toast_nblocks);
}

/*
 * One transaction of the compaction: steps, block by block (or candidate
 * by candidate), until half of max_lock_wait or batch_rows moved rows,
 * as a batch of the passes.  Returns whether the compaction is done.
 */
static bool
compact_batch(OnlineRun *run, Compaction *c)
{
	Batch		b;
	TimestampTz start = GetCurrentTimestamp();
	int64		budget_ms = run->max_wait_ms / 2;
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	Relation	toast = NULL;
	TransactionId horizon;
	TransactionId toast_horizon = InvalidTransactionId;
	int			done = 0;
	MemoryContext rowcxt;

	cx_online_begin_batch(run, &b);
	if (run->file_replaced)
		c->step = STEP_DONE;	/* TRUNCATE, VACUUM FULL, CLUSTER meanwhile */
	if (OidIsValid(b.rel->rd_rel->reltoastrelid))
		toast = table_open(b.rel->rd_rel->reltoastrelid, RowExclusiveLock);
	horizon = GetOldestNonRemovableTransactionId(b.rel);
	if (toast)
		toast_horizon = GetOldestNonRemovableTransactionId(toast);
	rowcxt = b.rowcxt;

	/*
	 * The block numbers kept from earlier transactions: a VACUUM between
	 * two of them may have truncated either relation (issue 33, B11).
	 * Clamped to the sizes this transaction sees under its lock, which no
	 * truncation passes until it commits.
	 */
	clamp_to_size(c, RelationGetNumberOfBlocks(b.rel),
				  toast ? RelationGetNumberOfBlocks(toast) : 0);

	/*
	 * New versions and chunks go where the free space map says, not to the
	 * page this backend wrote last (a relation's cached target block).
	 */
	RelationSetTargetBlock(b.rel, InvalidBlockNumber);
	if (toast)
		RelationSetTargetBlock(toast, InvalidBlockNumber);

	while (c->step != STEP_DONE)
	{
		bool		step_done = false;
		MemoryContext oldcxt;

		CHECK_FOR_INTERRUPTS();
		oldcxt = MemoryContextSwitchTo(rowcxt);
		switch (c->step)
		{
			case STEP_SURVEY_TABLE:
				if (c->pos == 0)
					survey_init(c, &c->table, RelationGetNumberOfBlocks(b.rel));
				if (c->pos < c->table.nblocks)
					survey_block(b.rel, &c->table, c->pos++, false, horizon, strategy);
				step_done = c->pos >= c->table.nblocks;
				break;
			case STEP_PRUNE_TABLE:
				{
					BlockNumber to = Min(c->pos + 64, c->table.cut);

					cx_online_prune_range(b.rel, c->pos, to);
					measure_room(b.rel, &c->table, c->pos, to);
					c->pos = to;
					step_done = c->pos >= c->table.cut;
				}
				break;
			case STEP_SURVEY_TOAST:
				if (c->pos == 0)
					survey_init(c, &c->toast, toast ? RelationGetNumberOfBlocks(toast) : 0);
				if (c->pos < c->toast.nblocks)
					survey_block(toast, &c->toast, c->pos++, true, toast_horizon, strategy);
				step_done = c->pos >= c->toast.nblocks;
				break;
			case STEP_FIND_VALUES:
				if (c->pos < c->toast.nblocks)
					find_values(toast, c, c->pos++, b.snapshot);
				step_done = c->pos >= c->toast.nblocks;
				break;
			case STEP_FIND_ROWS:
				if (c->pos < c->table.nblocks)
					find_rows(&b, c, c->pos++);
				step_done = c->pos >= c->table.nblocks;
				break;
			case STEP_MOVE_VALUES:

				/*
				 * The TOAST relation grew: the free space map had no room
				 * for a chunk after all.  What moves would go to the end.
				 */
				if (RelationGetNumberOfBlocks(toast) > c->toast.nblocks)
					c->toast.full = true;
				if (c->pos < c->ncands && !c->toast.full)
					target_lowest_room(toast, c);
				if (c->pos < c->ncands && !c->toast.full &&
					move_row(&b, c, &c->cands[c->pos].tid, true))
				{
					note_moved(c);
					c->moved_values++;
					done++;
				}
				c->pos++;
				step_done = c->pos >= c->ncands || c->toast.full;
				break;
			case STEP_MOVE_ROWS:
				if (RelationGetNumberOfBlocks(b.rel) > c->end)
					c->table.full = true;
				if (c->pos > c->table.cut && !c->table.full)
				{
					int			n;

					c->pos--;
					n = visible_rows(&b, c->pos, b.visible);
					for (int i = 0; i < n && !c->table.full; i++)
					{
						if (c->tail_values && !c->toast.full)
							target_lowest_room(toast, c);
						if (move_row(&b, c, &b.visible[i].t_self, false))
						{
							note_moved(c);
							c->moved_rows++;
							done++;
						}
					}
				}
				step_done = c->pos <= c->table.cut || c->table.full;
				break;
			case STEP_DONE:
				break;
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
		if (step_done)
			next_step(c, b.rel);
		cx_online_progress(run, CX_ONLINE_BLKS_DONE, c->pos);

		/* at least one block or row per transaction, as a pass's batch */
		if (done >= run->batch_rows ||
			TimestampDifferenceExceeds(start, GetCurrentTimestamp(), (int) budget_ms))
			break;
	}
	FreeAccessStrategy(strategy);
	if (toast)
		table_close(toast, NoLock);

	/* compressx.debug_rewrite_delay: a batch in flight, holding its rows */
	if (cx_debug_rewrite_delay_ms > 0)
		cx_online_nap(cx_debug_rewrite_delay_ms);
	cx_online_end_batch(&b);
	cx_online_report(run, CX_ONLINE_PHASE_COMPACT);
	return c->step == STEP_DONE;
}

/*
 * One round: a brief wait for old snapshots, the survey, the moves.
 * Returns how many rows it copied.
 */
static int64
compact_round(OnlineRun *run, int round, MovedBy *moved_by)
{
	Compaction	c;
	TimestampTz start = GetCurrentTimestamp();
	long		secs;
	int			usecs;

	memset(&c, 0, sizeof(c));
	c.cxt = AllocSetContextCreate(run->cxt, "recompress_online compaction",
								  ALLOCSET_DEFAULT_SIZES);
	c.step = STEP_SURVEY_TABLE;
	c.moved_by = moved_by;
	c.run = run;
	cx_online_report(run, CX_ONLINE_PHASE_COMPACT);
	wait_briefly_for_snapshots(run);
	cx_online_commit(run);
	while (!compact_batch(run, &c))
	{
		cx_online_commit(run);
		/* compressx.debug_rewrite_delay: between two transactions too */
		if (cx_debug_rewrite_delay_ms > 0)
			cx_online_nap(cx_debug_rewrite_delay_ms);
	}
	cx_online_commit(run);
	TimestampDifference(start, GetCurrentTimestamp(), &secs, &usecs);
	ereport(DEBUG1,
			(errmsg_internal("recompress_online of \"%s\": compaction round %d: values of %lld rows saved again, %lld rows moved; table %u blocks, cut %u; TOAST %u blocks, cut %u; %ld ms",
							 run->relname, round, (long long) c.moved_values,
							 (long long) c.moved_rows, c.table.nblocks, c.table.cut,
							 c.toast.nblocks, c.toast.cut, secs * 1000 + usecs / 1000)));
	MemoryContextDelete(c.cxt);
	return c.moved_values + c.moved_rows;
}

/*
 * What the call leaves on the table it just did (run->relid) to statements
 * it cannot run (issue 34, item 4), added to run->followup.  Its new row
 * versions (rows rewritten since the last table ended, rows the compaction
 * copied) left old versions that VACUUM frees, and an end that VACUUM
 * truncates: VACUUM is listed when there is one.  Each new version that
 * left its page got an entry in every index, and a B-tree gives the room
 * of the replaced entries back only when rebuilt (the events of the issue:
 * indexes of 12 MB against 4.4 MB after the offline rewrite): REINDEX INDEX
 * CONCURRENTLY of each index when the new versions are at least a
 * sixteenth of the rows (lazy vacuum's share, the compaction's rule).
 * Runs in the transaction the caller opened last, as the caller.
 */
static void
note_followup(OnlineRun *run, int64 moved)
{
	int64		versions = run->rows_rewritten - run->followup_rewritten + moved;
	int64		rows = run->rows_checked - run->followup_checked;
	HeapTuple	tup;
	MemoryContext oldcxt;

	run->followup_rewritten = run->rows_rewritten;
	run->followup_checked = run->rows_checked;
	if (versions <= 0)
		return;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(run->relid));
	if (!HeapTupleIsValid(tup))
		return;					/* dropped meanwhile */
	if (((Form_pg_class) GETSTRUCT(tup))->reltuples >= 0)
		rows = (int64) ((Form_pg_class) GETSTRUCT(tup))->reltuples;
	ReleaseSysCache(tup);
	oldcxt = MemoryContextSwitchTo(run->cxt);
	if (run->followup == NULL)
		run->followup = makeStringInfo();
	cx_followup_statements(run->relid, versions * CX_TRUNCATE_FRACTION >= rows,
						   run->followup);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Compact the table the run is on (run->relid), each step a transaction of
 * its own.  The cut of a round is conservative (what moves must fit before
 * it); what the first round moved leaves the front denser, so a second
 * round, and at most a third, finds a lower cut.  Each stops when there is
 * nothing VACUUM would truncate.
 */
void
cx_online_compact(OnlineRun *run)
{
	MovedBy		moved_by = {0};
	int64		moved = 0;

	moved_by.cxt = run->cxt;
	for (int round = 1; round <= 3; round++)
	{
		int64		n = compact_round(run, round, &moved_by);

		moved += n;
		if (n == 0)
			break;
	}
	if (moved_by.xids)
		pfree(moved_by.xids);
	note_followup(run, moved);
}

/*
 * The statements recompress_online cannot run and that finish its work
 * (sql/followup.c), in a NOTICE at the end of the call: the caller runs
 * them, or copies them from the NOTICE.  Who reads it: the caller, names
 * only.  Nothing here waits for a lock.
 */
void
cx_online_followup_notice(OnlineRun *run)
{
	if (run->followup == NULL || run->followup->len == 0)
		return;
	ereport(NOTICE,
			(errmsg("recompress_online of \"%s\" leaves room that only statements run after it give back",
					get_rel_name(run->top_relid) ? get_rel_name(run->top_relid) : run->relname),
			 errdetail("The rows it rewrote or moved have new versions: VACUUM frees the old ones and truncates the end the compaction emptied, and REINDEX CONCURRENTLY gives back the room of the index entries they replaced. Neither runs inside a procedure."),
			 errhint("Run these statements, each outside a transaction block:%s",
					 run->followup->data)));
}
