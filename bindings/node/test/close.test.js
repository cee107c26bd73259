'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const zmq = require('..')
const { bound, sleep, within } = require('./helpers')

test('close rejects a pending receive with EBADF and ends for-await', async () => {
  const pull = new zmq.Pull()
  await bound(pull, 'tcp')
  const pending = pull.receive()
  const iter = (async () => { let n = 0; for await (const _ of pull) n++; return n })()
  await sleep(20)
  pull.close()
  await assert.rejects(pending, (e) => e.code === 'EBADF')
  assert.equal(await within(iter, 2000, 'iterator end'), 0)
  assert.equal(pull.closed, true)
})

test('operations after close fail with EBADF; close twice is fine', async () => {
  const s = new zmq.Dealer()
  s.close()
  s.close()
  assert.throws(() => s.connect('tcp://127.0.0.1:5555'), (e) => e.code === 'EBADF')
  await assert.rejects(s.bind('tcp://127.0.0.1:*'), (e) => e.code === 'EBADF')
  await assert.rejects(s.send('x'), (e) => e.code === 'EBADF')
  await assert.rejects(s.receive(), (e) => e.code === 'EBADF')
  assert.throws(() => s.linger, (e) => e.code === 'EBADF')
})

test('close rejects a pending send; linger delivers queued messages after close', async () => {
  const push = new zmq.Push({ immediate: true })
  push.connect('tcp://127.0.0.1:1')
  const p = push.send('stuck')
  await sleep(20)
  push.close()
  await assert.rejects(p, (e) => e.code === 'EBADF')

  const pull = new zmq.Pull()
  const ep = await bound(pull, 'tcp')
  const push2 = new zmq.Push({ linger: 2000 })
  assert.equal(push2.linger, 2000)
  push2.connect(ep)
  for (let i = 0; i < 100; i++) await push2.send('q' + i)
  push2.close()
  const got = []
  while (got.length < 100) for (const [m] of await within(pull.receiveMany(), 5000)) got.push(m.toString())
  assert.equal(got[99], 'q99')
  pull.close()
})

test('receiveTimeout rejects with EAGAIN', async () => {
  const pull = new zmq.Pull({ receiveTimeout: 30 })
  try {
    await bound(pull, 'inproc')
    assert.equal(pull.receiveTimeout, 30)
    await assert.rejects(pull.receive(), (e) => e.code === 'EAGAIN')
  } finally { pull.close() }
})

test('an idle socket does not keep the process alive; a waiting one is serviced', async () => {
  // (the test runner would hang on a leaked ref'd handle; here: an idle socket left open)
  const idle = new zmq.Pull()
  await bound(idle, 'tcp')
  const sub = new zmq.Pull()
  const push = new zmq.Push()
  push.connect(await bound(sub, 'ipc'))
  setTimeout(() => push.send('late'), 30)
  const [m] = await within(sub.receive(), 5000, 'late message')
  assert.equal(m.toString(), 'late')
  sub.close(); push.close(); idle.close()
})
