'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const zmq = require('..')
const { bound } = require('./helpers')

test('binding an address in use rejects with code EADDRINUSE and the address', async () => {
  const a = new zmq.Pull()
  const b = new zmq.Pull()
  try {
    const ep = await bound(a, 'tcp')
    await assert.rejects(b.bind(ep), (e) => {
      assert.ok(e instanceof Error)
      assert.equal(e.code, 'EADDRINUSE')
      assert.equal(e.address, ep)
      assert.equal(typeof e.errno, 'number')
      return true
    })
  } finally { a.close(); b.close() }
})

test('bad endpoints: unknown transport and malformed address', async () => {
  const s = new zmq.Dealer()
  try {
    await assert.rejects(s.bind('bogus://x'), (e) => e.code === 'EPROTONOSUPPORT')
    assert.throws(() => s.connect('tcp://'), (e) => e.code === 'EINVAL')
    await assert.rejects(s.unbind('tcp://127.0.0.1:1'), (e) => e.code === 'ENOENT')
  } finally { s.close() }
})

test('options round-trip as properties', () => {
  const s = new zmq.Dealer({ linger: 0, sendHighWaterMark: 123, receiveHighWaterMark: 456, routingId: 'rid' })
  try {
    assert.equal(s.linger, 0)
    assert.equal(s.sendHighWaterMark, 123)
    assert.equal(s.receiveHighWaterMark, 456)
    assert.equal(s.routingId, 'rid')
    s.immediate = true
    assert.equal(s.immediate, true)
    s.maxMessageSize = 1 << 20
    assert.equal(s.maxMessageSize, 1 << 20)
    s.reconnectInterval = 250
    assert.equal(s.reconnectInterval, 250)
    assert.equal(s.type, zmq.SocketType.Dealer)
    assert.equal(s.securityMechanism, null)
    assert.throws(() => { s.lastEndpoint = 'x' }, TypeError)
    assert.throws(() => { s.sendHighWaterMark = -5 }, (e) => e.code === 'EINVAL')
  } finally { s.close() }
})

test('context: custom context with options, term closes its sockets', async () => {
  const ctx = new zmq.Context({ ioThreads: 2 })
  assert.equal(ctx.ioThreads, 2)
  const pull = new zmq.Pull({ context: ctx })
  const push = new zmq.Push({ context: ctx })
  assert.equal(pull.context, ctx)
  push.connect(await bound(pull, 'inproc'))
  await push.send('hi')
  assert.equal((await pull.receive())[0].toString(), 'hi')
  ctx.term()
  await assert.rejects(pull.receive(), (e) => e.code === 'EBADF' || e.code === 'ETERM')
  assert.throws(() => new zmq.Pull({ context: ctx }), (e) => e.code === 'ETERM')
})

test('version and capability', () => {
  assert.match(zmq.version, /^4\.\d+\.\d+$/)
  assert.equal(zmq.capability.ipc, true)
})
