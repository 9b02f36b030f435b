/*-------------------------------------------------------------------------
 *
 * train.c
 *	  compressx.train_dictionary(): train a zstd dictionary on a sample of a
 *	  column and make it the column's.
 *
 * The dictionary becomes a row of compressx.dictionaries (the cache of
 * digested dictionaries is catalog/dict.c) and the column's setting names
 * it.  Locks the table ShareUpdateExclusiveLock, as set_column_codec()
 * does, and reads a block sample of the column (bounded by
 * compressx.sample_memory; each value's first 128 kB, 8 MB in all, go to
 * training).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"


#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "citus/citus.h"
#include "catalog/relation.h"
#include "catalog/settings.h"
#include "catalog/dict.h"
#include "catalog/dict_auto.h"
#include "dictionaries/state.h"
#include "sql/inspect.h"
#include "sql/progress.h"
#include "storage/format.h"

PG_FUNCTION_INFO_V1(compressx_train_dictionary);
PG_FUNCTION_INFO_V1(compressx_value_bytes);

/*
 * Keep the start of one plain value for training (what training uses:
 * each value's first CX_SAMPLE_VALUE_MAX bytes, CX_SAMPLE_TOTAL_MAX in all);
 * false when the total is reached.
 */
static bool
keep_sample_value(List **plains, int64 *kept, int *nvalues, struct varlena *plain)
{
	int32		len = Min(VARSIZE_ANY_EXHDR(plain), CX_SAMPLE_VALUE_MAX);
	struct varlena *cut;

	if (*kept + len > CX_SAMPLE_TOTAL_MAX)
		return false;
	cut = palloc(VARHDRSZ + len);
	SET_VARSIZE(cut, VARHDRSZ + len);
	memcpy(VARDATA(cut), VARDATA_ANY(plain), len);
	*plains = lappend(*plains, cut);
	*kept += len;
	if (len > 0)
		(*nvalues)++;
	return true;
}

/*
 * The plain values of column of Citus table relid in a sample of about
 * sample_rows rows of its shards: a distributed TABLESAMPLE query, whose
 * fraction comes from the shards' row estimates (all rows when they have
 * none), as the current user.
 */
static List *
citus_sample_values(Oid relid, const char *column, int32 sample_rows)
{
	List	   *result = NIL;
	Oid			types[2] = {OIDOID, INT4OID};
	Datum		values[2];
	double		total = -1;
	double		percent = 100;
	char	   *sql;
	MemoryContext outer = CurrentMemoryContext;

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int32GetDatum(sample_rows);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT pg_catalog.sum(r.result::float8) "
							  "FROM pg_catalog.run_command_on_shards($1, "
							  "'SELECT reltuples FROM pg_catalog.pg_class WHERE oid = %L::pg_catalog.regclass') r "
							  "WHERE r.success",
							  1, types, values, NULL, true, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			total = DatumGetFloat8(d);
	}
	/* half again as many rows as asked for: SYSTEM samples whole pages */
	if (total > 0)
		percent = Min(100.0, Max(0.001, 150.0 * sample_rows / total));
	sql = psprintf("SELECT compressx.value_bytes(%s) FROM %s TABLESAMPLE SYSTEM (%g) "
				   "WHERE %s IS NOT NULL LIMIT $2",
				   quote_identifier(column),
				   quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
											  get_rel_name(relid)),
				   percent, quote_identifier(column));
	if (SPI_execute_with_args(sql, 2, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not sample the shards of \"%s\"", get_rel_name(relid));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext old;

		if (isnull)
			continue;
		old = MemoryContextSwitchTo(outer);
		result = lappend(result, PG_DETOAST_DATUM_COPY(d));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	return result;
}

/*
 * compressx.value_bytes(value anyelement) RETURNS bytea
 *	  The bytes of a variable-length value as compressx compresses them
 *	  (its plain form, without header): what train_dictionary samples.
 */
Datum
compressx_value_bytes(PG_FUNCTION_ARGS)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, 0);
	struct varlena *plain;
	bytea	   *result;

	if (!OidIsValid(type) || get_typlen(type) != -1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("compressx.value_bytes() takes a value of a variable-length type")));
	plain = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0));
	result = palloc(VARHDRSZ + VARSIZE_ANY_EXHDR(plain));
	SET_VARSIZE(result, VARHDRSZ + VARSIZE_ANY_EXHDR(plain));
	memcpy(VARDATA(result), VARDATA_ANY(plain), VARSIZE_ANY_EXHDR(plain));
	PG_RETURN_BYTEA_P(result);
}

