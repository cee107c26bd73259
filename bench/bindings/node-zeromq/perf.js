// Workload C driver, Node.js over zeromq.js v6 (N-API addon built in
// shared-library mode by conformance/node-zeromq.sh; links libzmq.so.5 by
// soname, so LD_LIBRARY_PATH selects the library).
//   node perf.js ROLE ENDPOINT SIZE COUNT      (see bench/bindings/c/perf.c)
"use strict"
const zmq = require("zeromq")

async function main(argv) {
  if (argv.length !== 4) {
    console.error("usage: perf.js ROLE ENDPOINT SIZE COUNT")
    return 2
  }
  const [role, ep] = argv
  const size = parseInt(argv[2], 10), count = parseInt(argv[3], 10)
  if (!(size >= 1 && count >= 2)) {
    console.error("perf(node-zeromq): SIZE >= 1 and COUNT >= 2 required")
    return 2
  }
  console.error(`perf(node-zeromq): zeromq.js, zmq_version ${zmq.version}`)
  const now = () => process.hrtime.bigint()
  let result = null
  if (role === "local_thr") {
    const s = new zmq.Pull()
    await s.bind(ep)
    let t0 = 0n
    for (let i = 0; i < count; i++) {
      const [m] = await s.receive()
      if (m.length !== size) throw new Error("message of wrong size")
      if (i === 0) t0 = now()
    }
    const el = Number(now() - t0) / 1e9
    result = { msg_per_s: (count - 1) / el }
    s.close()
  } else if (role === "remote_thr") {
    const s = new zmq.Push()
    s.connect(ep)
    const data = Buffer.alloc(size, "D")
    for (let i = 0; i < count; i++) await s.send(data)
    s.close()
  } else if (role === "local_lat") {
    const s = new zmq.Reply()
    await s.bind(ep)
    for (let i = 0; i < count; i++) {
      const [m] = await s.receive()
      await s.send(m)
    }
    s.close()
  } else if (role === "remote_lat") {
    const s = new zmq.Request()
    s.connect(ep)
    const data = Buffer.alloc(size, "D")
    const t0 = now()
    for (let i = 0; i < count; i++) {
      await s.send(data)
      const [m] = await s.receive()
      if (m.length !== size) throw new Error("reply of wrong size")
    }
    const el = Number(now() - t0) / 1e9
    result = { latency_us: el * 1e6 / (2 * count) }
    s.close()
  } else {
    console.error(`perf(node-zeromq): unknown role '${role}'`)
    return 2
  }
  if (result) console.log("RESULT " + JSON.stringify(result))
  return 0
}

main(process.argv.slice(2)).then(
  (rc) => { process.exitCode = rc },
  (e) => { console.error("perf(node-zeromq):", e); process.exitCode = 1 })
