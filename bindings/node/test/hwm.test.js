'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const zmq = require('..')
const { bound, sleep, within } = require('./helpers')

test('immediate + no peer: send with sendTimeout 0 rejects EAGAIN, sendMany queues 0', async () => {
  const push = new zmq.Push({ immediate: true, sendTimeout: 0 })
  try {
    assert.equal(push.immediate, true)
    push.connect('tcp://127.0.0.1:1')           // nothing listens there
    await assert.rejects(push.send('x'), (e) => e instanceof Error && e.code === 'EAGAIN')
    assert.equal(push.sendMany(['a', 'b', 'c']), 0)
  } finally { push.close() }
})

test('sendTimeout > 0 rejects EAGAIN after the timeout', async () => {
  const push = new zmq.Push({ immediate: true, sendTimeout: 50 })
  try {
    push.connect('tcp://127.0.0.1:1')
    const t0 = Date.now()
    await assert.rejects(push.send('x'), (e) => e.code === 'EAGAIN')
    assert.ok(Date.now() - t0 >= 40)
  } finally { push.close() }
})

test('HWM: sendMany stops at the high-water mark; a pending send completes once the reader drains', async () => {
  const pull = new zmq.Pull({ receiveHighWaterMark: 10 })
  const push = new zmq.Push({ sendHighWaterMark: 10 })
  try {
    assert.equal(push.sendHighWaterMark, 10)
    push.connect(await bound(pull, 'inproc'))
    const msgs = Array.from({ length: 1000 }, (_, i) => 'm' + i)
    const n = push.sendMany(msgs)
    assert.ok(n > 0 && n < 1000, `queued ${n} of 1000 with HWM 10`)
    let blocked = true
    const p = push.send('last').then(() => { blocked = false })
    await sleep(50)
    assert.equal(blocked, true, 'send should wait at HWM')
    const got = []
    while (got.length < n + 1) {
      const batch = await within(pull.receiveMany(100), 5000, 'drain')
      for (const [m] of batch) got.push(m.toString())
    }
    await within(p, 5000, 'pending send')
    assert.equal(blocked, false)
    assert.deepEqual(got, [...msgs.slice(0, n), 'last'])
  } finally { push.close(); pull.close() }
})
