#!/usr/bin/env bash
# Room after recompress_online against the offline rewrite (issue 28, item
# A8; not part of the pass/fail suite).
#
#   bash test/bench/online_space.sh
#
# Two tables, each built once into a template database (heap, default
# compression pglz, VACUUM (FREEZE, ANALYZE)); every measurement runs on a
# fresh copy of it (CREATE DATABASE .. STRATEGY FILE_COPY):
#   docs  PostgreSQL's HTML documentation (postgresql-doc-NN), three copies
#         of each page, one page per row (name primary key, body): the
#         report's table (3 507 pages of about 13 kB)
#   big   JSON documents of 2-6 kB made of the same documentation (as
#         test/bench/online_bench.sh builds them: id primary key, title, n,
#         updated, body), loaded until heap + TOAST + index reach
#         CX_SPACE_MB (default 1024)
# No other client, autovacuum off (the quiet case).  For each table, side
# by side:
#   online    CALL compressx.recompress_online('docs', 'zstd',
#             access_method => 'compressx'), then a plain VACUUM
#   offline   ALTER TABLE docs SET ACCESS METHOD compressx (zstd, the
#             default codec), and VACUUM FULL of the online result (the
#             same settings, rewritten offline)
# Printed: wall time of each statement, the sizes of the table (heap), its
# TOAST relation and its indexes before, after the procedure, after VACUUM,
# after each offline rewrite, and heap + TOAST after VACUUM as a multiple of
# the offline rewrite's; and the time the procedure's compaction took
# (its DEBUG1 lines).  Writes bench-results/online/space-NN.md (NN: the
# major).
#
#   CX_BENCH_PGBIN=DIR  the PostgreSQL installation whose programs are in DIR
#                       (default Debian's); compressx is built from a copy
#                       of the tree and installed there
#   CX_BENCH_PORT       port of the throwaway cluster (55480)
#   CX_SPACE_MB         size of big (1024); 0 leaves big out
set -eu
. "$(dirname "$0")/../lib.sh"

PORT=${CX_BENCH_PORT:-55480}
MB=${CX_SPACE_MB:-1024}

