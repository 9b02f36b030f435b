/*-------------------------------------------------------------------------
 *
 * relation.h
 *	  Which relations are compressx's: its access method's tables, and its
 *	  own extension tables (and running SQL on those as their owner).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_RELATION_H
#define COMPRESSX_RELATION_H

#include "access/tableam.h"
#include "utils/rel.h"

/*
 * The access method's routine, set by its handler (am/am.c) the first time
 * the relcache asks for it: until then no relation in this backend can be a
 * compressx table.
 */
extern const TableAmRoutine *cx_am_routine;

/* Whether rel is stored by the compressx access method. */
static inline bool
cx_is_compressx_relation(Relation rel)
{
	return cx_am_routine != NULL && rel->rd_tableam == cx_am_routine;
}

/* The table compressx.<name> of the extension, or InvalidOid. */
extern Oid	cx_extension_table_oid(const char *name);
extern bool cx_extension_table_has_column(const char *name, const char *column,
										  AttrNumber attnum);

/*
 * Run SQL on compressx's tables as the settings table's owner, with
 * search_path pinned; callers check ownership of the user's table first.
 * Returns the first column of the first row returned (an int4), or 0.
 */
extern int32 cx_settings_exec(const char *sql, int nargs, Oid *types,
							 Datum *values, const char *nulls);
extern text *cx_settings_exec_text(const char *sql, int nargs, Oid *types,
								   Datum *values, const char *nulls);

/*
 * Refuse, with SQLSTATE 25006 as core's commands do, to run the writing SQL
 * function funcname (its name without schema or parentheses) in a
 * read-only transaction or during recovery; the error's context names the
 * relation relid unless it is InvalidOid.  Callers call it first, before
 * any lock or work.
 */
extern void cx_prevent_if_read_only(const char *funcname, Oid relid);

/*
 * Whether compressx.column_settings has rows for relid (read directly, no
 * SQL: callable while objects are being dropped).
 */
extern bool cx_has_settings_rows(Oid relid);

/*
 * Running a table owner's code during maintenance (index expressions,
 * partial-index predicates, exclusion operators), as core's CLUSTER,
 * REINDEX and VACUUM do since CVE-2022-1552: as the table's owner, in a
 * security-restricted operation, under a GUC nest level of its own (and,
 * on 17 and later, core's safe search_path).  A scope lives within one
 * transaction: leave it before a commit.  An error inside needs no
 * leaving: the (sub)transaction's abort restores the user and the
 * settings.
 */
typedef struct CxOwnerScope
{
	bool		active;
	Oid			owner;			/* whom it runs as */
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
} CxOwnerScope;

/* Become owner (a table's relowner) until cx_owner_scope_leave(). */
extern void cx_owner_scope_enter(CxOwnerScope *scope, Oid owner);

/* Become the caller again, rolling back settings changed since; no-op if not active. */
extern void cx_owner_scope_leave(CxOwnerScope *scope);

/*
 * pg_attribute.attcompression of compressx tables (catalog/attcompression.c
 * says what it holds): the method core knows codec_id by, or
 * InvalidCompressionMethod; and the update of one column's.
 */
extern char cx_core_method_of_codec(int codec_id);
extern bool cx_set_attcompression(Oid relid, AttrNumber attnum, char method);

/*
 * pg_attribute.attstorage of a column set to codec none (to_none: EXTENDED
 * or MAIN become EXTERNAL) or leaving it (EXTERNAL becomes the type's
 * storage); returns whether it changed.
 */
extern bool cx_set_attstorage_for_none(Oid relid, AttrNumber attnum, bool to_none);

#endif							/* COMPRESSX_RELATION_H */
