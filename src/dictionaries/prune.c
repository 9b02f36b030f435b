/*-------------------------------------------------------------------------
 *
 * prune.c
 *	  Deleting the automatic dictionaries of a table that no stored value
 *	  names any more.
 *
 * A dictionary is a candidate when it is a row of compressx.dictionaries
 * for table T with auto = true (trained by dictionaries/auto.c, never one of
 * train_dictionary()), shared = false (never a Citus table's), named by no
 * column setting of T, and trained for a column of T that still has
 * dictionary => 'auto' (or whose name is gone: renamed or dropped).  It is
 * deleted only when the protocol below proves that no value anybody can
 * still read names it.  Reading a value whose dictionary is gone fails as
 * corrupt, so each step is there to close one way of losing data:
 *
 *	1. Candidates are read with a fresh snapshot: the change of setting
 *	   that retired each one committed before this read.  Nothing is pruned
 *	   when the current transaction itself changed compressx's settings (it
 *	   holds RowExclusiveLock on compressx.column_settings): a retirement it
 *	   made is not committed, and other sessions still write with the old
 *	   dictionary.
 *	2. Wait for writers: WaitForLockers(T, ShareLock) waits for every
 *	   transaction holding a lock on T that conflicts with SHARE, i.e. every
 *	   writer, as CREATE INDEX CONCURRENTLY does.  A backend keeps a table's
 *	   resolved settings (the dictionary it compresses with) until it
 *	   processes the invalidation the retirement sent at commit, which it
 *	   does whenever it takes a lock it did not hold yet.  So a transaction
 *	   can write with a retired dictionary only if it held its writer's lock
 *	   on T since before the retirement committed: those are the ones
 *	   waited for.  Every other writer takes its lock afterwards and writes
 *	   with the new settings.  The background worker waits at most 10 s,
 *	   polling, so that it leaves when its database is wanted, and tries
 *	   again at a later run.
 *	3. Lock T (and its TOAST relation) SHARE UPDATE EXCLUSIVE, which keeps
 *	   out every rewrite: VACUUM FULL, CLUSTER, recompress_table and ALTER
 *	   TABLE rewrites take ACCESS EXCLUSIVE, set_column_codec,
 *	   train_dictionary and recompress_online's steps SHARE UPDATE EXCLUSIVE,
 *	   as does (plain) VACUUM, which could otherwise remove TOAST values
 *	   between the two scans of step 5.  Writers are not blocked.
 *	4. Read the candidates again: when T's settings rows changed since step
 *	   1 (a dictionary retired and adopted again), this run prunes nothing.
 *	5. Scan every physically present tuple version of T (every normal line
 *	   pointer, live, dead, recently dead or in progress, as a SnapshotAny
 *	   scan sees them) and every varlena column, dropped ones too.  An
 *	   inline value names its dictionary in its header; a reference
 *	   (format.h) names a TOAST value, whose first chunk holds the header:
 *	   the TOAST relation is scanned the same way for those.  A candidate
 *	   named by any of them is kept.
 *	6. Delete the others (as the extension's owner).  The statement trigger
 *	   dictionaries_changed empties every backend's cache of digested
 *	   dictionaries when this commits.
 *
 * Why an older snapshot cannot lose a value.  A row version some snapshot
 * can still see is not removable by VACUUM or page pruning, so it is on a
 * page when step 5 reads it; a TOAST value is deleted by the transaction
 * that deleted the last version referencing it, so it stays as long as
 * that version can be seen.  This transaction's own snapshot, taken before
 * step 2, holds back the removal of every version deleted while it scans.
 *
 * Why a concurrent UPDATE cannot either.  UPDATE keeps an unchanged value's
 * stored bytes (am_write.c), so a new version may name a retired
 * dictionary without any writer compressing with it: it copies the value
 * of the version it replaces.  That version is physically present while
 * the UPDATE runs and afterwards (its deleter, the updater, is younger than
 * this transaction's snapshot), so step 5 meets it, wherever the scan is
 * when the copy is made, and keeps the dictionary.  By induction over a
 * chain of such updates, the first version of the chain present when the
 * scan starts names the dictionary and stays until the scan ends.  The
 * same holds when the copied value moves out of line (a new TOAST value is
 * made from a version that stays).  Rewrites, which do write new values
 * from old ones, are locked out (step 3).
 *
 * Logical decoding reads dictionaries with historic snapshots: the
 * dictionaries table is a user_catalog_table, so a deleted row stays, and
 * is seen by slots decoding changes from before the deletion, until every
 * slot's catalog_xmin has passed the deleting transaction; but its TOAST
 * relation is cleaned with the data horizon, so while a slot may decode,
 * step 6 marks the dictionary dropped instead (catalog/dict_dropped.c),
 * and deletes those marked earlier that no slot needs now.  A hot standby
 * query that still sees an old row version either keeps it on the primary
 * (hot_standby_feedback), where step 5 finds it, or is cancelled by the
 * recovery conflict of its removal before the deletion is replayed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

#include "catalog/dict_auto.h"
#include "catalog/relation.h"
#include "catalog/dict_dropped.h"
#include "dictionaries/prune.h"
#include "dictionaries/state.h"
#include "sql/inspect.h"
#include "storage/format.h"

/* Most the background worker waits for writers (step 2), in ms. */
#define WORKER_WAIT_MS		10000

