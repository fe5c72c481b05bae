#!/usr/bin/env bash
# Install every Debian 12 package xlb needs to build, test, benchmark and
# demo.  Idempotent: installs only what is missing, and runs apt-get update
# only when something is.
set -euo pipefail

packages=(
	# build
	build-essential meson ninja-build pkg-config clang llvm lld
	libbpf-dev libxdp-dev libelf-dev zlib1g-dev linux-libc-dev
	libsqlite3-dev libmicrohttpd-dev libsystemd-dev libjansson-dev libyaml-dev libcurl4-openssl-dev
	dpdk-dev
	# kernel tooling
	bpftool xdp-tools iproute2 ethtool
	# arm64 cross build and emulation
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu qemu-user
	# tests, demo and benchmarks
	nginx curl wrk tcpdump netsniff-ng python3 python3-scapy valgrind python3-matplotlib
	libclang-rt-14-dev systemd binutils strace
	# packaging and the real-systemd test (dpkg-shlibdeps, systemd-nspawn, a Debian root)
	dpkg-dev systemd-container debootstrap
	# fleet mode: BGP announcement and the replicated store (tests run them in netns)
	bird2 etcd-server etcd-client
	# the kernel's own verifier selftests (test_verifier tables), read at test time
	linux-source-6.1
)

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (BPF, netns and apt need it)" >&2
	exit 1
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#packages[@]} packages present"
	exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# nginx's, bird2's and etcd-server's packages start their daemons (:80, a
# BGP speaker, a member on :2379); xlb's tests start their own in netns.
for unit in nginx bird etcd; do
	if command -v systemctl >/dev/null && systemctl is-active -q $unit 2>/dev/null; then
		systemctl stop $unit || true
		systemctl disable -q $unit || true
	fi
done
echo "install-deps: done"
