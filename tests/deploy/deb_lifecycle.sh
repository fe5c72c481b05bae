#!/bin/bash
# The Debian package through its life with dpkg: build it (scripts/build-deb.sh,
# real dpkg-shlibdeps dependencies), install it, check what an operator gets
# (binaries, man pages, copyright, changelog, the xlb group and directories,
# a default config that attaches nothing), upgrade it to a newer version
# (an edited conffile is kept), purge it, and check nothing is left.
# Usage: deb_lifecycle.sh SOURCE_ROOT BUILD_DIR
set -u
src=$1 out=$2
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v dpkg-shlibdeps >/dev/null || { echo "SKIP: dpkg-dev missing"; exit 77; }
if dpkg -s xlb >/dev/null 2>&1; then echo "SKIP: an xlb package is installed here already"; exit 77; fi
getent group xlb >/dev/null && { echo "SKIP: a group xlb exists already"; exit 77; }
for d in /etc/xlb /var/lib/xlb; do [ -e $d ] && { echo "SKIP: $d exists already"; exit 77; }; done
tmp=$(mktemp -d /tmp/xlbt-deb.XXXXXX)
trap 'dpkg --purge xlb >/dev/null 2>&1; rm -rf "$tmp"' EXIT

deb=$("$src/scripts/build-deb.sh" "$out" 0.1.0) || fail "build 0.1.0"
deb2=$(cp "$deb" "$tmp/old.deb" && "$src/scripts/build-deb.sh" "$out" 0.1.1) || fail "build 0.1.1"
deb=$tmp/old.deb
dpkg-deb -f "$deb" Depends | tee "$tmp/deps"
grep -q "libbpf1" "$tmp/deps" && grep -q "libxdp1" "$tmp/deps" && grep -q "libc6 (>=" "$tmp/deps" ||
	fail "dependencies not from dpkg-shlibdeps"
dpkg-deb -c "$deb" | awk '{print $6}' > "$tmp/files"
for f in ./usr/sbin/xlbd ./usr/bin/lbctl ./usr/share/man/man8/xlbd.8.gz ./usr/share/man/man8/lbctl.8.gz \
	./usr/share/doc/xlb/copyright ./usr/share/doc/xlb/changelog.Debian.gz ./etc/xlb/xlbd.yaml \
	./lib/systemd/system/xlbd.service; do
	grep -qx "$f" "$tmp/files" || fail "package lacks $f"
done
[ "$(dpkg-deb -f "$deb" Version)" = 0.1.0 ] || fail "version"

dpkg -i "$deb" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "install"; }
cat "$tmp/install.log"
getent group xlb >/dev/null || fail "no xlb group"
[ -d /var/lib/xlb ] || fail "no /var/lib/xlb"
zcat /usr/share/man/man8/xlbd.8.gz | grep -q "api\\\\-max\\\\-clients" || fail "xlbd(8) lacks the settings"
/usr/sbin/xlbd --config /etc/xlb/xlbd.yaml -s "$tmp/s.sock" -d "$tmp/state" > "$tmp/run.log" 2>&1
rc=$?
cat "$tmp/run.log"
[ $rc = 78 ] && grep -q "nothing to attach" "$tmp/run.log" || fail "the default config attaches something (rc $rc)"
echo "# edited by the operator" >> /etc/xlb/xlbd.yaml

dpkg -i --force-confold "$deb2" > "$tmp/upgrade.log" 2>&1 || { cat "$tmp/upgrade.log"; fail "upgrade"; }
[ "$(dpkg-query -W -f '${Version}' xlb)" = 0.1.1 ] || fail "not upgraded"
grep -q "edited by the operator" /etc/xlb/xlbd.yaml || fail "the edited conffile was replaced"
mkdir -p /var/lib/xlb/extra && touch /var/lib/xlb/xlb.db

dpkg --purge xlb > "$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; fail "purge"; }
while read -r f; do
	p=${f#.}
	[ -z "$p" ] || [ -d "$p" ] || [ ! -e "$p" ] || fail "$p left after purge"
done < "$tmp/files"
for d in /etc/xlb /var/lib/xlb /run/xlb /sys/fs/bpf/xlb; do [ -e $d ] && fail "$d left after purge"; done
getent group xlb >/dev/null && fail "group xlb left after purge"
dpkg -s xlb >/dev/null 2>&1 && fail "package still known to dpkg"
echo "PASS: built (Depends from dpkg-shlibdeps), installed, upgraded 0.1.0 -> 0.1.1 keeping the edited conffile, purged without a trace"