typedef struct Candidate
{
	int32		dict_id;
	char	   *attname;		/* the column it was trained for */
	int64		uses;			/* stored values naming it (step 5) */
} Candidate;

/* What steps 1 and 4 read about T. */
typedef struct PruneState
{
	List	   *candidates;		/* of Candidate */
	char	   *settings_sig;	/* "attnum:xmin " of each of T's settings rows */
	List	   *auto_columns;	/* names of T's columns with auto */
} PruneState;

/* A reference's TOAST value, and how many stored values name it. */
typedef struct RefEntry
{
	Oid			valueid;		/* hash key */
	int64		count;
} RefEntry;

typedef struct UseScan
{
	TupleDesc	desc;
	int			natts;			/* deform up to the last varlena column */
	Datum	   *values;
	bool	   *nulls;
	Oid			toastrelid;
	List	   *candidates;
	HTAB	   *refs;
	int64		tuples;
} UseScan;

static Candidate *
find_candidate(List *candidates, int32 dict_id)
{
	ListCell   *lc;

	foreach(lc, candidates)
		if (((Candidate *) lfirst(lc))->dict_id == dict_id)
			return (Candidate *) lfirst(lc);
	return NULL;
}

static bool
list_member_str(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp((char *) lfirst(lc), name) == 0)
			return true;
	return false;
}

/*
 * Steps 1 and 4: T's settings rows (their current dictionaries, their
 * (attnum, xmin) signature, its automatic columns) and the candidates,
 * read with snapshot.
 */
