# compressx: PGXS build.  `make && make install`; tests: test/run_tests.sh
MODULE_big = compressx
# layers, bottom up; each uses only those below it (see src/compressx.c)
OBJS = \
	src/storage/codec.o \
	src/storage/format.o \
	src/catalog/relation.o \
	src/catalog/settings.o \
	src/catalog/settings_cleanup.o \
	src/catalog/generation.o \
	src/catalog/attcompression.o \
	src/catalog/dict.o \
	src/catalog/dict_auto.o \
	src/catalog/dict_dropped.o \
	src/catalog/label.o \
	src/catalog/dict_transfer.o \
	src/am/am.o \
	src/am/am_index.o \
	src/am/am_write.o \
	src/am/progress.o \
	src/am/rewrite.o \
	src/am/slot.o \
	src/citus/citus.o \
	src/citus/fanout.o \
	src/sql/advise.o \
	src/sql/followup.o \
	src/sql/frame.o \
	src/sql/inspect.o \
	src/sql/progress.o \
	src/sql/recompress.o \
	src/sql/uninstall.o \
	src/sql/verify.o \
	src/dictionaries/auto.o \
	src/dictionaries/prune.o \
	src/dictionaries/restored.o \
	src/dictionaries/state.o \
	src/dictionaries/train.o \
	src/dictionaries/worker.o \
	src/online/compact.o \
	src/online/move.o \
	src/online/online.o \
	src/online/run.o \
	src/online/runs.o \
	src/logical/decoder.o \
	src/compressx.o

EXTENSION = compressx
DATA = sql/compressx--0.1.0.sql sql/compressx--0.1.0--0.2.0.sql sql/compressx--0.2.0--0.3.0.sql \
	sql/compressx--0.3.0--0.4.0.sql sql/compressx--0.4.0--0.5.0.sql
PGFILEDESC = "compressx - per-column compression for PostgreSQL"

SHLIB_LINK = -llz4 -lzstd
PG_CPPFLAGS = -I$(srcdir)/src

# pg_regress files live in sql/ and expected/ (see test/run_tests.sh)
REGRESS = codecs frame column_stats recompress am am_storage publication verify security advise dict dict_auto update hostile limits sort_hash recompress_online recompress_online_am recompress_online_kinds first_hour first_hour_tools review_owner review_online review_scripts review_readonly review_cancel review_citus review_plan review_labels dict_privacy server_lz4 codec_memory codec_none restore_label_hostile setting_applied heap_leftovers review_followup review_generation repack dict_auto_large scan_plain
REGRESS_OPTS = --load-extension=compressx

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies (unless PostgreSQL was configured with
# --enable-depend): rebuild every object when any of compressx's headers
# changes, so that a changed struct never meets an object built with the old one.
$(OBJS): $(wildcard $(srcdir)/src/*.h $(srcdir)/src/*/*.h)

# PostgreSQL 15 and later only (table access method API, pg_stat_progress
# and PGXS features compressx uses): stop here with a clear message rather
# than with a compile error deep in a file.
ifneq ($(filter 9.% 10 11 12 13 14,$(MAJORVERSION)),)
$(error compressx needs PostgreSQL 15 or later; $(PG_CONFIG) is PostgreSQL $(VERSION))
endif

# Output plugins wrapping another plugin by its library name, built from one
# source (src/decoders/shim.c, src/logical/decoder.c): compressx_test_decoding
# in $libdir, and the opt-in shadows $libdir/compressx_decoders/{pgoutput,
# test_decoding} (doc/logical-replication.md).
DECODER_LIBS = decoders/compressx_test_decoding$(DLSUFFIX) \
	decoders/shadow/pgoutput$(DLSUFFIX) decoders/shadow/test_decoding$(DLSUFFIX)
EXTRA_CLEAN = decoders

all: $(DECODER_LIBS)

decoders/compressx_test_decoding$(DLSUFFIX): CX_INNER = test_decoding
decoders/shadow/pgoutput$(DLSUFFIX): CX_INNER = pgoutput
decoders/shadow/test_decoding$(DLSUFFIX): CX_INNER = test_decoding
$(DECODER_LIBS): src/decoders/shim.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CFLAGS_SL) $(CFLAGS_SL_MODULE) $(CPPFLAGS) \
		-DCX_INNER='"$(CX_INNER)"' -shared -o $@ $< $(LDFLAGS) $(LDFLAGS_SL)

install: install-decoders
install-decoders: $(DECODER_LIBS)
	$(MKDIR_P) '$(DESTDIR)$(pkglibdir)/compressx_decoders'
	$(INSTALL_SHLIB) decoders/compressx_test_decoding$(DLSUFFIX) '$(DESTDIR)$(pkglibdir)/'
	$(INSTALL_SHLIB) decoders/shadow/pgoutput$(DLSUFFIX) decoders/shadow/test_decoding$(DLSUFFIX) \
		'$(DESTDIR)$(pkglibdir)/compressx_decoders/'
uninstall: uninstall-decoders
uninstall-decoders:
	rm -f '$(DESTDIR)$(pkglibdir)/compressx_test_decoding$(DLSUFFIX)' \
		'$(DESTDIR)$(pkglibdir)/compressx_decoders/pgoutput$(DLSUFFIX)' \
		'$(DESTDIR)$(pkglibdir)/compressx_decoders/test_decoding$(DLSUFFIX)'
	-rmdir '$(DESTDIR)$(pkglibdir)/compressx_decoders'
.PHONY: install-decoders uninstall-decoders
