'use strict'
// The workload-C roles written against zeromq.js v6 (npm `zeromq`), for comparison with
// perf.js. Same arguments and RESULT line. ZEROMQ_JS = path of the zeromq package.
const zmq = require(process.env.ZEROMQ_JS || 'zeromq')
const [role, endpoint, sizeArg, countArg] = process.argv.slice(2)
const size = Number(sizeArg), count = Number(countArg)
const now = () => process.hrtime.bigint()
const secs = (a, b) => Number(b - a) / 1e9

const roles = {
  async local_thr() {
    const pull = new zmq.Pull()
    await pull.bind(endpoint)
    let n = 0, t0 = 0n
    for await (const [m] of pull) {
      if (n === 0) t0 = now()
      if (m.length !== size) throw new Error('size')
      if (++n === count) break
    }
    console.log('RESULT ' + JSON.stringify({ msg_per_s: (count - 1) / secs(t0, now()) }))
    pull.close()
  },
  async remote_thr() {
    const push = new zmq.Push({ linger: -1 })
    push.connect(endpoint)
    const msg = Buffer.alloc(size, 0x61)
    for (let i = 0; i < count; i++) await push.send(msg)
    push.close()
  },
  async local_lat() {
    const rep = new zmq.Reply()
    await rep.bind(endpoint)
    let n = 0
    for await (const m of rep) { await rep.send(m); if (++n === count) break }
    await new Promise((r) => setTimeout(r, 100))
    rep.close()
  },
  async remote_lat() {
    const req = new zmq.Request()
    req.connect(endpoint)
    const msg = Buffer.alloc(size, 0x61)
    const t0 = now()
    for (let i = 0; i < count; i++) { await req.send(msg); await req.receive() }
    console.log('RESULT ' + JSON.stringify({ latency_us: secs(t0, now()) * 1e6 / (2 * count) }))
    req.close()
  },
}
roles[role]().catch((e) => { console.error(e); process.exit(1) })
