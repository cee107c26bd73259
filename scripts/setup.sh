#!/usr/bin/env bash
# Installs what the build, tests and benchmarks need that a fresh machine lacks:
# Debian's real libzmq (the peer and baseline we compare against), pkg-config, and
# cppzmq's headers (the C++ binding conformance programs).
# Idempotent and quick when everything is already there.
set -euo pipefail
need=()
for pkg in libzmq3-dev pkg-config cppzmq-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo (Rust) is required" >&2; exit 1; }
