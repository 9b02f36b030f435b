# compressx: PGXS build.  `make && make install`; tests: test/run_tests.sh
MODULE_big = compressx
OBJS = \
	src/advise.o \
	src/am.o \
	src/am_index.o \
	src/am_write.o \
	src/codec.o \
	src/compressx.o \
	src/dict.o \
	src/format.o \
	src/frame.o \
	src/inspect.o \
	src/recompress.o \
	src/rewrite.o \
	src/settings.o \
	src/slot.o \
	src/verify.o

EXTENSION = compressx
DATA = sql/compressx--0.1.0.sql sql/compressx--0.1.0--0.2.0.sql
PGFILEDESC = "compressx - per-column compression for PostgreSQL"

SHLIB_LINK = -llz4 -lzstd
PG_CPPFLAGS = -I$(srcdir)/src

# pg_regress files live in sql/ and expected/ (see test/run_tests.sh)
REGRESS = codecs frame column_stats recompress am am_storage publication verify security advise dict update
REGRESS_OPTS = --load-extension=compressx

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
