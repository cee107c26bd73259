'use strict'
const os = require('os')
const path = require('path')
let seq = 0
// A fresh endpoint per call: tcp uses an ephemeral port (read back via lastEndpoint).
function endpoint(transport) {
  seq++
  switch (transport) {
    case 'tcp': return 'tcp://127.0.0.1:*'
    case 'ipc': return 'ipc://' + path.join(os.tmpdir(), `ferromq-node-${process.pid}-${seq}.sock`)
    case 'inproc': return `inproc://ferromq-node-${process.pid}-${seq}`
  }
  throw new Error('transport ' + transport)
}
async function bound(sock, transport) {
  await sock.bind(endpoint(transport))
  return sock.lastEndpoint
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
// Rejects if `p` does not settle within ms (so a broken wake-up fails instead of hanging).
function within(p, ms, what) {
  let t
  return Promise.race([p, new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`${what || 'operation'} did not complete within ${ms} ms`)), ms) })])
    .finally(() => clearTimeout(t))
}
module.exports = { endpoint, bound, sleep, within }
