#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/deps.sh: a package counts as present only when it is installed for
# this machine's architecture (or "all"); a foreign-architecture copy alone
# (libcmocka-dev:arm64 on amd64) is missing. Stub dpkg, dpkg-query, apt-get
# and id on PATH: the real package database is never read or changed.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
stub="$TMP/bin"
mkdir -p "$stub"
cat >"$stub/dpkg" <<'S'
#!/bin/sh
[ "$1" = --print-architecture ] && echo amd64
S
# installed: libfoo-dev for arm64 only, libbar-dev native, docs-all arch "all"
cat >"$stub/dpkg-query" <<'S'
#!/bin/sh
for a; do p=$a; done
case $p in
libfoo-dev) echo "install ok installed arm64" ;;
libbar-dev) echo "install ok installed amd64" ;;
docs-all) echo "install ok installed all" ;;
*) exit 1 ;;
esac
S
cat >"$stub/apt-get" <<'S'
#!/bin/sh
echo "apt-get $*" >>"$APT_LOG"
S
cat >"$stub/id" <<'S'
#!/bin/sh
echo 1000
S
chmod +x "$stub"/*
export APT_LOG="$TMP/apt.log"

run env PATH="$stub:$PATH" sh "$top/scripts/deps.sh" libbar-dev docs-all
expect_rc 0 "native and arch-all packages count as installed"

run env PATH="$stub:$PATH" sh "$top/scripts/deps.sh" libbar-dev libfoo-dev
expect_rc 1 "a foreign-architecture copy alone is missing"
expect_err 'apt-get install -y libfoo-dev:amd64$' "the advice names the native architecture"
grep -q 'libbar-dev' "$ERR"
[ $? -ne 0 ]
_report $? "an installed native package is not listed as missing"

run env PATH="$stub:$PATH" sh "$top/scripts/deps.sh" libnone-dev
expect_rc 1 "an absent package is missing"
expect_err 'libnone-dev:amd64' "an absent package is named with the architecture"
done_testing
