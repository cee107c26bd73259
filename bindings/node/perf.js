'use strict'
// Workload C driver (libzmq perf tools, in Node):
//   node perf.js ROLE ENDPOINT SIZE COUNT      ROLE: local_thr remote_thr local_lat remote_lat
// local_thr binds PULL, starts the clock at the first message, msg/s = (COUNT-1)/elapsed;
// remote_thr connects PUSH and sends COUNT messages; local_lat binds REP and echoes;
// remote_lat connects REQ and times COUNT round trips, latency = elapsed/(2*COUNT) µs.
// The measuring side prints exactly one line: RESULT {"msg_per_s": x} / {"latency_us": x}.
// FERROMQ_NODE_API=batch (default: on('messages') + sendMany) or await (for-await +
// await send(), one message at a time) selects the API style of the throughput pair.
// FERROMQ_NODE_LAT_API=into (default: receiveInto() into one reused buffer, as C's
// zmq_recv; the reply is sent from it) or message (for-await / receive(), a new Buffer
// per frame) selects the latency pair's receive. At 64 KiB a new Buffer per frame costs
// 7-12 us more per hop (docs/results/2026-11-27-node-receive-into.md).
//
// JIT warm-up, as the Java driver does (bindings/java, Perf.warmJit): before it touches
// ENDPOINT each role runs its own code and its peer's, both in this process, over a
// private tcp loopback pair in a context of its own, FERROMQ_PERF_JIT_WARMUP messages
// (default 20,000; 0 skips it), so that compiled code is measured, as for a C program.
// Nothing of the measured workload happens during it. The latency roles then make
// FERROMQ_PERF_WARMUP (default 100, the same on both sides) untimed round trips on
// ENDPOINT, as the Java driver and zbench do: they absorb the connection set-up and the
// peer finishing its own warm-up. Without it a 20,000-round-trip
// latency run spends its first half in V8's lower tiers: 6.0-7.4 µs one-way against
// 4.9-5.2 µs in the second half (docs/results/2026-11-27-node-jit-warmup.md).
const zmq = require('./index.js')

const [role, endpoint, sizeArg, countArg] = process.argv.slice(2)
const size = Number(sizeArg), count = Number(countArg)
if (!role || !endpoint || !(size >= 0) || !(count >= 1)) {
  console.error('usage: node perf.js local_thr|remote_thr|local_lat|remote_lat ENDPOINT SIZE COUNT')
  process.exit(2)
}
const api = process.env.FERROMQ_NODE_API || 'batch'
const latApi = process.env.FERROMQ_NODE_LAT_API || 'into'
const jitWarmup = (() => {
  const n = Number.parseInt(process.env.FERROMQ_PERF_JIT_WARMUP, 10)
  return Number.isInteger(n) && n >= 0 ? n : 20000
})()
const latWarmup = (() => {
  const n = Number.parseInt(process.env.FERROMQ_PERF_WARMUP, 10)
  return Number.isInteger(n) && n >= 0 ? n : 100
})()
const now = () => process.hrtime.bigint()
const secs = (a, b) => Number(b - a) / 1e9

// Each role takes the socket it runs on (bound or connected by the caller) and a message
// count; `report` is false during the warm-up.

function pullMessages(pull, count, report) {
  return new Promise((resolve) => {
    let n = 0, t0 = 0n, bad = 0, nb = 0
    const done = (t1) => {
      if (report) {
        const el = secs(t0, t1)
        if (bad) { console.error(`perf: ${bad} messages of the wrong size`); process.exitCode = 1 }
        console.error(`perf: ${count} x ${size} B in ${el.toFixed(3)} s (api=${api}, libzmq ${zmq.version})`)
        console.log('RESULT ' + JSON.stringify({ msg_per_s: (count - 1) / el }))
        if (process.env.PERF_DEBUG) console.error(`perf: ${nb} batches, ${(n / nb).toFixed(1)} msgs/batch`)
      }
      pull.close()
      resolve()
    }
    if (api === 'await') {
      (async () => {
        for await (const [m] of pull) {
          if (n === 0) t0 = now()
          if (m.length !== size) bad++
          if (++n === count) { done(now()); break }
        }
      })()
      return
    }
    const onBatch = (batch) => {
      if (n === 0) t0 = now()
      for (let i = 0; i < batch.length; i++) if (batch[i][0].length !== size) bad++
      n += batch.length
      nb++
      if (n >= count) { pull.off('messages', onBatch); done(now()) }
    }
    pull.on('messages', onBatch)
  })
}

async function pushMessages(push, count, report) {
  const msg = Buffer.alloc(size, 0x61)
  if (api === 'await') {
    for (let i = 0; i < count; i++) await push.send(msg)
    return
  }
  const batch = new Array(Math.min(count, 4096)).fill(msg)
  let left = count, calls = 0, waits = 0
  while (left > 0) {
    const n = push.sendMany(batch, 0, Math.min(left, batch.length))
    left -= n
    calls++
    if (left > 0 && n < batch.length) { waits++; await push.writableAsync() }
  }
  if (report && process.env.PERF_DEBUG) console.error(`perf: sendMany ${calls} calls, ${waits} waits, ${(count / calls).toFixed(1)} msgs/call`)
}

