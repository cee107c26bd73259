'use strict'
// Per-round-trip histogram of a REQ/REP pair (issue 7's latency tail):
//   SERVER=1 node lathist.js ENDPOINT SIZE COUNT   (REP, binds)
//   node lathist.js ENDPOINT SIZE COUNT            (REQ, connects; prints the histogram)
// Each side also counts receives that started without a spin budget ("unspun").
const zmq = require('../index.js')
const [endpoint, sizeArg, countArg] = process.argv.slice(2)
const size = Number(sizeArg), count = Number(countArg)
let unspun = 0
async function server() {
  const rep = new zmq.Reply({ linger: -1 })
  await rep.bind(endpoint)
  let n = 0, unsp = 0
  while (n < count) {
    if (rep._spin.budgetNs === 0) unsp++
    const m = await rep.receive()
    await rep.send(m)
    n++
  }
  console.error('server unspun', unsp)
  zmq.context.term()
}
async function main() {
  const req = new zmq.Request()
  req.connect(endpoint)
  const msg = Buffer.alloc(size, 0x61)
  const t = new Float64Array(count)
  let prev = process.hrtime.bigint()
  const t0 = prev
  for (let i = 0; i < count; i++) {
    await req.send(msg)
    if (req._spin.budgetNs === 0) unspun++
    await req.receive()
    const now = process.hrtime.bigint()
    t[i] = Number(now - prev) / 1000
    prev = now
  }
  const total = Number(prev - t0) / 1000
  const s = Array.from(t).sort((a, b) => a - b)
  const p = (q) => s[Math.floor(q * (count - 1))].toFixed(1)
  let slow = 0, slowN = 0
  console.log('unspun', unspun)
  for (const x of t) if (x > 30) { slow += x; slowN++ }
  if (process.env.BUCKETS) { const b = [15, 20, 30, 50, 100, 200, 500, 1e9]; const c = b.map(() => 0); for (const x of t) c[b.findIndex((v) => x <= v)]++; console.log('buckets<=', b.map((v, i) => `${v}:${c[i]}`).join(' ')) }
  if (process.env.SERIES) { const k = Number(process.env.SERIES); const out = []; for (let i = 0; i + k <= count; i += k) { let a = 0; for (let j = i; j < i + k; j++) a += t[j]; out.push((a / k / 2).toFixed(2)) } console.log('series', out.join(' ')) }
  if (process.env.HALVES) { const h = count >> 1; let a = 0, b = 0; for (let i = 0; i < h; i++) a += t[i]; for (let i = h; i < count; i++) b += t[i]; console.log(`first half ${(a / h / 2).toFixed(2)} second half ${(b / (count - h) / 2).toFixed(2)} us one-way`) }
  console.log(`mean_oneway ${(total / count / 2).toFixed(2)} p50 ${p(0.5)} p90 ${p(0.9)} p99 ${p(0.99)} p999 ${p(0.999)} max ${s[count-1].toFixed(0)} >30us: n=${slowN} share=${(100*slow/total).toFixed(1)}%`)
  req.close()
}
if (process.env.SERVER) server(); else main()
