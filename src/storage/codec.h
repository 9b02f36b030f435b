/*-------------------------------------------------------------------------
 *
 * codec.h
 *	  compressx codec layer: one table of codecs, compress and decompress.
 *
 * Codec ids are written to disk (frames of compressx.compress(), and later
 * the access method's stored format).  Never reuse or renumber them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_CODEC_H
#define COMPRESSX_CODEC_H

/* Persisted codec ids: explicit values, never renumbered. */
typedef enum CxCodecId
{
	CX_CODEC_NONE = 0,
	CX_CODEC_PGLZ = 1,
	CX_CODEC_LZ4 = 2,
	CX_CODEC_ZSTD = 3
} CxCodecId;

#define CX_CODEC_COUNT 4

typedef struct CxCodec
{
	CxCodecId	id;
	const char *name;
	bool		has_levels;		/* false: level must be NULL */
	int			min_level;
	int			max_level;
	int			default_level;
} CxCodec;

/* Lookups; the _or_error variants raise user-facing errors. */
extern const CxCodec *cx_codec_by_id(int id);
extern const CxCodec *cx_codec_by_name_or_error(const char *name);
extern int	cx_codec_resolve_level(const CxCodec *codec, bool level_isnull,
								   int level);
extern const char *cx_codec_library_version(const CxCodec *codec);
extern char *cx_codec_names_list(void);

/*
 * Upper bound of the compressed size of srclen bytes, for sizing buffers.
 */
extern int32 cx_codec_bound(const CxCodec *codec, int32 srclen);

/*
 * Compress src into dst (capacity dstcap, at least cx_codec_bound(); less
 * when cx_codec_compresses_in_chunks(), which stops once the output would
 * not fit).  Returns the compressed length, or -1 when the codec declines
 * (pglz on incompressible input; input in chunks whose output would not
 * fit in dstcap).  Errors only on library failure.  dict: a digested
 * zstd dictionary (ZSTD_CDict, see dict.h; its level applies), a
 * CxLz4Dict for lz4, or NULL.
 */
extern int32 cx_codec_compress(const CxCodec *codec, int level, const void *dict,
							   const char *src, int32 srclen,
							   char *dst, int32 dstcap);

/*
 * Decompress exactly rawlen bytes from src into dst.  Returns false if the
 * input is malformed, truncated or does not decode to exactly rawlen bytes;
 * never reads or writes out of bounds.  Callers report the corruption with
 * their own context.  dict: a digested zstd dictionary (ZSTD_DDict), a
 * CxLz4Dict for lz4, or NULL.
 */
extern bool cx_codec_decompress(const CxCodec *codec, const void *dict,
								const char *src, int32 srclen,
								char *dst, int32 rawlen);

/*
 * Whether rawlen is a plausible decoded size for srclen bytes of this codec
 * (maximum expansion ratio of the format).  Checked before allocating.
 */
extern bool cx_codec_plausible_rawlen(const CxCodec *codec,
									  const char *src, int32 srclen,
									  int32 rawlen);

/*
 * The same from the input's length alone (the most srclen bytes of the
 * codec's format can expand to), for input not at hand.
 */
extern bool cx_codec_plausible_rawlen_bound(const CxCodec *codec,
											int64 srclen, int32 rawlen);

/*
 * Whether cx_codec_compress() compresses srclen bytes with codec at level
 * in chunks, checking for interrupts between them (pglz, lz4 and zstd on
 * large input: no single library call runs long deaf to cancel).
 */
extern bool cx_codec_compresses_in_chunks(const CxCodec *codec, int level,
										  int64 srclen);

/*
 * An lz4 dictionary, digested: lz4 uses a dictionary as history of at most
 * 64 kB preceding the value, so only the last 64 kB of a trained
 * dictionary's content count (a zstd dictionary's entropy header is left
 * out).  content points into the dictionary given to
 * cx_codec_lz4_dict_create(), which must outlive the digest.  stream: an
 * LZ4_stream_t that has loaded the content, copied for each value (loading
 * 64 kB once per value took longer than compressing it).
 */
typedef struct CxLz4Dict
{
	const char *content;
	int32		len;
	void	   *stream;
} CxLz4Dict;

/*
 * Digest dictionary bytes for lz4 (in CurrentMemoryContext); NULL if
 * unusable.  cx_codec_lz4_dict_size(): the memory one digest takes.
 */
extern CxLz4Dict *cx_codec_lz4_dict_create(const char *dict, int32 dictlen);
extern void cx_codec_lz4_dict_free(CxLz4Dict *d);
extern Size cx_codec_lz4_dict_size(void);

/* Register compressx.max_codec_memory. */
extern void cx_codec_init(void);

#endif							/* COMPRESSX_CODEC_H */