/*
 * compressx.train_dictionary(rel regclass, column_name name,
 *							  dict_size int DEFAULT 16384,
 *							  sample_rows int DEFAULT 10000) RETURNS int
 *
 * Trains a zstd dictionary of at most dict_size bytes on the plain values
 * of a block sample of about sample_rows rows, stores it, and makes it the
 * dictionary of the column's new values (the column's setting becomes
 * explicit: zstd at its current level).  Existing values keep theirs until
 * VACUUM FULL, CLUSTER or recompress_table re-encodes them.
 */
Datum
compressx_train_dictionary(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *column;
	int32		dict_size;
	int32		sample_rows;
	Relation	rel;
	AttrNumber	attnum;
	CxColumnSetting *settings;
	List	   *plains = NIL;
	List	   *sample;
	int			nvalues = 0;
	int64		kept = 0;
	int32		nsamples;
	int64		nbytes;
	const char *error = NULL;
	ListCell   *lc;
	Oid			types[8] = {OIDOID, NAMEOID, BYTEAOID, INT4OID, INT8OID, INT2OID, INT4OID, TEXTOID};
	Datum		values[8];
	bytea	   *dictval;
	NameData	attname;
	int32		dict_id;

	cx_prevent_if_read_only("train_dictionary", PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0));

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("arguments of compressx.train_dictionary must not be null")));
	relid = PG_GETARG_OID(0);
	column = NameStr(*PG_GETARG_NAME(1));
	dict_size = PG_GETARG_INT32(2);
	sample_rows = PG_GETARG_INT32(3);
	if (dict_size < 1024 || dict_size > 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dict_size must be between 1024 and 1048576 bytes")));
	if (sample_rows < 1 || sample_rows > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample_rows must be between 1 and 1000000")));

	if (cx_check_settings_target(relid) == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot train a dictionary for partitioned table \"%s\"",
						get_rel_name(relid)),
				 errhint("Train one for each partition.")));
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	cx_check_settings_target(relid);
	rel = table_open(relid, NoLock);
	if (!cx_is_compressx_relation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("table \"%s\" is not stored by the compressx access method",
						RelationGetRelationName(rel)),
				 errhint("ALTER TABLE %s SET ACCESS METHOD compressx",
						 quote_identifier(RelationGetRelationName(rel)))));
	attnum = cx_check_settings_column(relid, column);
	settings = palloc(sizeof(CxColumnSetting) * RelationGetDescr(rel)->natts);
	cx_resolve_settings(rel, settings);
	if (settings[attnum - 1].codec->id != CX_CODEC_ZSTD &&
		settings[attnum - 1].codec->id != CX_CODEC_LZ4)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" of relation \"%s\" is compressed with %s, and dictionaries serve zstd and lz4 only",
						column, RelationGetRelationName(rel),
						settings[attnum - 1].codec->name),
				 errhint("Choose zstd or lz4 first: SELECT compressx.set_column_codec('%s', '%s', 'zstd');",
						 RelationGetRelationName(rel), column)));

	/*
	 * The dictionary holds pieces of every row sampled, and with it the
	 * stored size of a new value tells how much of it those rows contain:
	 * a role that may insert into the column and read sizes (or watch the
	 * table grow) can test guesses against rows its policies hide.
	 */
	if (rel->rd_rel->relrowsecurity)
		ereport(WARNING,
				(errmsg("table \"%s\" has row-level security: the dictionary is trained on rows of every user",
						RelationGetRelationName(rel)),
				 errdetail("Roles that may insert into column \"%s\" can learn about rows hidden from them from the stored size of the values they insert.",
						   column),
				 errhint("Use a dictionary only where every role that writes the column may read all of its rows; compressx.reset_column_codec() stops using it.")));

	cx_progress_begin(relid, CX_OP_TRAIN);
	cx_progress_phase(CX_PHASE_SAMPLING, sample_rows);

	/* the plain values of a block sample (of the shards, for a Citus table) */
	if (cx_citus_fan_out(relid))
	{
		sample = citus_sample_values(relid, column, sample_rows);
		foreach(lc, sample)
			if (!keep_sample_value(&plains, &kept, &nvalues, lfirst(lc)))
				break;
	}
	else
	{
		sample = cx_sample_tuples(rel, GetActiveSnapshot(), sample_rows, sample_rows);
		cx_progress_set_done(list_length(sample));
		cx_progress_phase(CX_PHASE_READING, list_length(sample));
		foreach(lc, sample)
		{
			HeapTuple	tuple = (HeapTuple) lfirst(lc);
			bool		isnull;
			Datum		d = heap_getattr(tuple, attnum, RelationGetDescr(rel), &isnull);
			struct varlena *plain;
			bool		more;

			CHECK_FOR_INTERRUPTS();
			cx_progress_set_done(foreach_current_index(lc));
			if (isnull)
				continue;
			plain = cx_plain_value((struct varlena *) DatumGetPointer(d), relid, column);
			more = keep_sample_value(&plains, &kept, &nvalues, plain);
			if (plain != (struct varlena *) DatumGetPointer(d))
				pfree(plain);
			if (!more)
				break;
		}
	}
	CHECK_FOR_INTERRUPTS();

	/* an empty or all-NULL column: say so, rather than relay zstd's error */
	if (nvalues < CX_DICT_MIN_VALUES)
	{
		if (sample == NIL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("too few values in column \"%s\" of relation \"%s\" to train a zstd dictionary",
							column, RelationGetRelationName(rel)),
					 errdetail("The table has no rows; training needs at least %d non-empty values.",
							   CX_DICT_MIN_VALUES),
					 errhint("Load rows into the table first: a useful dictionary needs many values, together many times dict_size.")));
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("too few values in column \"%s\" of relation \"%s\" to train a zstd dictionary",
						column, RelationGetRelationName(rel)),
				 errdetail_plural("The %d row sampled holds %d non-empty values of the column; training needs at least %d.",
								  "The %d rows sampled hold %d non-empty values of the column; training needs at least %d.",
								  list_length(sample),
								  list_length(sample), nvalues, CX_DICT_MIN_VALUES),
				 errhint("Load more rows, or raise sample_rows: a useful dictionary needs many values, together many times dict_size.")));
	}

	cx_progress_phase(CX_PHASE_TRAINING, 0);
	dictval = cx_dict_train(plains, dict_size, &nsamples, &nbytes, &error);
	if (dictval == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not train a zstd dictionary for column \"%s\" of relation \"%s\"",
						column, RelationGetRelationName(rel)),
				 errdetail("Training reports \"%s\" on a sample of %d values, " INT64_FORMAT " bytes.",
						   error, nsamples, nbytes),
				 errhint("Training needs many values, together many times dict_size: load more rows, raise sample_rows or lower dict_size.")));

	namestrcpy(&attname, column);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = NameGetDatum(&attname);
	values[2] = PointerGetDatum(dictval);
	values[3] = Int32GetDatum(nsamples);
	values[4] = Int64GetDatum(nbytes);
	values[5] = Int16GetDatum(attnum);
	values[6] = Int32GetDatum(settings[attnum - 1].level);
	values[7] = CStringGetTextDatum(settings[attnum - 1].codec->name);
	dict_id = cx_settings_exec(
		"WITH d AS (INSERT INTO compressx.dictionaries "
		"(relid, attname, dict, sample_values, sample_bytes) "
		"VALUES ($1::pg_catalog.oid::pg_catalog.regclass, $2, $3, $4, $5) RETURNING dict_id), "
		/* update, else insert: see cx_store_column_setting() */
		"u AS (UPDATE compressx.column_settings s SET dict_id = d.dict_id FROM d "
		"WHERE s.relid = $1 AND s.attnum = $6 RETURNING 1), "
		"s AS (INSERT INTO compressx.column_settings "
		"(relid, attname, attnum, codec, level, dict_id) "
		"SELECT $1::pg_catalog.oid::pg_catalog.regclass, $2, $6, $8, $7, d.dict_id FROM d "
		"WHERE NOT EXISTS (SELECT FROM u)) "
		"SELECT dict_id FROM d",
		8, types, values, NULL);
	if (dict_id <= 0)
		elog(ERROR, "could not store the zstd dictionary");
	/* a Citus table's shards use it too: kept when the table is dropped */
	if (cx_citus_is_table(relid))
	{
		Oid			idtype[1] = {INT4OID};
		Datum		idval[1];

		idval[0] = Int32GetDatum(dict_id);
		cx_settings_exec("UPDATE compressx.dictionaries SET shared = true WHERE dict_id = $1",
						 1, idtype, idval, NULL);
	}

	/*
	 * A column with dictionary => 'auto' keeps its policy: its state says
	 * what was done, instead of what its last check found before (often
	 * "not enough values"), until the next check measures the dictionary.
	 */
	if (settings[attnum - 1].dict_auto && cx_autodict_installed())
		cx_autodict_record(relid, attnum, "active", nvalues, "trained",
						   psprintf("Dictionary %d was trained by compressx.train_dictionary() on %d values; the next check measures it and keeps it while no new one does better by compressx.auto_dictionary_margin.",
									dict_id, nsamples),
						   -1, -1);

	cx_progress_end();
	table_close(rel, NoLock);
	cx_citus_push(relid);
	PG_RETURN_INT32(dict_id);
}
