'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const zmq = require('..')
const { bound, within, sleep } = require('./helpers')

test('receiveInto takes each frame into the caller\'s buffer, as zmq_recv', async () => {
  const pull = new zmq.Pull()
  const push = new zmq.Push()
  try {
    push.connect(await bound(pull, 'tcp'))
    const big = Buffer.alloc(70000)
    for (let i = 0; i < big.length; i++) big[i] = i % 251
    await push.send(['head', Buffer.alloc(0), big])
    await push.send('after')
    const buf = Buffer.alloc(80000, 0xee)
    let n = await within(pull.receiveInto(buf), 5000, 'receiveInto')
    assert.equal(n, 4)
    assert.equal(buf.subarray(0, 4).toString(), 'head')
    assert.equal(pull.receiveMore, true)
    assert.equal(await pull.receiveInto(buf), 0)
    assert.equal(pull.receiveMore, true)
    n = await pull.receiveInto(buf)
    assert.equal(n, 70000)
    assert.ok(buf.subarray(0, n).equals(big))
    assert.equal(buf[70000], 0xee, 'nothing written past the frame')
    assert.equal(pull.receiveMore, false)
    // a buffer shorter than the frame: the size is reported, the rest dropped
    const small = Buffer.alloc(3)
    assert.equal(await within(pull.receiveInto(small), 5000, 'truncated'), 5)
    assert.equal(small.toString(), 'aft')
    assert.equal(pull.receiveMore, false)
  } finally { push.close(); pull.close() }
})

test('receiveInto waits for a frame that is not there yet, into any ArrayBufferView', async () => {
  const pull = new zmq.Pull()
  const push = new zmq.Push()
  try {
    push.connect(await bound(pull, 'ipc'))
    pull.receiveSpin = 0
    const view = new Uint8Array(new ArrayBuffer(64), 8, 16)
    const p = pull.receiveInto(view)
    await sleep(50)                 // the receive is now waiting on the event loop
    await push.send(['abc', 'defg'])
    assert.equal(await within(p, 5000, 'waiting receiveInto'), 3)
    assert.equal(Buffer.from(view.buffer, 8, 3).toString(), 'abc')
    assert.equal(new Uint8Array(view.buffer)[7], 0, 'nothing written before the view')
    assert.equal(pull.receiveMore, true)
    const dv = new DataView(new ArrayBuffer(4))
    assert.equal(await pull.receiveInto(dv), 4)
    assert.equal(Buffer.from(dv.buffer).toString(), 'defg')
    assert.equal(pull.receiveMore, false)
  } finally { push.close(); pull.close() }
})

test('receiveInto and receive() share one queue: order holds across both', async () => {
  const pull = new zmq.Pull()
  const push = new zmq.Push()
  try {
    push.connect(await bound(pull, 'inproc'))
    for (let i = 0; i < 50; i++) await push.send(['m' + i, 'x' + i])
    const buf = Buffer.alloc(16)
    let i = 0
    // receive() takes all 50 in one native call and queues 49 in JS; receiveInto must
    // take from there first
    const first = await within(pull.receive(), 5000, 'receive')
    assert.equal(first[0].toString(), 'm0')
    assert.ok(pull._rq.length - pull._rqHead > 1, 'the rest is queued in JS')
    for (i = 1; i < 50; i++) {
      if (i % 2) {
        const n = await within(pull.receiveInto(buf), 5000, 'receiveInto')
        assert.equal(buf.subarray(0, n).toString(), 'm' + i)
        assert.equal(pull.receiveMore, true)
        const m = await pull.receiveInto(buf)
        assert.equal(buf.subarray(0, m).toString(), 'x' + i)
        assert.equal(pull.receiveMore, false)
      } else {
        const msg = await within(pull.receive(), 5000, 'receive')
        assert.deepEqual(msg.map(String), ['m' + i, 'x' + i])
      }
    }
  } finally { push.close(); pull.close() }
})

test('receiveInto rejects what is not a view, and fails on a closed socket', async () => {
  const pull = new zmq.Pull()
  await assert.rejects(pull.receiveInto('text'), TypeError)
  await assert.rejects(pull.receiveInto(new ArrayBuffer(4)), TypeError)
  pull.receiveTimeout = 0
  await assert.rejects(pull.receiveInto(Buffer.alloc(4)), (e) => e.code === 'EAGAIN')
  pull.close()
  await assert.rejects(pull.receiveInto(Buffer.alloc(4)), (e) => /closed/i.test(e.message) || e.code === 'ENOTSOCK')
})
