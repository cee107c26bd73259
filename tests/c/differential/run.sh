#!/usr/bin/env bash
# The C API side by side with Debian's libzmq: each probe here (*.c) is built against
# Debian's libzmq and against the drop-in in DIST_PREFIX, both builds run in a scratch
# directory, and their outputs must be equal line for line, except the lines known.txt
# lists (each with its reason). Prints "differential: N probes equal, M differ".
set -euo pipefail
prefix=${1:?usage: run.sh DIST_PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
ref=/usr/lib/x86_64-linux-gnu/libzmq.so.5
if [ ! -e "$ref" ]; then
  echo "differential: Debian's libzmq ($ref) is missing: run make setup" >&2
  echo "differential: 0 probes equal, 1 differ"; exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
patterns=$(grep -v '^#' "$here/known.txt" | grep -v '^$' | sed 's/ -- .*//')
equal=0; differ=0
for src in "$here"/*.c; do
  name=$(basename "$src" .c)
  cc=(gcc -O1 -g -Wall -Wextra -Werror -std=c11 -D_GNU_SOURCE "$src")
  "${cc[@]}" -o "$work/$name.libzmq" -lzmq
  "${cc[@]}" -o "$work/$name.ferromq" -I"$prefix/include" -L"$prefix/lib" -lzmq -Wl,-rpath,"$prefix/lib"
  ran=1
  for lib in libzmq ferromq; do
    mkdir -p "$work/run-$lib"
    if ! (cd "$work/run-$lib" && timeout 120 "../$name.$lib" > "../$name.$lib.out"); then
      echo "differential: $name on $lib exited with an error or ran past 120 s" >&2
      ran=0
    fi
  done
  if [ "$ran" = 0 ]; then differ=$((differ+1)); continue; fi
  # Drop the known lines from both sides, then compare.
  filter() {
    local f=$1 out=$2
    cp "$f" "$out"
    while IFS= read -r p; do
      [ -n "$p" ] && { grep -Ev -- "$p" "$out" > "$out.tmp" || true; mv "$out.tmp" "$out"; }
    done <<<"$patterns"
  }
  filter "$work/$name.libzmq.out" "$work/$name.libzmq.kept"
  filter "$work/$name.ferromq.out" "$work/$name.ferromq.kept"
  if diff "$work/$name.libzmq.kept" "$work/$name.ferromq.kept" > "$work/$name.diff"; then
    equal=$((equal+1))
  else
    echo "differential: $name differs from libzmq (< libzmq, > ferromq):" >&2
    head -40 "$work/$name.diff" >&2
    differ=$((differ+1))
  fi
  cat "$work/$name.libzmq.out" >> "$work/all.libzmq"
  cat "$work/$name.ferromq.out" >> "$work/all.ferromq"
done
# A known entry must still describe a difference somewhere.
while IFS= read -r p; do
  [ -z "$p" ] && continue
  if diff <(grep -E -- "$p" "$work/all.libzmq" || true) <(grep -E -- "$p" "$work/all.ferromq" || true) >/dev/null; then
    echo "differential: known.txt entry no longer differs (remove it): $p" >&2
    differ=$((differ+1))
  fi
done <<<"$patterns"
echo "differential: $equal probes equal, $differ differ"
[ "$differ" = 0 ]
