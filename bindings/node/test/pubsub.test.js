'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const zmq = require('..')
const { bound, sleep, within } = require('./helpers')

test('PUB/SUB prefix filtering, subscribe/unsubscribe', async () => {
  const pub = new zmq.Pub()
  const sub = new zmq.Sub()
  try {
    sub.connect(await bound(pub, 'tcp'))
    sub.subscribe('weather', 'news')
    // wait until the subscription reached the publisher
    let ok = false
    sub.receiveTimeout = 20
    for (let i = 0; i < 200 && !ok; i++) {
      await pub.send(['weather.probe', 'x'])
      const r = await sub.receiveMany(10).catch((e) => { assert.equal(e.code, 'EAGAIN'); return [] })
      ok = r.length > 0
    }
    assert.ok(ok, 'subscription never took effect')
    await sleep(20)
    while (sub.readable) await sub.receive()   // drop extra probes
    sub.receiveTimeout = -1
    await pub.send(['sports', 'no'])
    await pub.send(['news.local', 'yes1'])
    await pub.send(['weatherman', 'yes2'])
    await pub.send(['xnews', 'no'])
    // A probe sent just before the loop saw one can still arrive after the drain.
    const nextNotProbe = async () => {
      for (;;) {
        const m = await within(sub.receive(), 5000)
        if (String(m[0]) !== 'weather.probe') return m
      }
    }
    const a = await nextNotProbe()
    const b = await nextNotProbe()
    assert.deepEqual(a.map(String), ['news.local', 'yes1'])
    assert.deepEqual(b.map(String), ['weatherman', 'yes2'])
    sub.unsubscribe('news')
    await sleep(100)
    await pub.send(['news.late', 'no'])
    await pub.send(['weather.late', 'yes3'])
    const c = await within(sub.receive(), 5000)
    assert.deepEqual(c.map(String), ['weather.late', 'yes3'])
  } finally { pub.close(); sub.close() }
})

test('XPUB sees subscriptions from SUB as messages', async () => {
  const xpub = new zmq.XPub()
  const sub = new zmq.Sub()
  try {
    sub.connect(await bound(xpub, 'tcp'))
    sub.subscribe('topic-A')
    const [m] = await within(xpub.receive(), 5000, 'subscription message')
    assert.equal(m[0], 1)
    assert.equal(m.subarray(1).toString(), 'topic-A')
  } finally { xpub.close(); sub.close() }
})

test('XSUB sends subscriptions to XPUB by message', async () => {
  const xpub = new zmq.XPub()
  const xsub = new zmq.XSub()
  try {
    xsub.connect(await bound(xpub, 'ipc'))
    await xsub.send(Buffer.from('\x01abc'))
    const [m] = await within(xpub.receive(), 5000)
    assert.equal(m.toString(), '\x01abc')
    await xpub.send('abc-data')
    await xpub.send('zzz-data')
    const [d] = await within(xsub.receive(), 5000)
    assert.equal(d.toString(), 'abc-data')
  } finally { xpub.close(); xsub.close() }
})
