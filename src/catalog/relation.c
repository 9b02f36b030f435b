/*-------------------------------------------------------------------------
 *
 * relation.c
 *	  Which relations are compressx's (see relation.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "utils/lsyscache.h"

#include "catalog/relation.h"

const TableAmRoutine *cx_am_routine = NULL;

Oid
cx_extension_table_oid(const char *name)
{
	Oid			nsp = get_namespace_oid("compressx", true);

	return OidIsValid(nsp) ? get_relname_relid(name, nsp) : InvalidOid;
}
