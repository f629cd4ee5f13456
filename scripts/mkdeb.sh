#!/bin/sh
# SPDX-License-Identifier: MIT
# make deb: BUILD/sparkops_VERSION_ARCH.deb from what BUILD holds, with
# dpkg-deb (no debhelper): /usr/bin/sparkops, the man page, the systemd unit
# (pointed at /usr/bin) and the Prometheus/Grafana files under
# /usr/share/sparkops. Usage: scripts/mkdeb.sh BUILD ARCH VERSION
set -e
B=$1 ARCH=$2 VERSION=$3
[ -n "$B" ] && [ -n "$ARCH" ] && [ -n "$VERSION" ] || { echo "usage: $0 BUILD ARCH VERSION" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
command -v dpkg-deb >/dev/null || { echo "mkdeb: dpkg-deb not found (install dpkg)" >&2; exit 1; }
for f in "$B/sparkops" "$B/sparkops.1"; do
	[ -f "$f" ] || { echo "mkdeb: $f missing (build it first)" >&2; exit 1; }
done
R="$B/deb-root"
rm -rf "$R"
install -d "$R/DEBIAN" "$R/usr/bin" "$R/usr/share/man/man1" "$R/lib/systemd/system" \
	"$R/usr/share/sparkops/prometheus" "$R/usr/share/sparkops/grafana" "$R/usr/share/doc/sparkops"
install -m 0755 "$B/sparkops" "$R/usr/bin/sparkops"
gzip -9n <"$B/sparkops.1" >"$R/usr/share/man/man1/sparkops.1.gz"
chmod 0644 "$R/usr/share/man/man1/sparkops.1.gz"
sed 's|/usr/local/bin/sparkops|/usr/bin/sparkops|; s|^#   install -m 0644 contrib/sparkops.service /etc/systemd/system/$|#   (installed by the sparkops package)|' \
	contrib/sparkops.service >"$R/lib/systemd/system/sparkops.service"
chmod 0644 "$R/lib/systemd/system/sparkops.service"
install -m 0644 contrib/prometheus/prometheus.yml contrib/prometheus/alerts.yml "$R/usr/share/sparkops/prometheus/"
install -m 0644 contrib/grafana/sparkops.json "$R/usr/share/sparkops/grafana/"
cat >"$R/usr/share/doc/sparkops/copyright" <<COPY
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: sparkops
Files: *
License: MIT
COPY
chmod 0644 "$R/usr/share/doc/sparkops/copyright"
size=$(du -sk --exclude=DEBIAN "$R" | cut -f1)
cat >"$R/DEBIAN/control" <<CTL
Package: sparkops
Version: $VERSION
Architecture: $ARCH
Maintainer: sparkops developers <sparkops@localhost>
Installed-Size: $size
Depends: libc6, libjansson4, libcrypt1, libncursesw6
Recommends: libmicrohttpd12
Section: admin
Priority: optional
Homepage: https://github.com/sparkops/sparkops
Description: memory and GPU health for NVIDIA DGX Spark (GB10)
 sparkops reads the unified memory pool, the budget left for a job, the GPU,
 thermals and pressure of a DGX Spark, plans fine-tuning runs against that
 budget, watches them, and serves the readings to Prometheus (sparkops serve,
 which needs libmicrohttpd12). The systemd unit sparkops.service and the
 Prometheus/Grafana files under /usr/share/sparkops come with it.
CTL
out="$B/sparkops_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$R" "$out" >/dev/null
rm -rf "$R"
echo "mkdeb: $out ($(du -k "$out" | cut -f1) KiB)"
