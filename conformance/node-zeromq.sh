#!/usr/bin/env bash
# Build the Node.js binding `zeromq` (v6, npm) in shared-library mode (ZMQ_SHARED=ON,
# pkg-config libzmq) against ferromq's dist/ and Debian's libzmq, offline except for the
# npm registry, and run a PUSH/PULL + REQ/REP tcp smoke test on each.
# Offline workarounds (upstream CMakeLists/cmake-ts need github.com + nodejs.org):
#  * node headers come from /usr/include/node (cmake-ts would fetch them from nodejs.org)
#  * aminya/project_options (FetchContent from GitHub, unconditional): local stub via
#    -DFETCHCONTENT_SOURCE_DIR__PROJECT_OPTIONS
#  * the npm tarball ships statically-linked prebuilt addons; the loader picks any
#    compatible one (e.g. glibc-127), so they are deleted and the manifest trimmed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=${W:-$ROOT/build/conformance/node}
VER=${ZEROMQ_VERSION:-6.8.0}
mkdir -p "$W" && cd "$W"
[ -f zeromq-$VER.tgz ] || npm pack zeromq@$VER >/dev/null
mkdir -p project_options_stub
cat > project_options_stub/Index.cmake <<'CM'
set(CMAKE_CXX_STANDARD 20 CACHE STRING "")
set(CMAKE_CXX_STANDARD_REQUIRED ON)
macro(project_options)
  if(NOT TARGET project_options)
    add_library(project_options INTERFACE)
    add_library(project_warnings INTERFACE)
  endif()
endmacro()
function(target_link_system_libraries target vis)
  target_link_libraries(${target} ${vis} ${ARGN})
endfunction()
function(target_include_system_directories target vis)
  foreach(d ${ARGN})
    target_include_directories(${target} SYSTEM ${vis} ${d})
  endforeach()
endfunction()
function(run_vcpkg)
  message(FATAL_ERROR "vcpkg unavailable offline; use ZMQ_SHARED=ON")
endfunction()
function(detect_compiler)
endfunction()
CM
ABI=$(node -p process.versions.modules)
SMOKE=$W/smoke.js
cat > "$SMOKE" <<'JS'
const zmq = require("zeromq")
async function main() {
  for (const p of new Set(require("fs").readFileSync("/proc/self/maps","utf8").split("\n").map(l=>l.split(/\s+/).pop()).filter(p=>/libzmq|addon\.node/.test(p)))) console.log("mapped:", p)
  console.log("zeromq.version (libzmq reported via addon):", zmq.version, "capability:", JSON.stringify(zmq.capability))
  // PUSH/PULL over tcp
  const pull = new zmq.Pull(); await pull.bind("tcp://127.0.0.1:*")
  const push = new zmq.Push(); push.connect(pull.lastEndpoint)
  const N = 1000
  const recvP = (async () => { let n = 0; for await (const [m] of pull) { if (m.toString() !== "msg" + n) throw new Error("order " + m); if (++n === N) break } return n })()
  for (let i = 0; i < N; i++) await push.send("msg" + i)
  console.log("PUSH/PULL received", await recvP, "of", N)
  // multipart
  await push.send(["a", Buffer.alloc(70000, 1), "c"]); const mp = await pull.receive()
  if (mp.length !== 3 || mp[1].length !== 70000) throw new Error("multipart"); console.log("multipart 3 frames ok (70000-byte middle frame)")
  push.close(); pull.close()
  // REQ/REP over tcp
  const rep = new zmq.Reply(); await rep.bind("tcp://127.0.0.1:*")
  const req = new zmq.Request(); req.connect(rep.lastEndpoint)
  const srv = (async () => { for await (const [m] of rep) { await rep.send("echo:" + m); if (m.toString() === "q") break } })()
  for (let i = 0; i < 100; i++) { await req.send("x" + i); const [r] = await req.receive(); if (r.toString() !== "echo:x" + i) throw new Error("rep " + r) }
  await req.send("q"); await req.receive(); await srv
  console.log("REQ/REP 100 round trips ok")
  // socket options round trip
  req.linger = 0; req.sendHighWaterMark = 123
  if (req.sendHighWaterMark !== 123) throw new Error("sndhwm")
  console.log("options ok: linger", req.linger, "sndhwm", req.sendHighWaterMark)
  req.close(); rep.close()
  console.log("SMOKE OK")
}
main().catch(e => { console.error("SMOKE FAIL", e); process.exit(1) })
JS
rc=0
for L in ours debian; do
  case $L in ours) PCP=$ROOT/dist/lib/pkgconfig;; debian) PCP=/usr/lib/x86_64-linux-gnu/pkgconfig;; esac
  A=$W/app-$L; rm -rf "$A"; mkdir -p "$A"
  echo '{"name":"app","version":"1.0.0","private":true}' > "$A/package.json"
  (cd "$A" && npm install "$W/zeromq-$VER.tgz" --ignore-scripts >/dev/null 2>&1)
  Z=$A/node_modules/zeromq
  rm -rf "$W/bld-$L"
  PKG_CONFIG_PATH=$PCP PKG_CONFIG_LIBDIR=$PCP cmake -S "$Z" -B "$W/bld-$L" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DZMQ_SHARED=ON -DZMQ_DRAFT=OFF \
    -DFETCHCONTENT_SOURCE_DIR__PROJECT_OPTIONS="$W/project_options_stub" \
    "-DCMAKE_JS_INC=/usr/include/node;$A/node_modules/node-addon-api" >"$W/cfg-$L.log" 2>&1
  ninja -C "$W/bld-$L" >"$W/ninja-$L.log" 2>&1
  D=linux/x64/node/glibc-$ABI-Release
  find "$Z/build" -name addon.node -delete
  mkdir -p "$Z/build/$D" && cp "$W/bld-$L/addon.node" "$Z/build/$D/addon.node"
  node -e 'const fs=require("fs"),f=process.argv[1],d=process.argv[2],m=JSON.parse(fs.readFileSync(f)),o={};
    for(const[k,v] of Object.entries(m)) if(v===d) o[k]=v; fs.writeFileSync(f,JSON.stringify(o))' "$Z/build/manifest.json" "$D/addon.node"
  echo "== $L: ldd"; ldd "$Z/build/$D/addon.node" | grep zmq
  cp "$SMOKE" "$A/smoke.js"
  if (cd "$A" && timeout 120 node smoke.js); then echo "== $L: PASS"; else echo "== $L: FAIL"; rc=1; fi
done
exit $rc
