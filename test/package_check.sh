#!/usr/bin/env bash
# The ways a DBA installs compressx other than `make install`, checked on
# Debian's PostgreSQL 15:
#   1. the version is the same in compressx.control, META.json and
#      debian/changelog;
#   2. the release archive (`git archive HEAD`, what PGXN gets) builds with
#      `make && make install` (into a DESTDIR);
#   3. META.json passes the PGXN meta spec validator (pgxn_meta, built once
#      from crates.io into the cache);
#   4. the PGXN client installs the archive's zip into a server with no
#      compressx files (`pgxn install`), and `pgxn uninstall` removes every
#      file it put there;
#   5. the Debian package postgresql-15-compressx builds from the archive
#      with `dpkg-buildpackage -us -uc -b` (debian/), installs with
#      `apt-get install ./postgresql-15-compressx_*.deb` into that server,
#      passes its own tests (debian/tests/installcheck: the regression files
#      against the installed package, on a cluster pg_virtualenv makes), and
#      `apt-get purge` leaves no file behind.
# The compressx files of Debian's 15 (installed by the suite) are removed
# first and installed again at the end (built from the archive's copy of
# this commit), whatever the outcome, so that the units after this one find
# them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

PG_MAJOR=15
pgconfig=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
cache=${CX_COMPILE_CACHE:-/opt/compressx-cache}
fail=0
step() { cx_log "$*"; }
bad() { echo "FAILED: $*"; fail=1; }

# What building a package needs (postgresql-server-dev-all brings
# pg_buildext and pg_virtualenv's postgresql-common).
need=""
for p in debhelper dpkg-dev postgresql-server-dev-all postgresql-$PG_MAJOR liblz4-dev libzstd-dev zip unzip python3-venv; do
    [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == *"ok installed"* ]] || need="$need $p"
done
if [ -n "$need" ]; then
    step "installing:$need"
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need >/dev/null || exit 1
fi

work=$(cx_workdir package)
[ -z "${CX_KEEP_WORKDIR:-}" ] && trap 'rm -rf "$work"' EXIT

# compressx files of Debian's 15, outside any package's own files
cx_files() {
    find "$($pgconfig --pkglibdir)" "$($pgconfig --sharedir)/extension" \
        \( -name '*compressx*' -o -path '*compressx*' \) 2>/dev/null | sort
}

# 1. one version everywhere
ctl_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$cx_root/compressx.control")
meta_version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$cx_root/META.json")
meta_ext_version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["provides"]["compressx"]["version"])' "$cx_root/META.json")
deb_version=$(sed -n '1s/^compressx (\([^-)]*\).*/\1/p' "$cx_root/debian/changelog")
step "versions: control $ctl_version, META.json $meta_version (provides $meta_ext_version), debian/changelog $deb_version"
if [ "$ctl_version" != "$meta_version" ] || [ "$ctl_version" != "$meta_ext_version" ] || [ "$ctl_version" != "$deb_version" ]; then
    bad "the versions differ"
fi
v=$ctl_version

# 2. the release archive builds (what is committed: a fresh clone in CI)
step "release archive: git archive HEAD"
git -C "$cx_root" archive --format=tar --prefix="compressx-$v/" HEAD | tar -x -C "$work"
git -C "$cx_root" archive --format=zip --prefix="compressx-$v/" -o "$work/compressx-$v.zip" HEAD
src=$work/compressx-$v
for f in vendor bench-results; do
    [ -e "$src/$f" ] && bad "the release archive holds $f/ (export-ignore in .gitattributes)"
done
for f in META.json Makefile compressx.control debian/control README.md; do
    [ -e "$src/$f" ] || bad "the release archive lacks $f"
done
chown -R "$cx_user" "$work"
step "release archive: make && make install DESTDIR=..."
if cx_as_user make -C "$src" -s PG_CONFIG="$pgconfig" >"$work/make.log" 2>&1 &&
   cx_as_user make -C "$src" -s PG_CONFIG="$pgconfig" install DESTDIR="$work/destdir" >>"$work/make.log" 2>&1; then
    n=$(find "$work/destdir" -type f | wc -l)
    step "release archive: $n files installed into the DESTDIR"
    [ -e "$work/destdir$($pgconfig --pkglibdir)/compressx.so" ] || bad "no compressx.so in the DESTDIR"
else
    tail -20 "$work/make.log"; bad "the release archive does not build"
fi
cx_as_user make -C "$src" -s PG_CONFIG="$pgconfig" clean >/dev/null 2>&1

# 3. META.json against the PGXN meta spec
validator=$cache/pgxn_meta/bin/pgxn_meta
if [ ! -x "$validator" ]; then
    step "building the PGXN meta validator (pgxn_meta 0.7.0, crates.io) into $cache/pgxn_meta"
    cargo install pgxn_meta --version 0.7.0 --locked --root "$cache/pgxn_meta" >"$work/cargo.log" 2>&1 ||
        { tail -20 "$work/cargo.log"; bad "could not build pgxn_meta"; }
fi
if [ -x "$validator" ]; then
    if out=$("$validator" "$src/META.json" 2>&1); then
        step "META.json: $out"
    else
        echo "$out"; bad "META.json does not pass the PGXN meta spec"
    fi
    # the validator itself: a META.json without a license must fail
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); del m["license"]; json.dump(m, open(sys.argv[2],"w"))' \
        "$src/META.json" "$work/META-nolicense.json"
    "$validator" "$work/META-nolicense.json" >/dev/null 2>&1 && bad "the validator accepted a META.json without a license"
fi

