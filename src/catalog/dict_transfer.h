/*-------------------------------------------------------------------------
 *
 * dict_transfer.h
 *	  How a dump carries dictionaries without showing them to every role
 *	  (compressx.dictionary_dump; see dict_transfer.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_DICT_TRANSFER_H
#define COMPRESSX_DICT_TRANSFER_H

/*
 * The SQL functions compressx_table_ref_in/out (type compressx.table_ref)
 * and the trigger function compressx_dictionary_dump_sync are all this file
 * offers; label.c writes restored_dict, dictionaries/restored.c reads it.
 */

#endif
