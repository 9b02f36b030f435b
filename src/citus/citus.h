/*-------------------------------------------------------------------------
 *
 * citus.h
 *	  compressx tables distributed with Citus: which table a shard follows,
 *	  whether a function call acts on the whole cluster, and sending a
 *	  table's settings and dictionaries to the other nodes.
 *
 * compressx does not link to Citus: it reads Citus's catalog tables
 * (pg_dist_partition, pg_dist_shard, pg_dist_local_group) when the citus
 * extension is installed, and looks up one exported function of citus.so
 * to send commands in the caller's distributed transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPRESSX_CITUS_H
#define COMPRESSX_CITUS_H

/*
 * The Citus table (distributed, reference or Citus-managed local table) on
 * this node whose shard relid is, or InvalidOid.  A shard is named
 * <table>_<shard id> in its table's schema and has its table's owner, and
 * its id is in pg_dist_shard: then *with_dictionaries is set, the shard
 * may use its table's dictionaries.  A relation created in the current
 * transaction (new_relation) whose id is not there yet (the children of a
 * shard split are filled before their metadata is committed) follows the
 * table its name without the suffix names, but not its dictionaries.
 */
extern Oid	cx_citus_shell_of(Oid relid, bool new_relation, bool *with_dictionaries);

/* Whether relid is a Citus table (has a row in pg_dist_partition). */
extern bool cx_citus_is_table(Oid relid);

/*
 * Whether a compressx function called on relid acts on the whole
 * distributed table: relid is a Citus table and this node is the
 * coordinator, and the call does not come from compressx's own fan-out.
 */
extern bool cx_citus_fan_out(Oid relid);

/*
 * Defines compressx.citus_send_in_transaction and makes settings follow
 * Citus (catalog/settings.h, cx_distribution); from _PG_init.
 */
extern void cx_citus_init(void);

/*
 * A digest of the settings of relid on this node and of their
 * dictionaries' contents, equal on two nodes that encode relid alike.
 */
extern text *cx_citus_settings_digest(Oid relid);

/* Whether this node is the Citus coordinator (group 0). */
extern bool cx_citus_on_coordinator(void);

/* The installed version of compressx in this database. */
extern char *cx_citus_installed_version(void);

/*
 * Make the settings rows of relid those of state (jsonb text, as the
 * coordinator sends them): dictionaries by content, with ids of this node;
 * columns by name.  Rows of relid's shards here are removed: the shards
 * follow relid.  The caller has checked ownership and locked relid.
 */
extern void cx_citus_apply_state(Oid relid, text *state);

/* Set while compressx's fan-out functions run (cx_citus_fan_out is false). */
extern bool cx_citus_in_fan_out;

/*
 * Send the settings and dictionaries of relid (a Citus table, on the
 * coordinator) to every other node with Citus metadata, inside the
 * current transaction (Citus commits it on every node with two-phase
 * commit, or on none).  Does nothing for other relations.
 */
extern void cx_citus_push(Oid relid);

/*
 * After a change of the settings of relid: if it is a Citus table, the
 * cached settings of its shards on this node are stale too.
 */
extern void cx_citus_settings_changed(Oid relid);

/*
 * Called by the relcache invalidation callback: relid may have become a
 * Citus table in this transaction (see citus.c).  Catalog-free.
 */
extern void cx_citus_note_invalidation(Oid relid);

/*
 * Citus replaces tables (alter_distributed_table, undistribute_table):
 * in a database with Citus, a dropped table's settings are kept until the
 * end of the transaction, and given to a table renamed to its name
 * meanwhile.
 */
extern void cx_citus_stash_dropped(Oid relid);
extern void cx_citus_renamed(Oid relid);

#endif							/* COMPRESSX_CITUS_H */
