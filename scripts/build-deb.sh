#!/usr/bin/env bash
# Build a Debian package of xlb from this tree: configure a release build
# with Debian's paths, `meson install` it into a staging DESTDIR, add the
# control files and run dpkg-deb.  Output: build-deb/xlb_<version>_<arch>.deb
set -euo pipefail
cd "$(dirname "$0")/.."

out=build-deb
stage=$out/stage
if [ ! -f $out/build.ninja ]; then
	meson setup $out --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
		--buildtype=release -Db_ndebug=false >/dev/null
fi
ninja -C $out -j2 >/dev/null
rm -rf "$stage"
DESTDIR="$PWD/$stage" meson install -C $out --no-rebuild --quiet

version=$(meson introspect $out --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)
# Runtime libraries, as dpkg-shlibdeps finds them in the binaries.
mkdir -p "$stage/DEBIAN" debian-tmp
cat > debian-tmp/control <<CTL
Source: xlb
Package: xlb
CTL
deps=$(cd "$stage" && dpkg-shlibdeps -O --ignore-missing-info -l../../ \
	-e usr/sbin/xlbd -e usr/bin/lbctl -e usr/sbin/xlb-decap \
	-T../../debian-tmp/substvars 2>/dev/null | sed -n 's/^shlibs:Depends=//p' || true)
rm -rf debian-tmp
[ -n "$deps" ] || deps="libbpf1, libxdp1, libsqlite3-0, libmicrohttpd12, libsystemd0, libjansson4, libyaml-0-2, libc6"
cat > "$stage/DEBIAN/control" <<CTL
Package: xlb
Version: $version
Architecture: $arch
Maintainer: xlb developers <xlb@localhost>
Section: net
Priority: optional
Depends: $deps
Recommends: xdp-tools, bpftool
Description: L4 load balancer on XDP with its own eBPF verifier and JITs
 xlbd attaches an XDP balancer (Maglev consistent hashing, per-CPU connection
 table, IPIP/GUE encapsulation for direct server return) and manages it from
 a durable desired state; lbctl is its operator CLI; xlb-decap prepares the
 reals.
CTL
echo /etc/xlb/xlbd.yaml > "$stage/DEBIAN/conffiles"
cat > "$stage/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
	systemd-sysusers xlb.conf >/dev/null 2>&1 || true
	systemd-tmpfiles --create xlb.conf >/dev/null 2>&1 || true
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null 2>&1 || true
	fi
fi
SH
cat > "$stage/DEBIAN/prerm" <<'SH'
#!/bin/sh
set -e
# Stopping xlbd leaves the balancer attached (hitless); removal detaches it.
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	systemctl stop xlbd.service >/dev/null 2>&1 || true
	/usr/sbin/xlbd --cleanup >/dev/null 2>&1 || true
fi
SH
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm"
deb=$out/xlb_${version}_${arch}.deb
dpkg-deb --root-owner-group --build "$stage" "$deb" >/dev/null
echo "$deb"
dpkg-deb --contents "$deb" | awk '{print $6}' | grep -E 'xlbd|lbctl|xlb-decap|\.bpf\.o|xlb\.conf|service' || true