static void
read_state(Oid relid, Snapshot snapshot, PruneState *ps)
{
	Relation	srel = table_open(cx_extension_table_oid("column_settings"), AccessShareLock);
	Relation	drel = table_open(cx_extension_table_oid("dictionaries"), AccessShareLock);
	TupleDesc	sdesc = RelationGetDescr(srel);
	TupleDesc	ddesc = RelationGetDescr(drel);
	AttrNumber	s_auto = get_attnum(RelationGetRelid(srel), "auto_dictionary");
	AttrNumber	d_shared = get_attnum(RelationGetRelid(drel), "shared");
	AttrNumber	d_auto = get_attnum(RelationGetRelid(drel), "auto");
	List	   *current = NIL;
	StringInfoData sig;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	ps->candidates = NIL;
	ps->auto_columns = NIL;
	initStringInfo(&sig);

	/* column_settings: relid, attname, attnum, .., dict_id (7) */
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(srel, InvalidOid, false, snapshot, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		bool		isnull;
		int16		attnum = DatumGetInt16(heap_getattr(tup, 3, sdesc, &isnull));
		Datum		d = heap_getattr(tup, 7, sdesc, &isnull);

		if (!isnull)
			current = lappend_int(current, DatumGetInt32(d));
		d = heap_getattr(tup, s_auto, sdesc, &isnull);
		if (!isnull && DatumGetBool(d))
			ps->auto_columns = lappend(ps->auto_columns,
									   pstrdup(NameStr(*DatumGetName(heap_getattr(tup, 2, sdesc, &isnull)))));
		appendStringInfo(&sig, "%d:%u ", attnum, HeapTupleHeaderGetXmin(tup->t_data));
	}
	systable_endscan(scan);
	ps->settings_sig = sig.data;

	/* dictionaries: dict_id (1), relid (2), attname (3) */
	ScanKeyInit(&key, 2, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(drel, InvalidOid, false, snapshot, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		bool		isnull;
		int32		dict_id = DatumGetInt32(heap_getattr(tup, 1, ddesc, &isnull));
		char	   *attname = NameStr(*DatumGetName(heap_getattr(tup, 3, ddesc, &isnull)));
		Datum		shared = heap_getattr(tup, d_shared, ddesc, &isnull);
		bool		is_auto;
		Candidate  *c;

		if (!isnull && DatumGetBool(shared))
			continue;
		is_auto = DatumGetBool(heap_getattr(tup, d_auto, ddesc, &isnull));
		if (isnull || !is_auto || list_member_int(current, dict_id))
			continue;
		/* trained for a column still automatic, or one renamed or dropped */
		if (!list_member_str(ps->auto_columns, attname) &&
			get_attnum(relid, attname) != InvalidAttrNumber)
			continue;
		c = palloc0(sizeof(Candidate));
		c->dict_id = dict_id;
		c->attname = pstrdup(attname);
		ps->candidates = lappend(ps->candidates, c);
	}
	systable_endscan(scan);
	table_close(drel, AccessShareLock);
	table_close(srel, AccessShareLock);
}

/* Read T's state with a snapshot taken now. */
static void
read_state_now(Oid relid, PruneState *ps)
{
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());

	read_state(relid, snap, ps);
	UnregisterSnapshot(snap);
}

/*
 * The dictionary id a stored value's compressx header names, or 0.  body:
 * the bytes after va_tcinfo of an inline value, or a TOAST body.  Any value
 * with the dictionary flag counts, attributable or not: keeping a
 * dictionary for a damaged value is safe, deleting one a value needs is not.
 */
static inline int32
header_dict_id(const unsigned char *body, int32 len)
{
	int32		dict_id;

	if (len < 7 || body[2] != CX_FLAG_DICT)
		return 0;
	memcpy(&dict_id, body + 3, sizeof(int32));
	return dict_id;
}

/* Step 5 on T (under a buffer lock: reads bytes and counts). */
static void
main_visitor(HeapTuple tuple, void *arg)
{
	UseScan  *st = (UseScan *) arg;

	st->tuples++;
	heap_deform_tuple(tuple, st->desc, st->values, st->nulls);
	for (int i = 0; i < st->natts; i++)
	{
		const unsigned char *v = (const unsigned char *) DatumGetPointer(st->values[i]);
		Candidate  *c;

		if (st->nulls[i] || TupleDescAttr(st->desc, i)->attlen != -1 ||
			!cx_is_own_datum(v))
			continue;
		if (VARSIZE(v) == CX_REF_SIZE && (v[VARHDRSZ_COMPRESSED + 2] & CX_FLAG_EXTERNAL))
		{
			Oid			toastrelid;
			Oid			valueid;
			uint32		len;
			RefEntry   *e;
			bool		found;

			cx_reference_target((const struct varlena *) v, &toastrelid, &valueid, &len);
			if (toastrelid != st->toastrelid)
				continue;		/* names no value of T: unreadable anyway */
			e = hash_search(st->refs, &valueid, HASH_ENTER, &found);
			e->count = found ? e->count + 1 : 1;
			continue;
		}
		c = find_candidate(st->candidates,
						   header_dict_id(v + VARHDRSZ_COMPRESSED,
										  (int32) VARSIZE(v) - VARHDRSZ_COMPRESSED));
		if (c)
			c->uses++;
	}
}

