'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const zmq = require('..')
const { bound, within } = require('./helpers')

test('ROUTER routes by routing id (DEALER routingId option)', async () => {
  const router = new zmq.Router()
  const d1 = new zmq.Dealer({ routingId: 'd1' })
  const d2 = new zmq.Dealer({ routingId: 'd2' })
  try {
    assert.equal(d1.routingId, 'd1')
    const ep = await bound(router, 'tcp')
    d1.connect(ep)
    d2.connect(ep)
    await d1.send('from1')
    await d2.send(['from2', 'more'])
    const got = new Map()
    for (let i = 0; i < 2; i++) {
      const [id, ...rest] = await within(router.receive(), 5000)
      got.set(id.toString(), rest.map(String))
    }
    assert.deepEqual(got.get('d1'), ['from1'])
    assert.deepEqual(got.get('d2'), ['from2', 'more'])
    await router.send(['d2', 'to2'])
    await router.send(['d1', 'to1'])
    assert.deepEqual((await within(d1.receive(), 5000)).map(String), ['to1'])
    assert.deepEqual((await within(d2.receive(), 5000)).map(String), ['to2'])
  } finally { router.close(); d1.close(); d2.close() }
})

test('ROUTER mandatory: unknown routing id is EHOSTUNREACH', async () => {
  const router = new zmq.Router({ mandatory: true })
  try {
    assert.equal(router.mandatory, true)
    await bound(router, 'inproc')
    await assert.rejects(router.send(['nobody', 'x']), (e) => e.code === 'EHOSTUNREACH')
  } finally { router.close() }
})

test('ROUTER connect with routingId names the peer', async () => {
  const a = new zmq.Router({ routingId: 'A' })
  const b = new zmq.Router({ mandatory: true })
  try {
    const ep = await bound(a, 'tcp')
    b.connect(ep, { routingId: 'peerA' })
    // retry until the connection is up (mandatory makes an unconnected peer an error)
    for (let i = 0; ; i++) {
      try { await b.send(['peerA', 'hello']); break } catch (e) {
        assert.equal(e.code, 'EHOSTUNREACH')
        if (i > 500) throw e
        await new Promise((r) => setTimeout(r, 10))
      }
    }
    const [from, m] = await within(a.receive(), 5000)
    assert.equal(m.toString(), 'hello')
    assert.ok(from.length > 0)
  } finally { a.close(); b.close() }
})
