'use strict'
// Workload C driver (libzmq perf tools, in Node):
//   node perf.js ROLE ENDPOINT SIZE COUNT      ROLE: local_thr remote_thr local_lat remote_lat
// local_thr binds PULL, starts the clock at the first message, msg/s = (COUNT-1)/elapsed;
// remote_thr connects PUSH and sends COUNT messages; local_lat binds REP and echoes;
// remote_lat connects REQ and times COUNT round trips, latency = elapsed/(2*COUNT) µs.
// The measuring side prints exactly one line: RESULT {"msg_per_s": x} / {"latency_us": x}.
// FERROMQ_NODE_API=batch (default: on('messages') + sendMany) or await (for-await +
// await send(), one message at a time) selects the API style of the throughput pair.
const zmq = require('./index.js')

const [role, endpoint, sizeArg, countArg] = process.argv.slice(2)
const size = Number(sizeArg), count = Number(countArg)
if (!role || !endpoint || !(size >= 0) || !(count >= 1)) {
  console.error('usage: node perf.js local_thr|remote_thr|local_lat|remote_lat ENDPOINT SIZE COUNT')
  process.exit(2)
}
const api = process.env.FERROMQ_NODE_API || 'batch'
const now = () => process.hrtime.bigint()
const secs = (a, b) => Number(b - a) / 1e9

async function localThr() {
  const pull = new zmq.Pull()
  await pull.bind(endpoint)
  let n = 0, t0 = 0n, bad = 0, nb = 0
  const done = (t1) => {
    const el = secs(t0, t1)
    if (bad) { console.error(`perf: ${bad} messages of the wrong size`); process.exitCode = 1 }
    console.error(`perf: ${count} x ${size} B in ${el.toFixed(3)} s (api=${api}, libzmq ${zmq.version})`)
    console.log('RESULT ' + JSON.stringify({ msg_per_s: (count - 1) / el }))
    pull.close()
  }
  if (api === 'await') {
    for await (const [m] of pull) {
      if (n === 0) t0 = now()
      if (m.length !== size) bad++
      if (++n === count) { done(now()); break }
    }
    return
  }
  pull.on('messages', (batch) => {
    if (n === 0) t0 = now()
    for (let i = 0; i < batch.length; i++) if (batch[i][0].length !== size) bad++
    n += batch.length
    nb++
    if (n >= count) { done(now()); if (process.env.PERF_DEBUG) console.error(`perf: ${nb} batches, ${(n / nb).toFixed(1)} msgs/batch`) }
  })
}

async function remoteThr() {
  const push = new zmq.Push({ linger: -1 })
  push.connect(endpoint)
  const msg = Buffer.alloc(size, 0x61)
  if (api === 'await') {
    for (let i = 0; i < count; i++) await push.send(msg)
  } else {
    const batch = new Array(Math.min(count, 4096)).fill(msg)
    let left = count, calls = 0, waits = 0
    while (left > 0) {
      const n = push.sendMany(batch, 0, Math.min(left, batch.length))
      left -= n
      calls++
      if (left > 0 && n < batch.length) { waits++; await push.writableAsync() }
    }
    if (process.env.PERF_DEBUG) console.error(`perf: sendMany ${calls} calls, ${waits} waits, ${(count / calls).toFixed(1)} msgs/call`)
  }
  zmq.context.term()   // closes the socket and waits until everything is flushed
}

async function localLat() {
  const rep = new zmq.Reply({ linger: -1 })
  await rep.bind(endpoint)
  let n = 0
  for await (const msg of rep) {
    await rep.send(msg)
    if (++n === count) break
  }
  zmq.context.term()
}

async function remoteLat() {
  const req = new zmq.Request()
  req.connect(endpoint)
  const msg = Buffer.alloc(size, 0x61)
  const t0 = now()
  for (let i = 0; i < count; i++) {
    await req.send(msg)
    const [r] = await req.receive()
    if (r.length !== size) throw new Error('bad reply size ' + r.length)
  }
  const el = secs(t0, now())
  console.error(`perf: ${count} round trips x ${size} B in ${el.toFixed(3)} s (libzmq ${zmq.version})`)
  console.log('RESULT ' + JSON.stringify({ latency_us: el * 1e6 / (2 * count) }))
  req.close()
}

const roles = { local_thr: localThr, remote_thr: remoteThr, local_lat: localLat, remote_lat: remoteLat }
if (!roles[role]) { console.error('unknown role ' + role); process.exit(2) }
roles[role]().catch((e) => { console.error('perf:', e); process.exit(1) })
