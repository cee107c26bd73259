'use strict'
// receiveSpin: a receive that finds nothing waits in the library (ferromq) or retries
// (another libzmq) for up to receiveSpin µs before it waits on the event loop.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('path')
const { Worker } = require('node:worker_threads')
const zmq = require('..')
const { bound, within } = require('./helpers')

test('receiveSpin is an option in µs: default 200 (FERROMQ_NODE_SPIN_US; off with FERROMQ_SPIN_US=0)', () => {
  const env = Number.parseInt(process.env.FERROMQ_NODE_SPIN_US, 10)
  const expected = Number.isInteger(env) && env >= 0 ? env
    : process.env.FERROMQ_SPIN_US === '0' ? 0 : 200
  const s = new zmq.Pull()
  const t = new zmq.Pull({ receiveSpin: 0 })
  try {
    assert.equal(s.receiveSpin, expected)
    assert.equal(t.receiveSpin, 0)
    s.receiveSpin = 7
    assert.equal(s.receiveSpin, 7)
    assert.throws(() => { s.receiveSpin = -1 }, TypeError)
    assert.throws(() => { s.receiveSpin = 'x' }, TypeError)
  } finally { s.close(); t.close() }
})

test('SpinPolicy: caught spins keep the budget, failed ones back off, short waits re-probe', () => {
  const p = new zmq._SpinPolicy(50)
  assert.equal(p.budgetNs, 50000)
  p.caught()
  assert.equal(p.budgetNs, 50000)
  p.failed(undefined)                      // a full spin failed: off, skip 1 short wait
  assert.equal(p.budgetNs, 0)
  assert.equal(p.skip, 1)
  p.failed(10000)                          // short wait while skipping: still off
  assert.equal(p.budgetNs, 0)
  p.failed(10000)                          // next short wait: probe again
  assert.equal(p.budgetNs, 50000)
  p.failed(undefined)                      // second failure: skip 3
  assert.equal(p.skip, 3)
  p.failed(1e9)                            // a long wait (idle peer) leaves it off
  assert.equal(p.budgetNs, 0)
  assert.equal(p.skip, 3)
  for (let i = 0; i < 20; i++) { p.budgetNs = p.maxNs; p.failed(undefined) }
  assert.equal(p.skip, 1023)               // capped at one probe per 2^10 waits
  p.caught()
  assert.equal(p.skip, 0)
  const off = new zmq._SpinPolicy(0)
  off.failed(undefined); off.failed(10)
  assert.equal(off.budgetNs, 0)
})

test('REQ/REP with the replier in a worker thread: spinning receives keep order', async () => {
  const req = new zmq.Req({ receiveSpin: 200 })
  const rep = new zmq.Rep()
  const ep = await bound(rep, 'tcp')
  rep.close()                              // the worker binds the same port itself
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads')
    const zmq = require(workerData.lib)
    const rep = new zmq.Rep({ receiveSpin: 200 })
    rep.bind(workerData.ep).then(async () => {
      parentPort.postMessage('bound')
      let n = 0
      for await (const [m] of rep) {
        await rep.send('re:' + m)
        if (++n === workerData.count) break
      }
      rep.close()
    })`, { eval: true, workerData: { lib: path.join(__dirname, '..'), ep, count: 500 } })
  try {
    await within(new Promise((resolve) => worker.once('message', resolve)), 5000, 'worker bind')
    req.connect(ep)
    for (let i = 0; i < 500; i++) {
      await req.send('q' + i)
      const [r] = await within(req.receive(), 5000, 'reply ' + i)
      assert.equal(String(r), 're:q' + i)
    }
  } finally {
    req.close()
    await worker.terminate()
  }
})

test('receiveTimeout still bounds a spinning receive', async () => {
  const pull = new zmq.Pull({ receiveSpin: 20000 })
  try {
    await bound(pull, 'tcp')
    pull.receiveTimeout = 0
    await assert.rejects(pull.receive(), (e) => e.code === 'EAGAIN')
    pull.receiveTimeout = 50
    await assert.rejects(within(pull.receive(), 5000, 'timeout'), (e) => e.code === 'EAGAIN')
    const push = new zmq.Push()
    try {
      push.connect(pull.lastEndpoint)
      pull.receiveTimeout = -1
      await push.send('after')
      const [m] = await within(pull.receive(), 5000, 'message after timeouts')
      assert.equal(String(m), 'after')
    } finally { push.close() }
  } finally { pull.close() }
})
