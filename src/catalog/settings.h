/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  Per-column codec settings of compressx tables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_SETTINGS_H
#define COMPRESSX_SETTINGS_H

#include "utils/guc.h"
#include "utils/rel.h"

#include "storage/codec.h"

typedef struct CxColumnSetting
{
	const CxCodec *codec;
	int			level;			/* resolved: a valid level of codec */
	int			min_size;		/* values shorter than this stay plain */
	int32		dict_id;		/* zstd dictionary, 0: none */
	bool		explicit_setting;	/* from compressx.column_settings */
	int			inline_max;		/* own values stored larger go out of line;
								 * -1: compressx.inline_max (cx_inline_max_of) */
	bool		dict_auto;		/* dictionary => 'auto' (zstd only): the
								 * dictionary is trained and replaced by
								 * compressx (dictionaries/auto.c) */
	bool		restore_pending;	/* restored_dict set: a restored label's
									 * dictionary is awaited, or the values
									 * loaded before it are to be re-encoded
									 * (dictionaries/restored.c) */
} CxColumnSetting;

/* What set_column_codec's dictionary argument asks for. */
typedef enum CxDictPolicy
{
	CX_DICT_KEEP,				/* NULL: the column's dictionary as it is */
	CX_DICT_AUTO,				/* 'auto': trained automatically */
	CX_DICT_NONE				/* 'none': no dictionary */
} CxDictPolicy;

/* GUCs */
extern int	cx_default_codec;
extern int	cx_default_level;
extern int	cx_min_size;
extern int	cx_inline_max;

/* The inline limit in effect for a column (its own, else the GUC's). */
static inline int
cx_inline_max_of(const CxColumnSetting *s)
{
	return s->inline_max >= 0 ? s->inline_max : cx_inline_max;
}
extern const struct config_enum_entry cx_codec_options[];

/*
 * Fill out[0..natts-1] with the settings of every attribute of rel, GUC
 * defaults applied.  Explicit settings are cached per relation and dropped
 * on relcache invalidation.
 */
extern void cx_resolve_settings(Relation rel, CxColumnSetting *out);

/*
 * The same with the settings of table relid, for a rewrite that builds
 * rel as relid's new heap (columns matched by name).
 */
extern void cx_resolve_settings_of(Relation rel, Oid relid,
								   CxColumnSetting *out);

/*
 * The table whose settings rel takes: rel itself, or the original table of
 * the transient relation ALTER TABLE rewrites it into ("pg_temp_<oid>").
 */
extern Oid	cx_settings_relid(Relation rel);

/*
 * The table whose rows a rewrite through its transient heap (ALTER TABLE
 * that rewrites: SET ACCESS METHOD compressx from another method, ALTER
 * COLUMN .. TYPE) encoded in this transaction since the last call, or
 * InvalidOid; forgets it.  Called at the end of each ALTER TABLE.
 */
extern Oid	cx_take_rewrite_note(void);

extern void cx_store_column_setting(Oid relid, const char *attname,
									AttrNumber attnum, const CxCodec *codec,
									bool level_isnull, int level,
									bool min_size_isnull, int min_size,
									bool keep_min_size);

/* Column numbers of compressx.column_settings */
#define Anum_cs_relid		1
#define Anum_cs_attname		2
#define Anum_cs_attnum		3
#define Anum_cs_codec		4
#define Anum_cs_level		5
#define Anum_cs_min_size	6
#define Anum_cs_dict_id		7
#define Anum_cs_auto_dictionary	8	/* since 0.4.0 */
#define Anum_cs_inline_max	9	/* since 0.4.0 */
#define Anum_cs_restored_dict	10	/* since 0.5.0 */

/* Column of compressx.dictionaries naming the table it serves */
#define Anum_dict_relid		2

extern void cx_settings_init(void);
extern void cx_settings_cleanup_init(void);	/* settings_cleanup.c */

/*
 * compressx.set_column_codec(): check the arguments, lock relid and its
 * partitions and inheritance children (ShareUpdateExclusiveLock) and store
 * the setting for each.  Returns their OIDs, relid first.
 */
extern List *cx_set_column_codec(Oid relid, const char *column,
								 const CxCodec *codec, bool level_isnull,
								 int level, bool min_size_isnull,
								 int min_size, CxDictPolicy dictionary);

/* Whether compressx.column_settings has the auto_dictionary column (0.4.0). */
extern bool cx_settings_have_auto_column(void);


/*
 * Errors unless relid is a table the user owns that may have settings (not
 * a system catalog, compressx's own table or a temporary table); returns
 * its relkind.  Takes no lock.
 */
extern char cx_check_settings_target(Oid relid);

/* Errors if relid is compressx.column_settings or compressx.dictionaries. */
extern void cx_check_not_own_table(Oid relid);

/* Errors unless column is a variable-length column of relid. */
extern AttrNumber cx_check_settings_column(Oid relid, const char *column);


/*
 * Whether this server's core reads its own lz4 format (built with lz4).
 * compressx links liblz4 itself: only values stored in core's format need
 * the server's lz4.
 */
extern bool cx_codec_core_has_lz4(void);

/*
 * Error unless values of codec can be stored for this server's core to read:
 * lz4 on a server built without lz4 (a column set to lz4 stores core's lz4
 * format whenever it has no dictionary).
 */
extern void cx_codec_check_storable(const CxCodec *codec);

/*
 * What a layer that distributes tables over nodes (Citus, src/citus/) adds
 * to settings: a shard follows its table's settings, and a change of a
 * distributed table's settings reaches the other nodes.  The layer sets
 * cx_distribution when it initializes; while it is NULL, tables are local.
 */
typedef struct CxDistributionHooks
{
	/* the table whose settings shard relid follows here, or InvalidOid */
	Oid			(*shell_of) (Oid relid, bool new_relation, bool *with_dictionaries);
	/* whether relid is a distributed table */
	bool		(*is_distributed) (Oid relid);
	/* relid's settings rows changed in this transaction: send them on */
	void		(*push) (Oid relid);
	/* relid's settings changed: its shards' cached settings are stale */
	void		(*settings_changed) (Oid relid);
	/* a relcache invalidation of relid (from settings' callback; catalog-free) */
	void		(*invalidated) (Oid relid);
	/* DDL: a table renamed (to take a replaced table's settings), one dropped */
	void		(*renamed) (Oid relid);
	void		(*dropped) (Oid relid);
} CxDistributionHooks;

extern const CxDistributionHooks *cx_distribution;

#endif							/* COMPRESSX_SETTINGS_H */
