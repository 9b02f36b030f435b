/*-------------------------------------------------------------------------
 *
 * label.h
 *	  Column settings mirrored as security labels of provider "compressx",
 *	  so that dumps carry them in pre-data (catalog/label.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_LABEL_H
#define COMPRESSX_LABEL_H

/* Register the label provider and the hook that drops labels with the extension. */
extern void cx_label_init(void);

#endif							/* COMPRESSX_LABEL_H */