cx_use_pg "${CX_BENCH_PGBIN:-/usr/lib/postgresql/$PG_MAJOR/bin}"
major=$("$PGBIN/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
docdir=/usr/share/doc/postgresql-doc-$major/html
[ -d "$docdir" ] || docdir=/usr/share/doc/postgresql-doc-$PG_MAJOR/html
out="$cx_root/bench-results/online"
mkdir -p "$out"

cx_log "building and installing compressx into $("$PGBIN/pg_config" --pkglibdir)"
cx_build_install_copy

work=$(cx_workdir online-space)
cx_start_cluster "$work" "$PORT" "shared_buffers = 512MB
max_wal_size = 16GB
checkpoint_timeout = 30min
maintenance_work_mem = 256MB
autovacuum = off
jit = off"
trap 'cx_stop_cluster "$work"; rm -rf "$work"' EXIT
echo "server: $("$PGBIN/postgres" --version)"

psql_d() { local db=$1; shift; cx_as_user psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
val() { local db=$1; shift; cx_as_user psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$*"; }
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc | awk '{printf "%.2f", $1}'; }

# sizes of docs in MB: heap, TOAST, indexes, heap + TOAST (pages of 8 kB: exact)
sizes_sql="SELECT format('%s|%s|%s|%s', round(pg_relation_size('docs') / 1048576.0, 2),
                   round(coalesce(pg_relation_size(nullif(reltoastrelid, 0)), 0) / 1048576.0, 2),
                   round(pg_indexes_size('docs') / 1048576.0, 2),
                   round((pg_relation_size('docs') + coalesce(pg_relation_size(nullif(reltoastrelid, 0)), 0)) / 1048576.0, 2))
            FROM pg_class WHERE oid = 'docs'::regclass"
methods_sql="SELECT methods FROM compressx.column_stats('docs') WHERE column_name = 'body'"

report=$work/report.md
{
    echo "# recompress_online: room after the procedure against the offline rewrite"
    echo
    echo "$("$PGBIN/postgres" --version); $(nproc) cores; quiet cluster (no client, autovacuum off);"
    echo "test/bench/online_space.sh, $(date -u +%Y-%m-%d)."
    echo "Sizes in MB (heap | TOAST | indexes | heap + TOAST); times in seconds."
    echo
    echo "| table | step | time | heap | TOAST | indexes | heap + TOAST | vs offline |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|"
} >"$report"

# row TABLE STEP TIME SIZES [RATIO]
row() {
    local IFS='|'
    # shellcheck disable=SC2086
    set -- "$1" "$2" "$3" $4 "${5:-}"
    echo "| $1 | $2 | $3 | $4 | $5 | $6 | $7 | $8 |" >>"$report"
}

# measure TABLE: the online and offline runs on copies of tpl_TABLE
measure() {
    local t=$1 t0 t1 before after vac full alter online_s vac_s full_s alter_s log ratio_alter ratio_full
    psql_d postgres -c "CREATE DATABASE on_$t TEMPLATE tpl_$t STRATEGY FILE_COPY"
    psql_d postgres -c "CREATE DATABASE off_$t TEMPLATE tpl_$t STRATEGY FILE_COPY"
    before=$(val "on_$t" "$sizes_sql")

    cx_log "$t: recompress_online"
    log=$work/online_$t.log
    t0=$(now)
    cx_as_user psql -X -q -v ON_ERROR_STOP=1 -d "on_$t" >"$log" 2>&1 <<'SQL'
SET client_min_messages = debug1;
CALL compressx.recompress_online('docs', 'zstd', access_method => 'compressx');
SQL
    t1=$(now); online_s=$(secs "$t0" "$t1")
    after=$(val "on_$t" "$sizes_sql")
    t0=$(now); val "on_$t" "VACUUM docs" >/dev/null; t1=$(now); vac_s=$(secs "$t0" "$t1")
    vac=$(val "on_$t" "$sizes_sql")
    echo "$t online: body $(val "on_$t" "$methods_sql")"
    grep -E 'compaction round|rows rewritten' "$log" | sed -E 's/^.*(DEBUG|NOTICE): +//' | sed "s/^/$t: /"

    cx_log "$t: offline rewrites"
    t0=$(now); val "on_$t" "VACUUM FULL docs" >/dev/null; t1=$(now); full_s=$(secs "$t0" "$t1")
    full=$(val "on_$t" "$sizes_sql")
    t0=$(now)
    psql_d "off_$t" -c "SET compressx.default_codec = zstd" -c "ALTER TABLE docs SET ACCESS METHOD compressx"
    t1=$(now); alter_s=$(secs "$t0" "$t1")
    alter=$(val "off_$t" "$sizes_sql")
    echo "$t offline (ALTER TABLE): body $(val "off_$t" "$methods_sql")"

    ratio_alter=$(echo "${vac##*|} / ${alter##*|}" | bc -l | awk '{printf "%.3f", $1}')
    ratio_full=$(echo "${vac##*|} / ${full##*|}" | bc -l | awk '{printf "%.3f", $1}')
    row "$t" "before (heap, pglz)" "" "$before"
    row "$t" "online: recompress_online" "$online_s" "$after"
    row "$t" "online: then VACUUM" "$vac_s" "$vac" "$ratio_alter x ALTER, $ratio_full x VACUUM FULL"
    row "$t" "offline: ALTER TABLE .. SET ACCESS METHOD compressx" "$alter_s" "$alter"
    row "$t" "offline: VACUUM FULL of the online result" "$full_s" "$full"
    {
        echo
        echo "$t, the procedure's own lines (compaction: DEBUG1):"
        echo
        grep -E 'compaction round|rows rewritten|Stored bytes' "$log" | sed -E 's/^.*(DEBUG|NOTICE|DETAIL): +/    /'
        echo
    } >>"$work/notes.md"
    psql_d postgres -c "DROP DATABASE on_$t" -c "DROP DATABASE off_$t"
}

cx_log "building docs (the HTML documentation, three copies)"
psql_d postgres -c "CREATE DATABASE tpl_docs"
psql_d tpl_docs -v docdir="$docdir" <<'SQL'
CREATE EXTENSION compressx;
CREATE TABLE docs (name text PRIMARY KEY, body text);
INSERT INTO docs
SELECT c || '/' || f, pg_read_file(:'docdir' || '/' || f)
FROM pg_ls_dir(:'docdir') f, generate_series(1, 3) c
WHERE f LIKE '%.html'
ORDER BY c, f;
VACUUM (FREEZE, ANALYZE);
SQL
echo "docs: $(val tpl_docs "SELECT count(*) || ' rows, ' || round(sum(octet_length(body)) / 1048576.0) || ' MB of text' FROM docs")"
measure docs

if [ "$MB" -gt 0 ]; then
    cx_log "building big (JSON documents, $MB MB)"
    tb=$(now)
    psql_d postgres -c "CREATE DATABASE tpl_big"
    psql_d tpl_big -v docdir="$docdir" -v mb="$MB" <<'SQL'
CREATE EXTENSION compressx;
CREATE TEMP TABLE pages AS
SELECT f, coalesce(substring(h FROM '<title>([^<]*)</title>'), f) AS title,
       regexp_replace(regexp_replace(regexp_replace(h, '<[^>]*>', ' ', 'g'), '&[a-z]+;', ' ', 'g'),
                      '\s+', ' ', 'g') AS txt
FROM (SELECT f, pg_read_file(:'docdir' || '/' || f) AS h FROM pg_ls_dir(:'docdir') f
      WHERE f LIKE '%.html') s;
CREATE TABLE pieces (k int PRIMARY KEY, title text, piece text);
INSERT INTO pieces
SELECT row_number() OVER (ORDER BY f, i), title, substr(txt, i * 1000 + 1, 1000)
FROM pages, generate_series(0, (length(txt) - 1) / 1000) i;
CREATE FUNCTION doc(g bigint, OUT title text, OUT body text) LANGUAGE sql STABLE AS $$
    WITH p AS (SELECT 1 + (hashint8(g) & 2147483647) % ((SELECT max(k) FROM pieces) - 6) AS s,
                      2 + (hashint8(g * 7 + 1) & 2147483647) % 5 AS m)
    SELECT (SELECT pc.title FROM pieces pc WHERE pc.k = p.s),
           json_build_object(
               'id', g,
               'title', (SELECT pc.title FROM pieces pc WHERE pc.k = p.s),
               'author', (ARRAY['ada', 'bruno', 'chen', 'dilnoza', 'emeka', 'frida', 'goran', 'hana'])[1 + g % 8],
               'tags', json_build_array('postgresql', 'docs', 'v' || (10 + g % 6), (ARRAY['sql', 'admin', 'internals', 'client'])[1 + g % 4]),
               'created', timestamptz '2020-01-01 00:00:00+00' + g * interval '37 seconds',
               'version', 1 + g % 9,
               'lang', 'en',
               'body', (SELECT string_agg(pc.piece, '' ORDER BY pc.k) FROM pieces pc
                        WHERE pc.k >= p.s AND pc.k < p.s + p.m))::text
    FROM p
$$;
CREATE TABLE docs (id bigint PRIMARY KEY, title text, n integer NOT NULL DEFAULT 0,
                   updated timestamptz NOT NULL DEFAULT now(), body text);
SET synchronous_commit = off;
SET bench.mb = :'mb';
DO $$
DECLARE g bigint := 0;
BEGIN
    WHILE pg_total_relation_size('docs') < current_setting('bench.mb')::bigint * 1048576 LOOP
        INSERT INTO docs (id, title, updated, body)
        SELECT i, d.title, timestamptz '2024-01-01 00:00:00+00' + i * interval '11 seconds', d.body
        FROM generate_series(g + 1, g + 10000) i, doc(i) d;
        g := g + 10000;
    END LOOP;
END $$;
DROP FUNCTION doc(bigint);
DROP TABLE pieces;
VACUUM (FREEZE, ANALYZE);
SQL
    echo "big: $(val tpl_big "SELECT count(*) || ' rows, ' || round(sum(octet_length(body)) / 1048576.0) || ' MB of text, ' || round(pg_total_relation_size('docs') / 1048576.0) || ' MB total' FROM docs"), built in $(secs "$tb" "$(now)") s"
    measure big
fi

[ -f "$work/notes.md" ] && cat "$work/notes.md" >>"$report"
cp "$report" "$out/space-$major.md"
cat "$report"
echo "written: bench-results/online/space-$major.md"
