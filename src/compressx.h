/*-------------------------------------------------------------------------
 *
 * compressx.h
 *	  Module-wide settings of compressx.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_H
#define COMPRESSX_H

/* GUC compressx.ratio_sample_rows: rows sampled per table by the views */
extern int	cx_ratio_sample_rows;

/* GUC compressx.sample_memory: kB a sample of advise / train_dictionary may take */
extern int	cx_sample_memory_kb;

/* GUC compressx.debug_rewrite_delay: test aid, sleep per 64 tuples rewritten */
extern int	cx_debug_rewrite_delay_ms;

#endif							/* COMPRESSX_H */