async function echo(rep, count) {
  if (latApi === 'into') {
    // One reused buffer, as C's zmq_recv: the reply is sent from it (send() copies it).
    const buf = Buffer.allocUnsafe(Math.max(size, 1))
    for (let n = 0; n < count; n++) {
      const len = await rep.receiveInto(buf)
      await rep.send(len === buf.length ? buf : buf.subarray(0, len))
    }
    return
  }
  let n = 0
  for await (const msg of rep) {
    await rep.send(msg)
    if (++n === count) break
  }
}

// `warm` untimed round trips, then `count` timed ones, in one loop (V8 tiers up a
// long-running async loop only after thousands of turns, so the warm-up must be this loop).
async function roundTrips(req, warm, count, report) {
  const msg = Buffer.alloc(size, 0x61)
  const into = latApi === 'into' ? Buffer.allocUnsafe(Math.max(size, 1)) : null
  let t0 = now()
  for (let i = 0; i < warm + count; i++) {
    if (i === warm) t0 = now()
    await req.send(msg)
    const len = into !== null ? await req.receiveInto(into) : (await req.receive())[0].length
    if (len !== size) throw new Error('bad reply size ' + len)
  }
  if (report) {
    const el = secs(t0, now())
    console.error(`perf: ${count} round trips x ${size} B in ${el.toFixed(3)} s (libzmq ${zmq.version})`)
    console.log('RESULT ' + JSON.stringify({ latency_us: el * 1e6 / (2 * count) }))
  }
}

// Both ends of the role's workload in this process, on a private context and endpoint.
async function warmJit(kind) {
  if (jitWarmup === 0) return
  const context = new zmq.Context()
  const thr = kind === 'thr'
  const server = thr ? new zmq.Pull({ context }) : new zmq.Reply({ context })
  const client = thr ? new zmq.Push({ context }) : new zmq.Request({ context })
  await server.bind('tcp://127.0.0.1:*')
  client.connect(server.lastEndpoint)
  if (thr) {
    await Promise.all([pullMessages(server, jitWarmup, false), pushMessages(client, jitWarmup, false)])
  } else {
    // First in lock-step, one thread: each receive finds its message within its spin (it
    // is on its way over loopback), the measured run's receive path (receive() and the
    // iterator's next() with a spin). Then the measured functions themselves, echo() and
    // roundTrips(), side by side without spinning (their receives wait on the event loop,
    // the path of a run's first receives): a long-running loop is compiled as the
    // function it is in, so warming only what it calls left the measured run's first
    // ~6,000 round trips at twice the steady latency.
    const msg = Buffer.alloc(size, 0x61)
    if (latApi === 'into') {
      const a = Buffer.allocUnsafe(Math.max(size, 1)), b = Buffer.allocUnsafe(Math.max(size, 1))
      for (let i = 0; i < jitWarmup; i++) {
        await client.send(msg)
        const n = await server.receiveInto(a)
        await server.send(n === a.length ? a : a.subarray(0, n))
        const r = await client.receiveInto(b)
        if (r !== size) throw new Error('bad warm-up reply size ' + r)
      }
    } else {
      const it = server[Symbol.asyncIterator]()
      for (let i = 0; i < jitWarmup; i++) {
        await client.send(msg)
        const { value } = await it.next()
        await server.send(value)
        const [r] = await client.receive()
        if (r.length !== size) throw new Error('bad warm-up reply size ' + r.length)
      }
      await it.return()
    }
    server.receiveSpin = 0
    client.receiveSpin = 0
    const loops = Math.ceil(jitWarmup / 8)
    await Promise.all([echo(server, loops), roundTrips(client, 0, loops, false)])
  }
  context.term()
}

async function localThr() {
  await warmJit('thr')
  const pull = new zmq.Pull()
  await pull.bind(endpoint)
  await pullMessages(pull, count, true)
}

async function remoteThr() {
  await warmJit('thr')
  const push = new zmq.Push({ linger: -1 })
  push.connect(endpoint)
  await pushMessages(push, count, true)
  zmq.context.term()   // closes the socket and waits until everything is flushed
}

async function localLat() {
  await warmJit('lat')
  const rep = new zmq.Reply({ linger: -1 })
  await rep.bind(endpoint)
  await echo(rep, latWarmup + count)
  zmq.context.term()
}

async function remoteLat() {
  await warmJit('lat')
  const req = new zmq.Request()
  req.connect(endpoint)
  await roundTrips(req, latWarmup, count, true)
  req.close()
}

const roles = { local_thr: localThr, remote_thr: remoteThr, local_lat: localLat, remote_lat: remoteLat }
if (!roles[role]) { console.error('unknown role ' + role); process.exit(2) }
roles[role]().catch((e) => { console.error('perf:', e); process.exit(1) })