/* Step 5 on T's TOAST relation: first chunks of referenced values. */
static void
toast_visitor(HeapTuple tuple, void *arg)
{
	UseScan  *st = (UseScan *) arg;
	bool		isnull;
	Oid			valueid;
	RefEntry   *e;
	struct varlena *chunk;
	Candidate  *c;

	if (DatumGetInt32(heap_getattr(tuple, 2, st->desc, &isnull)) != 0)
		return;
	valueid = DatumGetObjectId(heap_getattr(tuple, 1, st->desc, &isnull));
	e = hash_search(st->refs, &valueid, HASH_FIND, NULL);
	if (e == NULL)
		return;
	chunk = (struct varlena *) DatumGetPointer(heap_getattr(tuple, 3, st->desc, &isnull));
	if (isnull || VARATT_IS_COMPRESSED(chunk) || VARATT_IS_EXTERNAL(chunk))
		return;				/* not a chunk toast_save_datum() writes */
	c = find_candidate(st->candidates,
					   header_dict_id((const unsigned char *) VARDATA_ANY(chunk),
									  VARSIZE_ANY_EXHDR(chunk)));
	if (c)
		c->uses += e->count;
}

/* Step 5: count the stored values naming each candidate. */
static void
scan_uses(Relation rel, Relation toastrel, List *candidates)
{
	UseScan	st;
	HASHCTL		ctl;
	TupleDesc	desc = RelationGetDescr(rel);

	memset(&st, 0, sizeof(st));
	st.desc = desc;
	for (int i = 0; i < desc->natts; i++)
		if (TupleDescAttr(desc, i)->attlen == -1)
			st.natts = i + 1;
	st.values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	st.nulls = palloc(sizeof(bool) * Max(desc->natts, 1));
	st.toastrelid = rel->rd_rel->reltoastrelid;
	st.candidates = candidates;
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(RefEntry);
	ctl.hcxt = CurrentMemoryContext;
	st.refs = hash_create("compressx references", 256, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	if (st.natts > 0)
		cx_visit_tuples(rel, SnapshotAny, -1, main_visitor, &st);
	if (toastrel != NULL && hash_get_num_entries(st.refs) > 0)
	{
		st.desc = RelationGetDescr(toastrel);
		cx_visit_tuples(toastrel, SnapshotAny, -1, toast_visitor, &st);
	}
	hash_destroy(st.refs);
}

/*
 * Whether the current transaction changed compressx's settings: it holds
 * the lock every change of compressx.column_settings takes.  A dictionary
 * is retired only by such a change (a new dictionary comes with one too);
 * deleting dictionaries, as a prune of another table in this transaction
 * does, retires none.
 */
static bool
settings_changed_here(void)
{
	return cx_relation_oid_locked_by_me(cx_extension_table_oid("column_settings"),
										RowExclusiveLock, true);
}

/* Every candidate, with one action and message. */
static List *
all_candidates(Oid relid, List *candidates, const char *action, const char *message)
{
	List	   *results = NIL;
	ListCell   *lc;

	foreach(lc, candidates)
	{
		Candidate  *c = (Candidate *) lfirst(lc);

		results = lappend(results, cx_autodict_result(relid, c->attname, action, c->dict_id,
										  pstrdup(message)));
	}
	return results;
}

/* The column whose pruned count a dictionary trained for attname adds to. */
static AttrNumber
count_column(Oid relid, const char *attname, List *auto_columns)
{
	if (list_member_str(auto_columns, attname))
		return get_attnum(relid, attname);
	return auto_columns ? get_attnum(relid, (char *) linitial(auto_columns)) : InvalidAttrNumber;
}

/*
 * Step 2 in the background worker: WaitForLockers(), but at most
 * WORKER_WAIT_MS, and polling each writer's virtual transaction so that
 * the worker leaves when its database is wanted (a lock wait would not
 * notice).  false: some writer was still there when the time was up.
 */
static bool
worker_wait_for_writers(LOCKTAG *tag)
{
	VirtualTransactionId *writers = GetLockConflicts(tag, ShareLock, NULL);
	TimestampTz start = GetCurrentTimestamp();

	while (VirtualTransactionIdIsValid(*writers))
	{
		if (VirtualXactLock(*writers, false))
		{
			writers++;			/* ended */
			continue;
		}
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), WORKER_WAIT_MS))
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		cx_autodict_leave_if_wanted();
	}
	return true;
}

