/*-------------------------------------------------------------------------
 *
 * run.h
 *	  What the parts of recompress_online share: the run's state, its
 *	  progress slots and phases, and the steps every part takes (run.c).
 *
 *	  online.c	 the procedure, the passes and their batches
 *	  run.c		 progress, locks, checks, the owner, commits
 *	  move.c	 moving a table between heap and compressx (move.h)
 *	  runs.c	 the record of runs, levels, leftovers and cleanup (runs.h)
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_ONLINE_RUN_H
#define COMPRESSX_ONLINE_RUN_H

#include "access/htup.h"
#include "access/tableam.h"
#include "nodes/execnodes.h"
#include "storage/itemptr.h"
#include "storage/lock.h"
#include "utils/backend_progress.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "catalog/relation.h"
#include "catalog/settings.h"
#include "storage/format.h"
#include "sql/progress.h"
#include "sql/recompress.h"

/*
 * Progress, under compressx's own command (sql/progress.h: no view of core
 * shows it; it survives the procedure's commits and is cleared by an
 * abort); compressx.recompress_online_progress reads it.
 */
#define CX_ONLINE_PHASE			1
#define CX_ONLINE_PASS			2
#define CX_ONLINE_BLKS_TOTAL	3
#define CX_ONLINE_BLKS_DONE		4
#define CX_ONLINE_ROWS_TOTAL	5
#define CX_ONLINE_ROWS_CHECKED	6
#define CX_ONLINE_ROWS_DONE		7
#define CX_ONLINE_BYTES_BEFORE	8
#define CX_ONLINE_BYTES_AFTER	9
#define CX_ONLINE_RETRIES		10
#define CX_ONLINE_BATCHES		11
#define CX_ONLINE_TABLE			12	/* the table (partition) being done */
#define CX_ONLINE_TABLES_DONE	13
#define CX_ONLINE_TABLES_TOTAL	14
#define CX_ONLINE_MARKER		19
#define CX_ONLINE_MARKER_VALUE	0x43584F4E	/* "CXON" */

#define CX_ONLINE_PHASE_TARGET	1	/* setting the columns' target */
#define CX_ONLINE_PHASE_REWRITE 2	/* a pass over the table */
#define CX_ONLINE_PHASE_RETRY	3	/* retrying rows clients held */
#define CX_ONLINE_PHASE_WRITERS 4	/* waiting for writers that started before */
#define CX_ONLINE_PHASE_OLD		5	/* waiting for old row versions to die */
#define CX_ONLINE_PHASE_AM		6	/* changing the access method */
#define CX_ONLINE_PHASE_COMPACT 7	/* moving data out of the tails */

/* advisory lock (field4) marking a run on a table, held for the session */
#define CX_ONLINE_LOCK_FIELD4	0x4358

#define CX_ONLINE_DEFAULT_BATCH 1000

/* An access-method change the run makes on the table. */
typedef enum AmMove
{
	CX_MOVE_NONE,
	CX_MOVE_TO_CX,				/* heap -> compressx: relam first, then passes */
	CX_MOVE_TO_HEAP				/* compressx -> heap: passes, then relam */
} AmMove;

typedef struct OnlineRun
{
	Oid			top_relid;		/* the table named in the call */
	Oid			caller;			/* who called: must own each table */
	CxOwnerScope owner;			/* the table's owner, while a step runs */
	Oid			relid;			/* the table being done (a partition) */
	char	   *relname;		/* its name, for messages once it is gone */
	Oid			filenumber;		/* its file when the pass began, or invalid */
	bool		file_replaced;	/* ... and it changed since: tids are stale */
	int64		progress[PGSTAT_NUM_PROGRESS_PARAM];	/* as reported */
	bool		is_cx;
	AmMove		move;
	Oid			target_am;		/* InvalidOid: keep each table's */
	CxRecompressRequest req;
	ArrayType  *columns;		/* NULL: every compressible column */
	int			batch_rows;
	int64		max_wait_ms;
	/* totals, reported as progress */
	int64		pass;
	int64		rows_checked;
	int64		rows_rewritten;
	int64		bytes_before;
	int64		bytes_after;
	int64		retries;
	int64		batches;
	/* the current pass: rows clients held, and whether anything moved */
	ItemPointerData *held;
	int			nheld;
	int			maxheld;
	bool		pass_changed;
	bool		has_dicts;		/* compressx: dictionaries serve the table */
	TransactionId relevel_xid;	/* compressx, a level named, or a column's
								 * setting changed since its last rewrite:
								 * values in the target codec of row versions
								 * written by older transactions are
								 * re-encoded */
	struct CxPendingSettings *settings_pending;	/* compressx: the columns
												 * whose setting changed
												 * since their last rewrite,
												 * as the run began
												 * (catalog/generation.h) */
	int64		pending;		/* moving to heap: compressx values in row
								 * versions the pass could not rewrite */
	Snapshot	waited;			/* moving to heap: taken as the last wait for
								 * old snapshots began (a copy), or NULL */
	OffsetNumber next_off;		/* a full batch stopped in a block: from here */
	BlockNumber done_from[2];	/* the blocks of the last two batches, */
	BlockNumber done_to[2];		/* [from, to), [0] the older */
	BlockNumber pass_blocks;	/* the table's size when the pass began */
	BlockNumber pass_toast_blocks;	/* its TOAST relation's, then */
	/* compact.c: what the call leaves to VACUUM and REINDEX (issue 34) */
	int64		followup_rewritten; /* rows_rewritten when the last table ended */
	int64		followup_checked;	/* rows_checked, then */
	StringInfo	followup;		/* the statements, in cxt; NULL: none */
	MemoryContext cxt;			/* lives as long as the call */
} OnlineRun;