# remove what the suite installed into Debian's 15
had_files=$(cx_files)
step "removing compressx's files from Debian's $PG_MAJOR ($(echo "$had_files" | grep -c . || true) files)"
cx_sudo make -C "$src" -s PG_CONFIG="$pgconfig" uninstall >/dev/null 2>&1
left=$(cx_files)
[ -n "$left" ] && { echo "$left"; bad "files left after make uninstall"; }

restore() {
    if [ -n "$had_files" ]; then
        step "installing compressx (this commit) into Debian's $PG_MAJOR again"
        cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "postgresql-$PG_MAJOR-compressx" >/dev/null 2>&1
        # from the archive's copy: nothing is built in the checkout, which
        # the 19 lane copies meanwhile
        cx_as_user make -C "$src" -s PG_CONFIG="$pgconfig" >/dev/null && cx_sudo make -C "$src" -s PG_CONFIG="$pgconfig" install >/dev/null
    fi
}

# 4. PGXN's client
venv=$cache/pgxnclient-venv
if [ ! -x "$venv/bin/pgxn" ]; then
    step "installing pgxnclient 1.3.2 (PyPI) into $venv"
    python3 -m venv "$venv" >/dev/null && "$venv/bin/pip" install -q pgxnclient==1.3.2 >"$work/pip.log" 2>&1 ||
        { tail -5 "$work/pip.log"; bad "could not install pgxnclient"; }
fi
if [ -x "$venv/bin/pgxn" ]; then
    step "pgxn install ./compressx-$v.zip"
    if "$venv/bin/pgxn" install --pg_config "$pgconfig" "$work/compressx-$v.zip" >"$work/pgxn.log" 2>&1; then
        for f in compressx.so compressx_test_decoding.so compressx_decoders/pgoutput.so; do
            [ -e "$($pgconfig --pkglibdir)/$f" ] || bad "pgxn install did not install $f"
        done
        [ -e "$($pgconfig --sharedir)/extension/compressx.control" ] || bad "pgxn install did not install compressx.control"
        step "pgxn install: $(cx_files | wc -l) files"
        "$venv/bin/pgxn" uninstall --pg_config "$pgconfig" "$work/compressx-$v.zip" >>"$work/pgxn.log" 2>&1 ||
            bad "pgxn uninstall failed"
        left=$(cx_files)
        [ -n "$left" ] && { echo "$left"; bad "files left after pgxn uninstall"; }
    else
        tail -20 "$work/pgxn.log"; bad "pgxn install failed"
    fi
fi

# 5. the Debian package
step "dpkg-buildpackage -us -uc -b (its build-time tests skipped: the package's own tests run below, installed)"
if (cd "$src" && cx_as_user env DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b -Pnocheck) >"$work/build.log" 2>&1; then
    deb=$(ls "$work"/postgresql-$PG_MAJOR-compressx_"$v"-*_*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] || bad "no postgresql-$PG_MAJOR-compressx package was built"
else
    tail -30 "$work/build.log"; bad "dpkg-buildpackage failed"; deb=""
fi
if [ -n "$deb" ]; then
    step "package: $(basename "$deb"), depends: $(dpkg-deb -f "$deb" Depends)"
    dpkg-deb -c "$deb" | awk '{print $6}' | sed 's/^\.//' >"$work/contents"
    for f in "$($pgconfig --pkglibdir)/compressx.so" "$($pgconfig --pkglibdir)/compressx_decoders/pgoutput.so" \
             "$($pgconfig --sharedir)/extension/compressx--0.4.0--0.5.0.sql" \
             "/usr/share/doc/postgresql-$PG_MAJOR-compressx/README.md.gz"; do
        grep -qx "$f" "$work/contents" || bad "the package lacks $f"
    done
    step "apt-get install ./$(basename "$deb")"
    if cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$work/apt.log" 2>&1; then
        dpkg -L "postgresql-$PG_MAJOR-compressx" | sort >"$work/files"
        step "installed: $(dpkg-query -W -f='${Package} ${Version} ${Status}' "postgresql-$PG_MAJOR-compressx")"
        step "the package's tests: debian/tests/installcheck"
        if (cd "$src" && debian/tests/installcheck) >"$work/installcheck.log" 2>&1; then
            grep -E "tests passed|All [0-9]+ tests" "$work/installcheck.log" | sed 's/^/    /'
        else
            tail -40 "$work/installcheck.log"; bad "the package's tests failed"
        fi
        step "apt-get purge postgresql-$PG_MAJOR-compressx"
        cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "postgresql-$PG_MAJOR-compressx" >>"$work/apt.log" 2>&1 ||
            bad "apt-get purge failed"
        [[ "$(dpkg-query -W -f='${Status}' "postgresql-$PG_MAJOR-compressx" 2>/dev/null)" == *" installed"* ]] &&
            bad "the package is still installed"
        kept=0
        while read -r f; do
            if [ -f "$f" ] || [ -L "$f" ]; then echo "left behind: $f"; kept=$((kept + 1)); fi
        done <"$work/files"
        left=$(cx_files; find /usr/share/doc -maxdepth 1 -name "postgresql-$PG_MAJOR-compressx" 2>/dev/null)
        [ -n "$left" ] && { echo "$left"; kept=$((kept + 1)); }
        [ "$kept" -eq 0 ] && step "purged: none of the package's $(grep -c . "$work/files") paths left" ||
            bad "apt-get purge left files behind"
    else
        tail -20 "$work/apt.log"; bad "apt-get install of the package failed"
    fi
fi

restore
[ "$fail" -eq 0 ] && step "package check passed" || step "package check FAILED"
exit "$fail"
