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

#include "codec.h"

typedef struct CxColumnSetting
{
	const CxCodec *codec;
	int			level;			/* resolved: a valid level of codec */
	int			min_size;		/* values shorter than this stay plain */
	bool		explicit_setting;	/* from compressx.column_settings */
} CxColumnSetting;

/* GUCs */
extern int	cx_default_codec;
extern int	cx_default_level;
extern int	cx_min_size;
extern int	cx_inline_max;
extern const struct config_enum_entry cx_codec_options[];

/*
 * The relation whose settings apply to rel: rel itself, or for the transient
 * heap of a table rewrite ("pg_temp_<oid>"), the original table.
 */
extern Oid	cx_settings_relid(Relation rel);

/*
 * Fill out[0..natts-1] with the settings of every attribute of rel, GUC
 * defaults applied.  Explicit settings are cached per relation and dropped
 * on relcache invalidation.
 */
extern void cx_resolve_settings(Relation rel, CxColumnSetting *out);

extern void cx_store_column_setting(Oid relid, const char *attname,
									AttrNumber attnum, const CxCodec *codec,
									bool level_isnull, int level,
									bool min_size_isnull, int min_size,
									bool keep_min_size);

extern void cx_settings_init(void);

#endif							/* COMPRESSX_SETTINGS_H */
