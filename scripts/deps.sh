#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages the build needs, or say exactly how to.
# Usage: scripts/deps.sh PKG...
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
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