/* What one batch (transaction) needs. */
typedef struct Batch
{
	Relation	rel;
	TupleDesc	desc;
	bool	   *target;			/* attno-1: a target column */
	CxStoredMethod *method;		/* attno-1: its stored target method */
	char	   *cmethod;		/* heap: attno-1: core method char */
	CxColumnSetting *settings;	/* compressx: the columns' settings */
	bool		check_dicts;	/* compressx: compare values' dictionaries */
	TransactionId relevel_xid;	/* see OnlineRun */
	bool	   *relevel;		/* attno-1: relevel_xid applies to the column */
	Snapshot	snapshot;
	TransactionId horizon;		/* moving to heap: older versions are dead */
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	HeapTupleData *visible;		/* a block's rows the snapshot sees, */
	char	   *pagecopy;		/* copied here (BLCKSZ, maxaligned) */
	MemoryContext batchcxt;		/* freed with the batch */
	MemoryContext rowcxt;		/* reset per row */
	MemoryContext oldcxt;
} Batch;

/* online.c: the batches the passes and the compaction are made of */
extern void cx_online_begin_batch(OnlineRun *run, Batch *b);
extern void cx_online_end_batch(Batch *b);
extern void cx_online_prune_range(Relation rel, BlockNumber from, BlockNumber to);
extern LockTupleMode cx_online_update_lock_mode(Relation rel, const bool *changed);
extern TM_Result cx_online_lock_row(Batch *b, ItemPointer tid,
									LockWaitPolicy wait_policy, LockTupleMode mode,
									HeapTuple *oldtup);
extern void cx_online_index_new_version(Batch *b, ItemPointer newtid,
										CxUpdateIndexes update_indexes);

/* compact.c */
extern void cx_online_compact(OnlineRun *run);
extern void cx_online_followup_notice(OnlineRun *run);

/* run.c */
extern void cx_online_progress(OnlineRun *run, int idx, int64 val);
extern void cx_online_report(OnlineRun *run, int phase);
extern void cx_online_progress_restart(OnlineRun *run);
extern void cx_online_nap(int64 ms);

/*
 * How long, in total, the waits of the current run may still last (-1:
 * unbounded, the default): every nap of a retry and every wait for an old
 * snapshot counts, and a wait beyond it is an error (55P03).  Set by the
 * automatic-dictionary worker around the runs it starts
 * (dictionaries/restored.c), so that no session holding a lock, a row or
 * a snapshot can keep it waiting.
 */
extern int64 cx_online_wait_budget_ms;
extern void cx_online_lock_table(OnlineRun *run, LOCKMODE mode);
extern void cx_online_as_owner(OnlineRun *run, Relation rel);
extern void cx_online_commit(OnlineRun *run);
extern Relation cx_online_open_checked(OnlineRun *run);
extern bool cx_online_with_lock_timeout(OnlineRun *run, void (*fn) (void *), void *arg);
extern void cx_online_lock_exclusive(OnlineRun *run, Oid relid, LOCKMODE mode, int phase);
extern void cx_online_claim_table(LOCKTAG *tag, Oid relid);
extern void cx_online_check_target(Oid relid, bool partitioned_ok);

#endif							/* COMPRESSX_ONLINE_RUN_H */
