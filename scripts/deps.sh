#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages the build needs, or say exactly how to.
# Usage: scripts/deps.sh PKG...
# a package counts only when installed for this machine's architecture (or
# "all"): libcmocka-dev:arm64 alone does not let the native build link
arch=$(dpkg --print-architecture 2>/dev/null || echo none)
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status} ${Architecture}\n' "$p" 2>/dev/null |
        grep -Eq "^install ok installed ($arch|all)\$" || missing="$missing $p:$arch"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "sparkops: missing packages:$missing (no apt-get here; install them with your package manager)" >&2
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    echo "sparkops: missing packages; run as root:" >&2
    echo "  apt-get install -y$missing" >&2
    exit 1
fi
echo "sparkops: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends$missing >/dev/null || {
    echo "sparkops: apt-get install$missing failed" >&2
    exit 1
}
