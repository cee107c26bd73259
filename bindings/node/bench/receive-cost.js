'use strict'
// Receiver-only cost of on('messages'): N messages are queued on an inproc PULL first
// (HWM 0, sent with sendMany), then drained and timed; no sender or I/O thread runs while
// the clock does. Prints ns per message for each of ROUNDS rounds after a warm-up round.
//   node bench/receive-cost.js [N=1000000] [SIZE=64] [ROUNDS=8]
// The package directory is FERROMQ_NODE_DIR (default: this package), so that two builds
// can be compared on the same library.
const path = require('path')
const zmq = require(process.env.FERROMQ_NODE_DIR || path.join(__dirname, '..'))
const N = Number(process.argv[2] || 1000000)
const size = Number(process.argv[3] || 64)
const rounds = Number(process.argv[4] || 8)

async function round(i) {
  const pull = new zmq.Pull({ receiveHighWaterMark: 0 })
  const push = new zmq.Push({ sendHighWaterMark: 0 })
  await pull.bind('inproc://receive-cost-' + i)
  push.connect('inproc://receive-cost-' + i)
  const batch = new Array(4096).fill(Buffer.alloc(size, 1))
  for (let left = N; left > 0;) left -= push.sendMany(batch, 0, Math.min(left, batch.length))
  const t0 = process.hrtime.bigint()
  let n = 0, bad = 0
  await new Promise((resolve) => pull.on('messages', (b) => {
    for (let k = 0; k < b.length; k++) if (b[k][0].length !== size) bad++
    n += b.length
    if (n >= N) resolve()
  }))
  const ns = Number(process.hrtime.bigint() - t0) / N
  push.close()
  pull.close()
  if (bad) throw new Error(bad + ' messages of the wrong size')
  return ns
}

async function main() {
  await round(0)
  const all = []
  for (let i = 1; i <= rounds; i++) all.push(await round(i))
  all.sort((a, b) => a - b)
  console.log(`receive-cost: ${N} x ${size} B, ns/msg sorted: ${all.map((v) => v.toFixed(1)).join(' ')}` +
    ` (median ${all[all.length >> 1].toFixed(1)}, libzmq ${zmq.version})`)
}
main().catch((e) => { console.error(e); process.exit(1) })
