#!/bin/sh
# SPDX-License-Identifier: MIT
# The aarch64 cross toolchain: gcc-aarch64-linux-gnu, the arm64 -dev
# libraries (Debian multiarch) and qemu-user to run what it builds.
# Installs what is missing when it can (root + apt-get + arm64 in the
# archive). Exit 0: everything is here. Exit 3: it cannot be had here; one
# line on stderr says why (the caller prints "skipped" and goes on).
# Any other failure (apt-get broke half way) exits 1.
PKGS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross libjansson-dev:arm64 libmicrohttpd-dev:arm64 libcmocka-dev:arm64 libcrypt-dev:arm64 libncurses-dev:arm64 libsystemd-dev:arm64"

have_qemu() {
	command -v qemu-aarch64 >/dev/null 2>&1 || command -v qemu-aarch64-static >/dev/null 2>&1
}
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
have_qemu || missing="$missing qemu-user"
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg >/dev/null 2>&1; then
	echo "no apt-get/dpkg here to install:$missing" >&2
	exit 3
fi
if [ "$(id -u)" != 0 ]; then
	echo "not root; to enable it run: dpkg --add-architecture arm64 && apt-get update && apt-get install$missing" >&2
	exit 3
fi
export DEBIAN_FRONTEND=noninteractive
added=""
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64 || { echo "dpkg --add-architecture arm64 failed" >&2; exit 3; }
	added=1
fi
echo "sparkops: installing the aarch64 toolchain:$missing" >&2
apt-get update -qq >/dev/null 2>&1 || { echo "apt-get update failed (no network or archive?)" >&2; exit 3; }
# arm64 must be in the archive for the :arm64 packages
if ! apt-cache show libjansson-dev:arm64 >/dev/null 2>&1; then
	[ -n "$added" ] && dpkg --remove-architecture arm64 2>/dev/null
	echo "the package archive has no arm64 packages (libjansson-dev:arm64 not found)" >&2
	exit 3
fi
apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
	echo "sparkops: apt-get install$missing failed" >&2
	exit 1
}
exit 0