List *
cx_autodict_prune(Oid relid, bool in_worker)
{
	PruneState	before;
	PruneState	after;
	LOCKTAG		tag;
	Relation	rel;
	Relation	toastrel = NULL;
	Oid			toastoid;
	List	   *results = NIL;
	ListCell   *lc;
	Oid			dicts_oid;
	bool		mark;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return NIL;
	cx_check_settings_target(relid);

	/* 1. */
	read_state_now(relid, &before);
	if (before.candidates == NIL)
		return NIL;
	if (settings_changed_here())
		return all_candidates(relid, before.candidates, "retained",
							  "This transaction changed compressx settings: dictionaries are pruned in a later one.");

	/* 2. */
	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	if (!in_worker)
		WaitForLockers(tag, ShareLock, false);
	else if (!worker_wait_for_writers(&tag))
		return all_candidates(relid, before.candidates, "retained",
							  "Writers of the table were still at work after 10 s; pruning is tried again later.");

	/* 3. */
	if (in_worker)
	{
		if (!ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
			return all_candidates(relid, before.candidates, "retained",
								  "The table is locked by another maintenance command; pruning is tried again later.");
	}
	else
		LockRelationOid(relid, ShareUpdateExclusiveLock);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return NIL;
	cx_check_settings_target(relid);
	rel = table_open(relid, NoLock);
	toastoid = rel->rd_rel->reltoastrelid;
	if (OidIsValid(toastoid))
		toastrel = table_open(toastoid, ShareUpdateExclusiveLock);

	/* 4. */
	read_state_now(relid, &after);
	if (strcmp(before.settings_sig, after.settings_sig) != 0)
		results = all_candidates(relid, before.candidates, "retained",
								 "The table's compressx settings changed while this waited for writers; pruning is tried again later.");
	else
	{
		/* 5. */
		scan_uses(rel, toastrel, before.candidates);

		/* 6. */
		dicts_oid = cx_extension_table_oid("dictionaries");
		mark = cx_dict_has_dropped_column(dicts_oid) && cx_dict_slots_may_decode();
		if (cx_dict_purge_dropped(dicts_oid) > 0)
			CacheInvalidateRelcacheByRelid(dicts_oid);
		foreach(lc, before.candidates)
		{
			Candidate  *c = (Candidate *) lfirst(lc);
			Oid			types[2] = {OIDOID, INT4OID};
			Datum		values[2];
			AttrNumber	attnum;

			if (c->uses > 0)
			{
				results = lappend(results,
								  cx_autodict_result(relid, c->attname, "retained", c->dict_id,
										 psprintf("Dictionary %d is no longer the column's, but " INT64_FORMAT " stored values (row versions older snapshots may still read included) name it; VACUUM FULL, CLUSTER or recompress_table rewrites them.",
												  c->dict_id, c->uses)));
				continue;
			}
			values[0] = ObjectIdGetDatum(relid);
			values[1] = Int32GetDatum(c->dict_id);
			/*
			 * A slot may still decode older values that name it: then keep
			 * it, marked dropped, for as long (catalog/dict_dropped.c).
			 */
			if (cx_settings_exec(mark ?
								 "WITH d AS (UPDATE compressx.dictionaries "
								 "SET relid = 0::pg_catalog.oid::pg_catalog.regclass, "
								 "dropped = pg_catalog.pg_current_xact_id() "
								 "WHERE dict_id = $2 AND relid = $1 AND auto AND NOT shared "
								 "RETURNING 1) SELECT pg_catalog.count(*)::int4 FROM d" :
								 "WITH d AS (DELETE FROM compressx.dictionaries "
								 "WHERE dict_id = $2 AND relid = $1 AND auto AND NOT shared "
								 "RETURNING 1) SELECT pg_catalog.count(*)::int4 FROM d",
								 2, types, values, NULL) == 0)
				continue;		/* another session pruned it */
			attnum = count_column(relid, c->attname, after.auto_columns);
			if (attnum != InvalidAttrNumber)
				cx_autodict_count_pruned(relid, attnum, 1);
			results = lappend(results,
							  cx_autodict_result(relid, c->attname, "pruned", c->dict_id,
									 psprintf(mark ?
											  "Dictionary %d was retired: no stored value names it; it is deleted once no replication slot may still decode values that name it." :
											  "Dictionary %d was deleted: no stored value names it.",
											  c->dict_id)));
		}
	}
	if (toastrel)
		table_close(toastrel, NoLock);
	table_close(rel, NoLock);
	return results;
}
