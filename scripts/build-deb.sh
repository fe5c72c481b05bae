#!/usr/bin/env bash
# Build the Debian package of xlb: a release build with Debian's paths in
# BUILD_DIR (default build-deb/, never the source tree), `meson install`
# into a staging root there, the runtime dependencies as dpkg-shlibdeps
# finds them in the binaries, copyright, changelog, conffiles, md5sums and
# the maintainer scripts; then dpkg-deb.  Prints the .deb's path.
#
# usage: scripts/build-deb.sh [BUILD_DIR [VERSION]]
#
# The maintainer scripts: postinst creates the xlb group and the directories
# (sysusers, tmpfiles) and, on an upgrade, restarts a running xlbd (a
# hitless restart: the balancer stays attached); a fresh install enables
# nothing it cannot run: the default config attaches nothing until it names
# an interface.  prerm on remove stops xlbd and detaches the balancer.
# postrm on purge removes the group, /var/lib/xlb, /run/xlb and the pins.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$src/build-deb}" && cd "${1:-$src/build-deb}" && pwd)
case "$out/" in "$src/"build*/) ;; "$src/"*) echo "build-deb.sh: $out is in the source tree" >&2; exit 2 ;; esac

if [ ! -f "$out/build.ninja" ]; then
	meson setup "$out" "$src" --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
		--buildtype=release -Db_ndebug=false >/dev/null
fi
ninja -C "$out" -j2 >/dev/null
version=${2:-$(meson introspect "$out" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')}
arch=$(dpkg --print-architecture)
work=$out/pkg
stage=$work/root
rm -rf "$work"
mkdir -p "$work/debian" "$stage/DEBIAN"
DESTDIR="$stage" meson install -C "$out" --no-rebuild --quiet

# Documentation: copyright (DEP-5) and a changelog, compressed as policy asks.
doc=$stage/usr/share/doc/xlb
mkdir -p "$doc"
cat > "$doc/copyright" <<'TXT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: xlb
Source: the xlb repository

Files: *
Copyright: the xlb developers
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a
 copy of this software and associated documentation files (the "Software"),
 to deal in the Software without restriction, including without limitation
 the rights to use, copy, modify, merge, publish, distribute, sublicense,
 and/or sell copies of the Software, and to permit persons to whom the
 Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.  IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
 FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 DEALINGS IN THE SOFTWARE.
TXT
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(git -C "$src" log -1 --format=%cD 2>/dev/null || date -R)
printf 'xlb (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- xlb developers <xlb@localhost>  %s\n' \
	"$version" "$commit" "$date" | gzip -9n > "$doc/changelog.Debian.gz"
find "$stage/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +

# Runtime dependencies: what dpkg-shlibdeps finds in the binaries, nothing by hand.
printf 'Source: xlb\n\nPackage: xlb\nArchitecture: any\n' > "$work/debian/control"
bins=$(cd "$stage" && find usr/bin usr/sbin -type f -perm -u+x | sed 's|^|-eroot/|')
deps=$(cd "$work" && dpkg-shlibdeps -O $bins | sed -n 's/^shlibs:Depends=//p')
[ -n "$deps" ] || { echo "build-deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CTL
Package: xlb
Version: $version
Architecture: $arch
Maintainer: xlb developers <xlb@localhost>
Installed-Size: $size
Section: net
Priority: optional
Depends: $deps
Recommends: xdp-tools, bpftool
Description: L4 load balancer on XDP with its own eBPF verifier and JITs
 xlbd attaches an XDP balancer (Maglev consistent hashing, per-CPU connection
 table, IPIP/GUE encapsulation for direct server return) and manages it from
 a durable desired state; lbctl is its operator CLI; xlb-decap prepares the
 reals; xbpf is the eBPF developer tool.
CTL
# Every file installed under /etc is a conffile (xlbd.yaml, xlb-dpdk.conf).
(cd "$stage" && find etc -type f | sort | sed 's|^|/|') > "$stage/DEBIAN/conffiles"

cat > "$stage/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
	systemd-sysusers xlb.conf >/dev/null 2>&1 || getent group xlb >/dev/null || groupadd --system xlb
	systemd-tmpfiles --create xlb.conf >/dev/null 2>&1 || true
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null 2>&1 || true
		if [ -n "$2" ]; then
			# An upgrade: restart a running xlbd on the new binaries (hitless).
			systemctl try-restart xlbd.service >/dev/null 2>&1 || true
		elif grep -qE '^[[:space:]]*interfaces:' /etc/xlb/xlbd.yaml 2>/dev/null; then
			systemctl enable --now xlbd.service >/dev/null 2>&1 || true
		else
			echo "xlb: edit /etc/xlb/xlbd.yaml (interfaces:), then: systemctl enable --now xlbd"
		fi
	fi
fi
SH
cat > "$stage/DEBIAN/prerm" <<'SH'
#!/bin/sh
set -e
# An upgrade keeps the balancer running (postinst restarts xlbd on the new
# binaries); a removal stops xlbd and detaches the balancer.
if [ "$1" = remove ]; then
	if [ -d /run/systemd/system ]; then
		systemctl disable --now xlbd.service >/dev/null 2>&1 || true
		systemctl disable --now xlb-dpdk.service >/dev/null 2>&1 || true
	fi
	/usr/sbin/xlbd --cleanup --config /etc/xlb/xlbd.yaml >/dev/null 2>&1 || true
fi
SH
cat > "$stage/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
if [ "$1" = purge ]; then
	rm -rf /var/lib/xlb /run/xlb /run/xlb-dpdk /sys/fs/bpf/xlb
	rmdir /etc/xlb 2>/dev/null || true
	if getent group xlb >/dev/null; then
		groupdel xlb >/dev/null 2>&1 || true
	fi
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
SH
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
	xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
deb=$out/xlb_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
